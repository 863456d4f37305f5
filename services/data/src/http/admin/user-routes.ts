/**
 * A project's built-in users (the built-in provider's accounts). Passwords are
 * never answered. Users belong to the project's incarnation: a change is made
 * holding the project's lease (which its deletion takes too) and only while the
 * project is still the one the request found. A user's `ETag` names the
 * project's incarnation and the user's state; PUT and DELETE honour `If-Match`.
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { z } from "zod";
import { noteAudit } from "../../../../../shared/admin-access/audit.ts";
import type { UserView } from "../../../../../shared/contracts/admin-api.ts";
import { errors } from "../../../../../shared/errors.ts";
import { checkIfMatch, etag, parseIfMatch, stateTag } from "../../../../../shared/http/if-match.ts";
import { readJsonBody } from "../../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../../shared/http/parse-body.ts";
import { holdProject } from "../../domain/admin/change-leases.ts";
import { keyLifetimeSecondsSchema } from "../../domain/definition/project-definition.ts";
import type { StoredProject } from "../../store/meta-store.ts";
import type { StoredUser } from "../../store/user-store.ts";
import { type AdminRouteDeps, requireProject } from "./deps.ts";
import { loginParam, nameParam } from "./params.ts";

const userBody = z.strictObject({
  /** Required to create a user; without it an update keeps the password (a change of roles, say). */
  password: z.string().min(1).max(1024).optional(),
  roles: z.array(z.string().min(1).max(100)).max(100),
  globals: z.record(z.string().max(200), z.unknown()).optional(),
  keyLifetimeSeconds: keyLifetimeSecondsSchema.optional(),
});

const userView = (u: Omit<StoredUser, "passwordHash">): UserView => ({
  username: u.username,
  roles: u.roles,
  globals: u.globals,
  keyLifetimeSeconds: u.keyLifetimeSeconds ?? null,
});

/** The user's entity tag: its project's incarnation and everything stored of it (a new password: a new salt). */
const userTag = (project: StoredProject, u: StoredUser) =>
  stateTag(project.uid, [u.username, u.passwordHash, u.roles, u.globals, u.keyLifetimeSeconds ?? null]);

export function addUserRoutes(router: Router, deps: AdminRouteDeps): void {
  const project = (ctx: Context) =>
    requireProject(deps, nameParam(ctx, "account"), nameParam(ctx, "project"), ctx);
  /** Runs a change of the project's users holding its lease, once it is still the incarnation `stored`. */
  const holdUsers = <T>(stored: StoredProject, work: () => Promise<T>) =>
    holdProject(deps, stored.account, stored.name, async () => {
      const now = await deps.meta.getProject(stored.account, stored.name);
      if (now?.uid !== stored.uid) {
        throw errors.notFound(`No project '${stored.name}' in account '${stored.account}'`);
      }
      return work();
    });

  router.get("/accounts/:account/projects/:project/users", async (ctx) => {
    ctx.body = (await deps.users.list(await project(ctx))).map(userView);
  });
  router.get("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const stored = await project(ctx);
    const user = await deps.users.get(stored, loginParam(ctx, "username"));
    if (!user) throw errors.notFound("No such user");
    ctx.set("ETag", etag(userTag(stored, user)));
    ctx.body = userView(user);
  });
  router.put("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const username = loginParam(ctx, "username");
    const precondition = parseIfMatch(ctx.get("if-match"));
    const body = parseBody(userBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const stored = await project(ctx);
    noteAudit(ctx, { summary: `user '${username}' with roles [${body.roles.join(", ")}]` });
    const definition = stored.definition as { roles?: Record<string, unknown> };
    const unknown = body.roles.filter((r) => !Object.hasOwn(definition.roles ?? {}, r));
    if (unknown.length > 0) throw errors.malformed(`Unknown role(s) for this project: ${unknown.join(", ")}`);
    const policy = body.password === undefined ? undefined : deps.hasher.policyProblem(body.password);
    if (policy) throw errors.malformed(`Password rejected: ${policy}`);
    const user = {
      username,
      roles: body.roles,
      globals: body.globals ?? {},
      keyLifetimeSeconds: body.keyLifetimeSeconds,
    };
    const newHash = body.password === undefined ? undefined : await deps.hasher.hash(body.password);
    const { created, written } = await holdUsers(stored, async () => {
      const existing = await deps.users.get(stored, username);
      checkIfMatch(precondition, existing ? userTag(stored, existing) : undefined, `User '${username}'`);
      const passwordHash = newHash ?? existing?.passwordHash;
      if (passwordHash === undefined) throw errors.malformed("A new user needs a password");
      // Under the project's lease, as every change of its users: the count cannot move meanwhile.
      if (!existing)
        await deps.quotas?.checkCount(
          stored.account,
          "usersPerProject",
          (await deps.users.list(stored)).length,
        );
      const written = { ...user, passwordHash };
      return { created: await deps.users.put(stored, written), written };
    });
    noteAudit(ctx, {
      summary: `user '${username}' ${created ? "created" : "updated"} with roles [${body.roles.join(", ")}]${body.password === undefined ? ", password kept" : ""}`,
    });
    ctx.status = created ? 201 : 200;
    ctx.set("ETag", etag(userTag(stored, written)));
    ctx.body = userView(user);
  });
  router.delete("/accounts/:account/projects/:project/users/:username", async (ctx) => {
    const username = loginParam(ctx, "username");
    const precondition = parseIfMatch(ctx.get("if-match"));
    const stored = await project(ctx);
    noteAudit(ctx, { summary: `user '${username}' deleted` });
    await holdUsers(stored, async () => {
      const existing = await deps.users.get(stored, username);
      if (!existing) throw errors.notFound("No such user");
      checkIfMatch(precondition, userTag(stored, existing), `User '${username}'`);
      await deps.users.delete(stored, username);
    });
    ctx.body = { username, deleted: true };
  });
}
