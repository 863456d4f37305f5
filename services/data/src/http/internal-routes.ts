/**
 * The internal API the auth service calls (never routed by the edge or the
 * Ingress; Bearer SERVICE_TOKEN). Its shapes are a contract with consumer-driven
 * contract tests: see shared/contracts/internal-api.ts.
 */
import Router from "@koa/router";
import type { Context, Next } from "koa";
import type { AuthenticateBody, ProjectSettings } from "../../../../shared/contracts/internal-api.ts";
import { authenticateBodySchema, verdictOnTheWire } from "../../../../shared/contracts/internal-api.ts";
import { errors } from "../../../../shared/errors.ts";
import { hasBearerToken } from "../../../../shared/http/bearer.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import { isValidName } from "../../../../shared/names.ts";
import { DEFAULT_KEY_LIFETIME_SECONDS } from "../domain/definition/project-definition.ts";
import type { ProjectModel } from "../domain/model/project-model.ts";
import type { ProviderRegistry } from "../providers/provider-registry.ts";
import type { ProjectCache } from "../store/project-cache.ts";
import { addInternalAdminRoutes, type InternalAdminDeps } from "./internal-admin-routes.ts";

export interface InternalDeps extends InternalAdminDeps {
  serviceTokens: string[];
  projects: ProjectCache<ProjectModel>;
  providers: ProviderRegistry;
  maxBodyBytes: number;
}

export function settingsOf(project: ProjectModel): ProjectSettings {
  const auth = project.definition.authentication;
  return {
    account: project.account,
    name: project.name,
    uid: project.uid,
    revision: project.revision,
    versions: [...project.versions.keys()],
    roles: [...project.roles.keys()],
    provider: auth.provider,
    keyLifetimeSeconds: auth.keyLifetimeSeconds ?? DEFAULT_KEY_LIFETIME_SECONDS,
    ...(auth.provider === "builtin"
      ? { identityFields: ["username"] }
      : auth.identityFields
        ? { identityFields: auth.identityFields }
        : {}),
  };
}

export function internalRouter(deps: InternalDeps): Router {
  const router = new Router({ prefix: "/internal/v1" });
  router.use(async (ctx: Context, next: Next) => {
    if (!hasBearerToken(ctx, deps.serviceTokens))
      throw errors.noKey("The internal API needs the service credential");
    await next();
  });

  const project = async (ctx: Context) => {
    const { account, project: name } = ctx.params as { account: string; project: string };
    if (!isValidName(account) || !isValidName(name)) throw errors.notFound("No such project");
    const model = await deps.projects.get(account, name);
    if (!model) throw errors.notFound(`No project '${name}' in account '${account}'`);
    return model;
  };

  router.get("/accounts/:account/projects/:project/settings", async (ctx) => {
    ctx.body = settingsOf(await project(ctx));
  });
  router.get("/accounts/:account/projects/:project/login-info", async (ctx) => {
    ctx.body = await deps.providers.providerFor(await project(ctx)).getLoginInfo();
  });
  router.post("/accounts/:account/projects/:project/authenticate", async (ctx) => {
    const model = await project(ctx);
    const parsed = authenticateBodySchema.safeParse(await readJsonBody(ctx, deps.maxBodyBytes));
    if (!parsed.success) throw errors.malformed("Invalid authenticate request");
    const body: AuthenticateBody = parsed.data;
    if (body.version !== undefined && !model.versions.has(body.version)) {
      throw errors.notFound(`No API version '${body.version}' in project '${model.name}'`);
    }
    const verdict = await deps.providers.providerFor(model).authenticate({
      payload: body.payload,
      enablePasswordChange: body.enablePasswordChange,
    });
    ctx.body = { project: settingsOf(model), verdict: verdictOnTheWire(verdict) };
  });
  addInternalAdminRoutes(router, deps);
  return router;
}
