/**
 * Admin API (DESIGN.md §5) owned by the data service: accounts, project
 * definitions, built-in users. Bearer ADMIN_TOKEN. (API keys: auth service.)
 */
import Router from "@koa/router";
import type { Context, Next } from "koa";
import { z } from "zod";
import { errors } from "../../../../shared/errors.ts";
import { hasBearerToken } from "../../../../shared/http/bearer.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../shared/http/parse-body.ts";
import { isValidName } from "../../../../shared/names.ts";
import type { PasswordHasher } from "../auth/passwords.ts";
import { parseProjectDefinition } from "../domain/project-definition.ts";
import type { FilterChecker, ProjectModel } from "../domain/project-model.ts";
import { compileProject } from "../domain/project-model.ts";
import type { MetaStore } from "../store/meta-store.ts";
import type { ProjectCache } from "../store/project-cache.ts";
import type { TenantStore } from "../store/tenant-store.ts";

export interface AdminDeps {
  adminTokens: string[];
  meta: MetaStore;
  tenants: TenantStore;
  projects: ProjectCache;
  hasher: PasswordHasher;
  checkFilter: FilterChecker;
  maxBodyBytes: number;
  /** Runs once a definition compiled (e.g. the logic engine's own checks); returns problems. */
  checkModel?: (model: ProjectModel) => { path: string; message: string }[];
}

const USERNAME = /^[A-Za-z0-9_.@+-]{1,128}$/;

const accountBody = z.strictObject({ displayName: z.string().max(200).optional() });
const userBody = z.strictObject({
  password: z.string().min(1).max(1024),
  roles: z.array(z.string().min(1).max(100)).max(100),
  globals: z.record(z.string().max(200), z.unknown()).optional(),
  keyLifetimeSeconds: z
    .number()
    .int()
    .positive()
    .max(366 * 24 * 3600)
    .optional(),
});

function name(ctx: Context, param: string): string {
  const value = ctx.params[param] ?? "";
  if (!isValidName(value))
    throw errors.malformed(`'${value}' is not a valid name: [A-Za-z][A-Za-z0-9_-]{0,62}`);
  return value;
}

export function adminRouter(deps: AdminDeps): Router {
  const router = new Router({ prefix: "/admin/v1" });
  router.use(async (ctx: Context, next: Next) => {
    if (!hasBearerToken(ctx, deps.adminTokens)) {
      throw errors.noKey("The admin API needs 'Authorization: Bearer <admin token>'");
    }
    await next();
  });

  const requireAccount = async (account: string) => {
    const doc = await deps.meta.getAccount(account);
    if (!doc) throw errors.notFound(`No account '${account}'`);
    return doc;
  };
  const requireProject = async (account: string, project: string) => {
    const stored = await deps.meta.getProject(account, project);
    if (!stored) throw errors.notFound(`No project '${project}' in account '${account}'`);
    return stored;
  };

  router.get("/accounts/:account", async (ctx) => {
    const account = name(ctx, "account");
    const doc = await requireAccount(account);
    const projects = await deps.meta.listProjects(account);
    ctx.body = { name: account, displayName: doc.displayName ?? null, projects: projects.map((p) => p.name) };
  });
  router.put("/accounts/:account", async (ctx) => {
    const account = name(ctx, "account");
    const body = parseBody(accountBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const created = await deps.meta.putAccount(account, body.displayName);
    ctx.status = created ? 201 : 200;
    ctx.body = { name: account, displayName: body.displayName ?? null };
  });
  router.delete("/accounts/:account", async (ctx) => {
    const account = name(ctx, "account");
    await requireAccount(account);
    const projects = await deps.meta.listProjects(account);
    await deps.meta.deleteAccount(account);
    await deps.tenants.dropAccount(account);
    for (const p of projects) await deps.projects.changed(account, p.name);
    ctx.body = { name: account, deleted: true };
  });

  router.get("/accounts/:account/projects/:project", async (ctx) => {
    const account = name(ctx, "account");
    const stored = await requireProject(account, name(ctx, "project"));
    ctx.body = { name: stored.name, revision: stored.revision, definition: stored.definition };
  });
  router.put("/accounts/:account/projects/:project", async (ctx) => {
    const account = name(ctx, "account");
    const project = name(ctx, "project");
    const input = await readJsonBody(ctx, deps.maxBodyBytes);
    await requireAccount(account);
    const parsed = parseProjectDefinition(input);
    if (!parsed.ok) throw invalidDefinition(parsed.problems);
    const compiled = compileProject(
      { account, name: project, uid: "", revision: 0 },
      parsed.definition,
      deps.checkFilter,
    );
    if (!compiled.ok) throw invalidDefinition(compiled.problems);
    const more = deps.checkModel?.(compiled.model) ?? [];
    if (more.length > 0) throw invalidDefinition(more);
    const { created, stored } = await deps.meta.putProject(account, project, parsed.definition);
    await deps.projects.changed(account, project);
    ctx.status = created ? 201 : 200;
    ctx.body = { name: project, revision: stored.revision };
  });
  router.delete("/accounts/:account/projects/:project", async (ctx) => {
    const account = name(ctx, "account");
    const project = name(ctx, "project");
    await requireProject(account, project);
    await deps.meta.deleteProject(account, project);
    await deps.tenants.dropProject(account, project);
    await deps.projects.changed(account, project);
    ctx.body = { name: project, deleted: true };
  });

  const userView = (u: {
    username: string;
    roles: string[];
    globals: Record<string, unknown>;
    keyLifetimeSeconds?: number;
  }) => ({
    username: u.username,
    roles: u.roles,
    globals: u.globals,
    keyLifetimeSeconds: u.keyLifetimeSeconds ?? null,
  });
  const username = (ctx: Context) => {
    const value = ctx.params.username ?? "";
    if (!USERNAME.test(value))
      throw errors.malformed("A username is 1 to 128 characters of A-Z a-z 0-9 _ . @ + -");
    return value;
  };

  router.get("/accounts/:account/projects/:project/users", async (ctx) => {
    const account = name(ctx, "account");
    const project = name(ctx, "project");
    await requireProject(account, project);
    ctx.body = (await deps.meta.listUsers(account, project)).map(userView);
  });
  router.get("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const account = name(ctx, "account");
    const project = name(ctx, "project");
    const user = await deps.meta.getUser(account, project, username(ctx));
    if (!user) throw errors.notFound("No such user");
    ctx.body = userView(user);
  });
  router.put("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const account = name(ctx, "account");
    const project = name(ctx, "project");
    const user = username(ctx);
    const body = parseBody(userBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const stored = await requireProject(account, project);
    const definition = stored.definition as { roles?: Record<string, unknown> };
    const unknown = body.roles.filter((r) => !Object.hasOwn(definition.roles ?? {}, r));
    if (unknown.length > 0) throw errors.malformed(`Unknown role(s) for this project: ${unknown.join(", ")}`);
    const policy = deps.hasher.policyProblem(body.password);
    if (policy) throw errors.malformed(`Password rejected: ${policy}`);
    const created = await deps.meta.putUser(account, project, {
      username: user,
      passwordHash: await deps.hasher.hash(body.password),
      roles: body.roles,
      globals: body.globals ?? {},
      keyLifetimeSeconds: body.keyLifetimeSeconds,
    });
    ctx.status = created ? 201 : 200;
    ctx.body = userView({
      username: user,
      roles: body.roles,
      globals: body.globals ?? {},
      keyLifetimeSeconds: body.keyLifetimeSeconds,
    });
  });
  router.delete("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const account = name(ctx, "account");
    const project = name(ctx, "project");
    if (!(await deps.meta.deleteUser(account, project, username(ctx)))) throw errors.notFound("No such user");
    ctx.body = { username: ctx.params.username, deleted: true };
  });

  return router;
}

function invalidDefinition(problems: { path: string; message: string }[]) {
  return errors.malformed(
    `The project definition has ${problems.length} problem(s): ${problems.map((p) => `${p.path}: ${p.message}`).join("; ")}`,
    { problems },
  );
}
