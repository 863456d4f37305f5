/**
 * The account record: the operator creates and deletes accounts; an account's
 * administrators may read it and change its display name (admin-access gate).
 */
import type Router from "@koa/router";
import { z } from "zod";
import { noteAudit } from "../../../../../shared/admin-access/audit.ts";
import { callerOf } from "../../../../../shared/admin-access/gate.ts";
import { errors } from "../../../../../shared/errors.ts";
import { checkIfMatch, etag, parseIfMatch, stateTag } from "../../../../../shared/http/if-match.ts";
import { readJsonBody } from "../../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../../shared/http/parse-body.ts";
import { deleteAccount } from "../../domain/admin/deletions.ts";
import { parseQueryString, single } from "../../domain/read/query-params.ts";
import type { AccountDoc } from "../../store/meta-store.ts";
import { type AdminRouteDeps, isoTime, requireAccount } from "./deps.ts";
import { page, pageSize } from "./paging.ts";
import { nameParam, optionalNameQuery } from "./params.ts";

/** A request rate limit per window (RATE_LIMIT_WINDOW_SECONDS); 0 = none; null = the default. */
const limit = z.number().int().min(0).max(1_000_000_000).nullable().optional();

const accountBody = z.strictObject({
  displayName: z.string().max(200).optional(),
  /** The operator's alone; absent: unchanged. */
  rateLimits: z.strictObject({ account: limit, key: limit }).optional(),
});

export function addAccountRoutes(router: Router, deps: AdminRouteDeps): void {
  /** The account's entity tag: its incarnation and its display name. */
  const accountTag = (doc: AccountDoc) => stateTag(deps.meta.accountUid(doc), [doc.displayName ?? null]);
  /** Runs a change of the account record holding its lease: creation, display name and deletion never interleave. */
  const holdAccount = <T>(account: string, work: () => Promise<T>) =>
    deps.leases.hold(`account:${account}`, work);

  // Every account, in name order, paged (`since`: the last name of the previous page). The
  // operator's alone: a path outside every account (shared/admin-access/permissions.ts).
  router.get("/accounts", async (ctx) => {
    const params = parseQueryString(ctx.querystring);
    // An empty `since` is the first page, as no `since` is.
    const since = optionalNameQuery(single(params, "since") || undefined) ?? "";
    const limit = pageSize(params);
    const fetched = await deps.meta.listAccounts(since, limit + 1);
    ctx.body = page(
      ctx,
      deps.publicBaseUrl,
      fetched,
      limit,
      (doc) => ({ name: doc._id, displayName: doc.displayName ?? null, created: isoTime(doc.createdAt) }),
      (last) => [["since", last._id]],
    );
  });

  router.get("/accounts/:account", async (ctx) => {
    const account = nameParam(ctx, "account");
    const doc = await requireAccount(deps, account, ctx);
    const projects = await deps.meta.listProjects(account);
    ctx.set("ETag", etag(accountTag(doc)));
    ctx.body = {
      name: account,
      displayName: doc.displayName ?? null,
      created: isoTime(doc.createdAt),
      projects: projects.map((p) => p.name),
      rateLimits: await deps.accountRateLimits.get(account),
    };
  });

  router.put("/accounts/:account", async (ctx) => {
    const account = nameParam(ctx, "account");
    const precondition = parseIfMatch(ctx.get("if-match"));
    const body = parseBody(accountBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const { created, doc } = await holdAccount(account, async () => {
      // Only the operator creates accounts: an administrator's account must still be there.
      const existing =
        callerOf(ctx).kind === "operator"
          ? await deps.meta.getAccount(account)
          : await requireAccount(deps, account, ctx);
      if (callerOf(ctx).kind !== "operator" && body.rateLimits)
        throw errors.forbidden("Only the platform operator sets an account's rate limits");
      checkIfMatch(precondition, existing ? accountTag(existing) : undefined, `Account '${account}'`);
      const stored = await deps.meta.putAccount(account, body.displayName);
      const limits = body.rateLimits;
      if (limits)
        await deps.accountRateLimits.set(account, {
          account: limits.account ?? null,
          key: limits.key ?? null,
        });
      return stored;
    });
    const shown = body.displayName === undefined ? "no display name" : `display name '${body.displayName}'`;
    noteAudit(ctx, {
      accountUid: deps.meta.accountUid(doc),
      summary: created ? `account created (${shown})` : `account updated (${shown})`,
    });
    ctx.status = created ? 201 : 200;
    ctx.set("ETag", etag(accountTag(doc)));
    ctx.body = {
      name: account,
      displayName: body.displayName ?? null,
      created: isoTime(doc.createdAt),
      rateLimits: await deps.accountRateLimits.get(account),
    };
  });

  // A deletion is recorded before it happens, so that the sweeper drops what in-flight writes
  // recreate under the dead names (and whatever a deletion failing half-way leaves behind).
  // The audit trail stays: the operator still finds it (GET /admin/v1/audit?account=…).
  router.delete("/accounts/:account", async (ctx) => {
    const account = nameParam(ctx, "account");
    const precondition = parseIfMatch(ctx.get("if-match"));
    await holdAccount(account, async () => {
      const doc = await requireAccount(deps, account, ctx);
      checkIfMatch(precondition, accountTag(doc), `Account '${account}'`);
      const projects = await deps.meta.listProjects(account);
      noteAudit(ctx, {
        accountUid: deps.meta.accountUid(doc),
        summary: `account deleted with ${projects.length} project(s)`,
      });
      await deleteAccount(deps, doc, projects);
      await deps.accountRateLimits.drop(account);
    });
    ctx.body = { name: account, deleted: true };
  });
}
