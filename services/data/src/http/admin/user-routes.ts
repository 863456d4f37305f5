/** A project's built-in users (the built-in provider's accounts). Passwords are never answered. */
import type Router from "@koa/router";
import { z } from "zod";
import { noteAudit } from "../../../../../shared/admin-access/audit.ts";
import { errors } from "../../../../../shared/errors.ts";
import { readJsonBody } from "../../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../../shared/http/parse-body.ts";
import { keyLifetimeSecondsSchema } from "../../domain/project-definition.ts";
import type { StoredUser } from "../../store/meta-store.ts";
import { type AdminRouteDeps, requireAccount, requireProject } from "./deps.ts";
import { loginParam, nameParam } from "./params.ts";

const userBody = z.strictObject({
  password: z.string().min(1).max(1024),
  roles: z.array(z.string().min(1).max(100)).max(100),
  globals: z.record(z.string().max(200), z.unknown()).optional(),
  keyLifetimeSeconds: keyLifetimeSecondsSchema.optional(),
});

const userView = (u: Omit<StoredUser, "passwordHash">) => ({
  username: u.username,
  roles: u.roles,
  globals: u.globals,
  keyLifetimeSeconds: u.keyLifetimeSeconds ?? null,
});

export function addUserRoutes(router: Router, deps: AdminRouteDeps): void {
  router.get("/accounts/:account/projects/:project/users", async (ctx) => {
    const account = nameParam(ctx, "account");
    const project = nameParam(ctx, "project");
    await requireProject(deps, account, project, ctx);
    ctx.body = (await deps.meta.listUsers(account, project)).map(userView);
  });
  router.get("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const account = nameParam(ctx, "account");
    const project = nameParam(ctx, "project");
    await requireAccount(deps, account, ctx);
    const user = await deps.meta.getUser(account, project, loginParam(ctx, "username"));
    if (!user) throw errors.notFound("No such user");
    ctx.body = userView(user);
  });
  router.put("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const account = nameParam(ctx, "account");
    const project = nameParam(ctx, "project");
    const username = loginParam(ctx, "username");
    const body = parseBody(userBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const stored = await requireProject(deps, account, project, ctx);
    noteAudit(ctx, { summary: `user '${username}' with roles [${body.roles.join(", ")}]` });
    const definition = stored.definition as { roles?: Record<string, unknown> };
    const unknown = body.roles.filter((r) => !Object.hasOwn(definition.roles ?? {}, r));
    if (unknown.length > 0) throw errors.malformed(`Unknown role(s) for this project: ${unknown.join(", ")}`);
    const policy = deps.hasher.policyProblem(body.password);
    if (policy) throw errors.malformed(`Password rejected: ${policy}`);
    const user = {
      username,
      roles: body.roles,
      globals: body.globals ?? {},
      keyLifetimeSeconds: body.keyLifetimeSeconds,
    };
    const created = await deps.meta.putUser(account, project, {
      ...user,
      passwordHash: await deps.hasher.hash(body.password),
    });
    noteAudit(ctx, {
      summary: `user '${username}' ${created ? "created" : "updated"} with roles [${body.roles.join(", ")}]`,
    });
    ctx.status = created ? 201 : 200;
    ctx.body = userView(user);
  });
  router.delete("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const account = nameParam(ctx, "account");
    const project = nameParam(ctx, "project");
    const username = loginParam(ctx, "username");
    await requireAccount(deps, account, ctx);
    noteAudit(ctx, { summary: `user '${username}' deleted` });
    if (!(await deps.meta.deleteUser(account, project, username))) throw errors.notFound("No such user");
    ctx.body = { username, deleted: true };
  });
}
