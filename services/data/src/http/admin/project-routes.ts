/**
 * Projects: their definitions (every accepted one kept as a revision, with who
 * stored it, when and what changed), dry runs that answer the change without
 * making it, rollback to an earlier revision, and `ETag`/`If-Match` on the
 * project's incarnation and revision so that a change (or deletion) made
 * against a stale copy fails with 412. Secret fields are answered masked
 * (domain/definition/definition-secrets.ts).
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { z } from "zod";
import { actorOf, noteAudit } from "../../../../../shared/admin-access/audit.ts";
import { callerOf } from "../../../../../shared/admin-access/gate.ts";
import type { RevisionView } from "../../../../../shared/contracts/admin-api.ts";
import { errors } from "../../../../../shared/errors.ts";
import { etag, parseIfMatch } from "../../../../../shared/http/if-match.ts";
import { readJsonBody } from "../../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../../shared/http/parse-body.ts";
import type { RequestState } from "../../../../../shared/http/request-context.ts";
import { deleteProject } from "../../domain/admin/deletions.ts";
import {
  type AppliedChange,
  applyProjectChange,
  checkDefinition,
  checkPrecondition,
  holdProject,
  previewProjectChange,
  projectTag,
  requireAccountIncarnation,
} from "../../domain/admin/project-changes.ts";
import { maskSecrets } from "../../domain/definition/definition-secrets.ts";
import { parseDefinitionStructure } from "../../domain/definition/project-definition.ts";
import { definitionIndexes } from "../../domain/model/table-indexes.ts";
import { intParam, parseQueryString, single } from "../../domain/read/query-params.ts";
import type { StoredRevision } from "../../store/revision-store.ts";
import { type AdminRouteDeps, isoTime, requireAccount, requireAccountUid, requireProject } from "./deps.ts";
import { byParam, nextPageQuery, orderParam } from "./listing-query.ts";
import { page, pageSize } from "./paging.ts";
import { booleanParam, nameParam, revisionParam } from "./params.ts";

const rollbackBody = z.strictObject({ revision: z.number().int().positive() });

const revisionView = (r: StoredRevision): RevisionView => ({
  revision: r.revision,
  by: r.by,
  at: isoTime(r.at),
  summary: r.summary,
});

export function addProjectRoutes(router: Router, deps: AdminRouteDeps): void {
  const where = (ctx: Context) => ({
    account: nameParam(ctx, "account"),
    project: nameParam(ctx, "project"),
  });
  const answerApplied = (ctx: Context, project: string, applied: AppliedChange) => {
    noteAudit(ctx, { summary: applied.summary });
    ctx.set("ETag", etag(projectTag(applied)));
    ctx.status = applied.created ? 201 : 200;
    ctx.body = { name: project, revision: applied.revision, summary: applied.summary };
  };

  router.get("/accounts/:account/projects", async (ctx) => {
    const account = nameParam(ctx, "account");
    await requireAccount(deps, account, ctx);
    ctx.body = (await deps.meta.listProjects(account)).map((p) => ({
      name: p.name,
      revision: p.revision,
      updated: isoTime(p.updatedAt),
    }));
  });

  router.get("/accounts/:account/projects/:project", async (ctx) => {
    const { account, project } = where(ctx);
    const stored = await requireProject(deps, account, project, ctx);
    ctx.set("ETag", etag(projectTag(stored)));
    ctx.body = { name: stored.name, revision: stored.revision, definition: maskSecrets(stored.definition) };
  });

  router.put("/accounts/:account/projects/:project", async (ctx) => {
    const { account, project } = where(ctx);
    const dryRun = booleanParam(single(parseQueryString(ctx.querystring), "dryRun"), "dryRun");
    if (dryRun) noteAudit(ctx, { skip: true });
    const precondition = parseIfMatch(ctx.get("if-match"));
    const input = await readJsonBody(ctx, deps.maxBodyBytes);
    const accountUid = await requireAccountUid(deps, account, ctx);
    const definition = checkDefinition(input, { account, project }, deps);
    if (dryRun) {
      const preview = await previewProjectChange(deps.meta, { account, project, definition, precondition });
      if (preview.current) ctx.set("ETag", etag(projectTag(preview.current)));
      ctx.body = preview.diff;
      return;
    }
    const applied = await applyProjectChange(deps, {
      account,
      accountUid,
      project,
      definition,
      precondition,
      by: actorOf(callerOf(ctx)),
      requestId: (ctx.state as RequestState).requestId,
    });
    answerApplied(ctx, project, applied);
  });

  router.delete("/accounts/:account/projects/:project", async (ctx) => {
    const { account, project } = where(ctx);
    const precondition = parseIfMatch(ctx.get("if-match"));
    const accountUid = await requireAccountUid(deps, account, ctx);
    noteAudit(ctx, { summary: "project deleted" });
    await holdProject(deps, account, project, async () => {
      await requireAccountIncarnation(deps.meta, account, accountUid);
      const stored = await deps.meta.getProjectWithStorage(account, project);
      if (!stored) throw errors.notFound(`No project '${project}' in account '${account}'`);
      checkPrecondition(precondition, stored);
      await deleteProject(deps, stored);
    });
    ctx.body = { name: project, deleted: true };
  });

  router.get("/accounts/:account/projects/:project/indexes", async (ctx) => {
    const { account, project } = where(ctx);
    await requireAccount(deps, account, ctx);
    const stored = await deps.meta.getProjectWithStorage(account, project);
    if (!stored) throw errors.notFound(`No project '${project}' in account '${account}'`);
    const parsed = parseDefinitionStructure(stored.definition);
    const wanted = parsed.ok ? definitionIndexes(parsed.definition) : new Map();
    ctx.body = { indexes: await deps.indexes.status(stored.storage, wanted) };
  });

  router.get("/accounts/:account/projects/:project/revisions", async (ctx) => {
    const { account, project } = where(ctx);
    const params = parseQueryString(ctx.querystring);
    const since = intParam(params, "since", 0, 0, 999_999_999);
    const before =
      single(params, "before") === undefined ? undefined : intParam(params, "before", 0, 1, 999_999_999);
    const newestFirst = orderParam(single(params, "order")) === "newest";
    const by = byParam(single(params, "by"));
    const limit = pageSize(params);
    const stored = await requireProject(deps, account, project, ctx);
    const fetched = await deps.revisions.list(stored.uid, {
      after: since,
      before,
      upTo: stored.revision,
      limit: limit + 1,
      by,
      newestFirst,
    });
    ctx.body = page(ctx, deps.publicBaseUrl, fetched, limit, revisionView, (last) =>
      nextPageQuery(
        params,
        ["order", "by"],
        newestFirst,
        since > 0 ? String(since) : undefined,
        String(last.revision),
      ),
    );
  });

  router.get("/accounts/:account/projects/:project/revisions/:revision", async (ctx) => {
    const { account, project } = where(ctx);
    const number = revisionParam(ctx);
    const stored = await requireProject(deps, account, project, ctx);
    const revision = number <= stored.revision ? await deps.revisions.get(stored.uid, number) : null;
    if (!revision) throw errors.notFound(`No revision ${number} of project '${project}'`);
    ctx.set("ETag", etag(projectTag({ uid: stored.uid, revision: revision.revision })));
    ctx.body = { ...revisionView(revision), definition: maskSecrets(revision.definition) };
  });

  router.post("/accounts/:account/projects/:project/rollback", async (ctx) => {
    const { account, project } = where(ctx);
    const precondition = parseIfMatch(ctx.get("if-match"));
    const body = parseBody(rollbackBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const accountUid = await requireAccountUid(deps, account, ctx);
    const stored = await requireProject(deps, account, project, ctx);
    noteAudit(ctx, { summary: `rollback to revision ${body.revision}` });
    const target =
      body.revision <= stored.revision ? await deps.revisions.get(stored.uid, body.revision) : null;
    if (!target) throw errors.notFound(`No revision ${body.revision} of project '${project}'`);
    // Checked again as it stands today: a revision that no longer passes is refused like any PUT.
    const definition = checkDefinition(target.definition, { account, project }, deps);
    const applied = await applyProjectChange(deps, {
      account,
      accountUid,
      project,
      definition,
      precondition,
      uid: stored.uid,
      by: actorOf(callerOf(ctx)),
      requestId: (ctx.state as RequestState).requestId,
      describe: (summary) => `rollback to revision ${body.revision}: ${summary}`,
    });
    answerApplied(ctx, project, applied);
  });
}
