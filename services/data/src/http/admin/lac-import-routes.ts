/**
 * `POST /admin/v1/accounts/{a}/projects/{p}/import/lac[?dryRun=true]`: a Live
 * API Creator project export and its database's DDL (and, optionally, its rows)
 * as a new Tessera project. The dry run answers the definition, users and keys
 * it would make, everything that did not map, every limit of the account's plan it
 * would pass (`quota`), and a `confirm` code; the import itself takes the same body
 * with that code, so that only what the administrator saw is applied (412 when the
 * input or the translation changed since), and is refused whole (403/4032) when it
 * would pass a limit of the plan. Translation: domain/lac-import; applying and the
 * plan's check: domain/migration.
 */
import { createHash } from "node:crypto";
import type Router from "@koa/router";
import { z } from "zod";
import { actorOf, noteAudit } from "../../../../../shared/admin-access/audit.ts";
import { callerOf } from "../../../../../shared/admin-access/gate.ts";
import { errors } from "../../../../../shared/errors.ts";
import { readJsonBody } from "../../../../../shared/http/json-body.ts";
import { parseBody } from "../../../../../shared/http/parse-body.ts";
import type { RequestState } from "../../../../../shared/http/request-context.ts";
import { examineDefinition } from "../../domain/admin/project-changes.ts";
import { type LacImport, translateLacProject } from "../../domain/lac-import/lac-import.ts";
import { SQL_DIALECTS } from "../../domain/lac-import/sql-ast.ts";
import { importExcesses, importRefusal } from "../../domain/migration/import-quota.ts";
import { applyLacMigration, checkKeyValuesFree } from "../../domain/migration/lac-migration.ts";
import { parseQueryString, single } from "../../domain/read/query-params.ts";
import { type AdminRouteDeps, requireAccountUid } from "./deps.ts";
import { booleanParam, nameParam } from "./params.ts";

const importBody = z.strictObject({
  /** `lacadmin project export` JSON. */
  export: z.unknown(),
  /** The database's DDL (CREATE TABLE …). */
  ddl: z
    .string()
    .min(1)
    .max(4 * 1024 * 1024),
  dialect: z.enum(SQL_DIALECTS).default("mysql"),
  /** Keep the export's key values (clients hold them); false: every key gets a new value. */
  keepKeyValues: z.boolean().default(true),
  data: z
    .strictObject({
      csv: z.record(z.string().min(1).max(200), z.string()).optional(),
      sql: z.string().optional(),
    })
    .optional(),
  /** The dry run's `confirm`: required to apply. */
  confirm: z.string().max(100).optional(),
});

type ImportBody = z.infer<typeof importBody>;

interface Prepared {
  imported: LacImport;
  confirm: string;
}

export function addLacImportRoutes(router: Router, deps: AdminRouteDeps): void {
  router.post("/accounts/:account/projects/:project/import/lac", async (ctx) => {
    const account = nameParam(ctx, "account");
    const project = nameParam(ctx, "project");
    const dryRun = booleanParam(single(parseQueryString(ctx.querystring), "dryRun"), "dryRun");
    if (dryRun) noteAudit(ctx, { skip: true });
    const body = parseBody(importBody, await readJsonBody(ctx, deps.maxBodyBytes));
    const accountUid = await requireAccountUid(deps, account, ctx);
    if (!deps.keepImportedKeyValues && body.keepKeyValues) {
      throw errors.forbidden(
        'This deployment does not keep imported key values (LAC_IMPORT_KEEP_KEY_VALUES=false): import with "keepKeyValues": false',
      );
    }
    const prepared = prepare(body, { account, project }, deps);
    // What the import would take of the account's plan: reported by the dry run, refused by the import.
    const quota =
      deps.quotas && (await importExcesses(importQuotaDeps(deps, deps.quotas), account, prepared.imported));
    if (dryRun) {
      await checkKeyValuesFree(deps.keyStore, prepared.imported);
      if (await deps.meta.getProject(account, project))
        throw errors.conflict(`Project '${project}' exists already; an import makes a new project`);
      ctx.body = {
        ...dryRunAnswer(prepared),
        ...(quota ? { quota: { plan: quota.plan, exceeds: quota.excesses } } : {}),
      };
      return;
    }
    if (body.confirm === undefined)
      throw errors.malformed(
        "An import needs the 'confirm' code of its dry run (POST …/import/lac?dryRun=true with the same body)",
      );
    if (body.confirm !== prepared.confirm) {
      throw errors.preconditionFailed(
        "The import differs from the dry run the 'confirm' code is of (the input or the translation changed): run the dry run again",
      );
    }
    noteAudit(ctx, { summary: `import from Live API Creator into '${project}'` });
    if (quota && quota.excesses.length > 0) {
      for (const e of quota.excesses) deps.quotas?.refused(e.limit);
      throw importRefusal(quota.plan, quota.excesses);
    }
    const caller = callerOf(ctx);
    const result = await applyLacMigration(
      { ...deps, keyStore: deps.keyStore, now: () => Date.now() },
      {
        account,
        accountUid,
        project,
        imported: prepared.imported,
        rows: prepared.imported.rows,
        by: actorOf(caller),
        requestId: (ctx.state as RequestState).requestId,
        loader: {
          roles: [],
          globals: {},
          administrator: { login: caller.kind === "admin" ? caller.login : "operator", role: "admin" },
        },
        restBase: `${deps.publicBaseUrl ?? ctx.origin}/rest`,
      },
    );
    noteAudit(ctx, {
      summary: `import from Live API Creator into '${project}': ${result.summary}; users ${result.users.length}, keys ${result.keys.length}${result.data ? `, rows ${Object.values(result.data.loaded).reduce((a, b) => a + b, 0)} (${result.data.refused.length} refused)` : ""}`,
    });
    ctx.status = 201;
    ctx.body = {
      name: project,
      revision: result.revision,
      summary: result.summary,
      users: result.users,
      keys: result.keys,
      unmapped: prepared.imported.unmapped,
      ...(result.data ? { data: result.data } : {}),
    };
  });
}

/** The plan, projects and measurement an import is checked against. */
function importQuotaDeps(deps: AdminRouteDeps, quotas: NonNullable<AdminRouteDeps["quotas"]>) {
  return {
    limitsOf: (account: string) => quotas.limitsOf(account),
    storedBytesOf: (account: string) => quotas.storedBytesOf(account),
    projectCount: async (account: string) => (await deps.meta.listProjects(account)).length,
  };
}

function prepare(
  body: ImportBody,
  where: { account: string; project: string },
  deps: AdminRouteDeps,
): Prepared {
  const imported = translateLacProject(
    {
      export: body.export,
      ddl: body.ddl,
      dialect: body.dialect,
      keepKeyValues: body.keepKeyValues,
      now: Date.now(),
      ...(body.data ? { data: body.data } : {}),
    },
    (definition) => {
      const examined = examineDefinition(definition, where, deps);
      return examined.ok ? [] : examined.problems;
    },
  );
  const confirm = createHash("sha256")
    .update(
      JSON.stringify({
        definition: imported.definition,
        users: imported.users,
        keys: imported.keys,
        rows: imported.rows.map((t) => [t.table, t.rows.length]),
      }),
    )
    .digest("hex")
    .slice(0, 32);
  return { imported, confirm };
}

function dryRunAnswer(p: Prepared) {
  return {
    project: p.imported.project,
    definition: p.imported.definition,
    users: p.imported.users.map((u) => ({
      username: u.username,
      roles: u.roles,
      globals: u.globals,
      keyLifetimeSeconds: u.keyLifetimeSeconds ?? null,
      password: u.lacPassword ? "imported" : "none",
    })),
    keys: p.imported.keys.map((k) => ({
      name: k.name,
      roles: k.roles,
      globals: k.globals,
      userIdentifier: k.userIdentifier ?? null,
      expiration: k.expiration ?? null,
      value: k.keepValue ? "kept" : "new",
    })),
    ...(p.imported.rows.length > 0
      ? { data: { rows: Object.fromEntries(p.imported.rows.map((t) => [t.table, t.rows.length])) } }
      : {}),
    unmapped: p.imported.unmapped,
    confirm: p.confirm,
  };
}
