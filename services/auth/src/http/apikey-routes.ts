/** Admin API for keys (DESIGN.md §5): create manual keys, list every key of a project, delete one. */
import Router from "@koa/router";
import type { Context, Next } from "koa";
import { errors } from "../../../../shared/errors.ts";
import { hasBearerToken } from "../../../../shared/http/bearer.ts";
import { readJsonBody } from "../../../../shared/http/json-body.ts";
import type { RequestState } from "../../../../shared/http/request-context.ts";
import { isValidName } from "../../../../shared/names.ts";
import { createManualKey, keyView, type ManualKeyDeps } from "../domain/manual-keys.ts";

export interface ApikeyRouteDeps extends ManualKeyDeps {
  adminTokens: string[];
  maxBodyBytes: number;
}

function scope(ctx: Context) {
  const { account, project } = ctx.params as Record<string, string>;
  if (!isValidName(account ?? "") || !isValidName(project ?? ""))
    throw errors.malformed("Invalid account or project name");
  return { account: account!, project: project! };
}

export function apikeyRouter(deps: ApikeyRouteDeps): Router {
  const router = new Router({ prefix: "/admin/v1/accounts/:account/projects/:project/apikeys" });
  router.use(async (ctx: Context, next: Next) => {
    if (!hasBearerToken(ctx, deps.adminTokens))
      throw errors.noKey("The admin API needs 'Authorization: Bearer <admin token>'");
    await next();
  });
  router.post("/", async (ctx) => {
    const { account, project } = scope(ctx);
    const body = await readJsonBody(ctx, deps.maxBodyBytes);
    ctx.status = 201;
    ctx.body = await createManualKey(deps, account, project, body, (ctx.state as RequestState).requestId);
  });
  router.get("/", async (ctx) => {
    const { account, project } = scope(ctx);
    const now = deps.now();
    ctx.body = (await deps.keys.list(account, project)).map((r) => keyView(r, now));
  });
  router.delete("/:id", async (ctx) => {
    const { account, project } = scope(ctx);
    const id = ctx.params.id ?? "";
    if (!(await deps.keys.deleteById(account, project, id)))
      throw errors.notFound("No such API key in this project");
    ctx.body = { id, deleted: true };
  });
  return router;
}
