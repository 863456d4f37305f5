/**
 * `make lac-import`: moves a Live API Creator project to a running Tessera through the
 * admin API (POST …/projects/{p}/import/lac). Without --confirm it makes the dry run and
 * prints what would be made and everything that did not map, with the confirm code;
 * with --confirm <code> it makes the import the code is of. docs/migrating-from-lac.md.
 *
 *   node services/dev-stack/src/lac-import.ts --export nwind.json --ddl northwind.sql \
 *     --account acme --project northwind [--dialect mysql] [--data-dir rows/] [--data-sql rows.sql]
 *     [--new-key-values] [--confirm <code>] [--base http://127.0.0.1:8080] [--token <admin token or key>]
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

const HELP = `Usage: make lac-import EXPORT=<export.json> DDL=<schema.sql> ACCOUNT=<a> PROJECT=<p> [DIALECT=mysql]
                        [ROWS_DIR=<dir of <table>.csv>] [ROWS_SQL=<inserts.sql>] [NEW_KEY_VALUES=1] [CONFIRM=<code>]
   or: node services/dev-stack/src/lac-import.ts --export … --ddl … --account … --project … [--dialect …]
       [--data-dir …] [--data-sql …] [--new-key-values] [--confirm <code>] [--base <url>] [--token <token>]
Without a confirm code: the dry run (nothing is stored). With the code it printed: the import.
The admin token comes from --token, $ADMIN_TOKEN or $DATA_DIR/admin-token (.data/admin-token).`;

const { values } = parseArgs({
  options: {
    export: { type: "string" },
    ddl: { type: "string" },
    account: { type: "string" },
    project: { type: "string" },
    dialect: { type: "string", default: "mysql" },
    "data-dir": { type: "string" },
    "data-sql": { type: "string" },
    "new-key-values": { type: "boolean", default: false },
    confirm: { type: "string" },
    base: { type: "string", default: `http://127.0.0.1:${process.env.PORT ?? "8080"}` },
    token: { type: "string" },
    help: { type: "boolean", default: false },
  },
});

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

if (values.help) {
  console.log(HELP);
  process.exit(0);
}
if (!values.export || !values.ddl || !values.account || !values.project) fail(HELP);

const token =
  values.token ??
  process.env.ADMIN_TOKEN?.split(",")[0] ??
  readFileSync(path.join(process.env.DATA_DIR ?? ".data", "admin-token"), "utf8").trim();

const csv: Record<string, string> = {};
if (values["data-dir"]) {
  for (const file of readdirSync(values["data-dir"]).filter((f) => f.toLowerCase().endsWith(".csv"))) {
    csv[file.slice(0, -4)] = readFileSync(path.join(values["data-dir"], file), "utf8");
  }
}
const data =
  Object.keys(csv).length > 0 || values["data-sql"]
    ? {
        ...(Object.keys(csv).length > 0 ? { csv } : {}),
        ...(values["data-sql"] ? { sql: readFileSync(values["data-sql"], "utf8") } : {}),
      }
    : undefined;

const body = {
  export: JSON.parse(readFileSync(values.export, "utf8")),
  ddl: readFileSync(values.ddl, "utf8"),
  dialect: values.dialect,
  keepKeyValues: !values["new-key-values"],
  ...(data ? { data } : {}),
  ...(values.confirm ? { confirm: values.confirm } : {}),
};
const url = `${values.base}/admin/v1/accounts/${encodeURIComponent(values.account)}/projects/${encodeURIComponent(values.project)}/import/lac${values.confirm ? "" : "?dryRun=true"}`;
const response = await fetch(url, {
  method: "POST",
  headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
  body: JSON.stringify(body),
});
const answer = (await response.json()) as Record<string, unknown>;
if (!response.ok) {
  console.error(JSON.stringify(answer, null, 2));
  process.exit(1);
}

const unmapped = (answer.unmapped ?? []) as { path: string; reason: string }[];
if (values.confirm) {
  console.log(`Imported '${values.project}' (revision ${answer.revision}): ${answer.summary}`);
  console.log("\nUsers:");
  for (const u of answer.users as { username: string; password: string }[]) {
    console.log(
      `  ${u.username}${u.password === "none" ? "  (no usable password: set one with PUT …/users/<name>)" : ""}`,
    );
  }
  console.log("\nAPI keys (values shown this once):");
  for (const k of answer.keys as { name: string; apikey: string; kept: boolean }[]) {
    console.log(
      `  ${k.name}: ${k.apikey}${k.kept ? " (kept)" : " (new value: give it to the key's clients)"}`,
    );
  }
  const loaded = answer.data as
    | { loaded: Record<string, number>; refused: { path: string; reason: string }[] }
    | undefined;
  if (loaded) {
    console.log("\nRows loaded (rules off):");
    for (const [table, n] of Object.entries(loaded.loaded)) console.log(`  ${table}: ${n}`);
    for (const r of loaded.refused) console.log(`  refused ${r.path}: ${r.reason}`);
  }
} else {
  const definition = answer.definition as {
    tables: object;
    rules: unknown[];
    roles: object;
    apiVersions: Record<string, { resources: object }>;
  };
  console.log(JSON.stringify(definition, null, 2));
  console.log(
    `\nDry run of '${values.project}': ${Object.keys(definition.tables).length} tables, ${definition.rules.length} rules, ` +
      `${Object.values(definition.apiVersions).reduce((n, v) => n + Object.keys(v.resources).length, 0)} resources, ` +
      `${Object.keys(definition.roles).length} roles, ${(answer.users as unknown[]).length} users, ${(answer.keys as unknown[]).length} keys` +
      (answer.data ? `, rows ${JSON.stringify((answer.data as { rows: object }).rows)}` : ""),
  );
}
console.log(`\nDid not map (${unmapped.length}):`);
for (const u of unmapped) console.log(`  ${u.path}: ${u.reason}`);
const quota = answer.quota as
  | {
      plan: string;
      exceeds: { limit: string; value: number; used: number; adding: number; table?: string }[];
    }
  | undefined;
if (quota && quota.exceeds.length > 0) {
  console.log(`\nPasses the account's plan '${quota.plan}' (the import would be refused, 403/4032):`);
  for (const e of quota.exceeds)
    console.log(
      `  ${e.limit}${e.table ? ` (table ${e.table})` : ""}: allows ${e.value}, ${e.used} in use, the import adds ${e.adding}`,
    );
}
if (!values.confirm) {
  console.log(
    `\nNothing was stored. To import exactly this, run again with CONFIRM=${String(answer.confirm)} (--confirm ${String(answer.confirm)}).`,
  );
}
