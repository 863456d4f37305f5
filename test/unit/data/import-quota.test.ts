/** What an import from Live API Creator would take of a plan (domain/migration/import-quota.ts), and the usage warnings of every count limit. */
import { expect } from "chai";
import type { LacImport } from "../../../services/data/src/domain/lac-import/lac-import.ts";
import {
  importExcesses,
  importRefusal,
  rowBytes,
} from "../../../services/data/src/domain/migration/import-quota.ts";
import { usageWarnings } from "../../../services/data/src/usage/usage-report.ts";
import { ErrorCode } from "../../../shared/errors.ts";
import { type EffectiveLimits, fullLimits, type PlanInput } from "../../../shared/quotas/plans.ts";

const planOf = (input: PlanInput): EffectiveLimits => ({
  plan: "p",
  limits: fullLimits(input),
  overridden: [],
});

/** An import of `tables` tables, `users` users, `keys` keys and these rows per table. */
function anImport(tables: number, users: number, keys: number, rows: Record<string, number>): LacImport {
  return {
    definition: { tables: Object.fromEntries(Array.from({ length: tables }, (_, i) => [`t${i}`, {}])) },
    users: Array.from({ length: users }, (_, i) => ({ username: `u${i}` })),
    keys: Array.from({ length: keys }, (_, i) => ({ name: `k${i}` })),
    rows: Object.entries(rows).map(([table, n]) => ({
      table,
      rows: Array.from({ length: n }, (_, i) => ({
        values: { id: i, note: "x" },
        source: `data.${table}[${i}]`,
      })),
    })),
  } as unknown as LacImport;
}

function deps(input: PlanInput, projects: number, storedBytes?: number) {
  return {
    limitsOf: async () => planOf(input),
    storedBytesOf: async () => storedBytes,
    projectCount: async () => projects,
  };
}

describe("import quota", () => {
  it("lists every limit passed, rows per table, and nothing when the import fits exactly", async () => {
    const imported = anImport(3, 2, 2, { a: 5, b: 2 });
    const tight = await importExcesses(
      deps(
        { projects: 1, tablesPerProject: 2, usersPerProject: 1, apiKeysPerProject: 1, rowsPerTable: 4 },
        1,
      ),
      "acme",
      imported,
    );
    expect(tight.excesses).to.deep.equal([
      { limit: "projects", value: 1, used: 1, adding: 1 },
      { limit: "tablesPerProject", value: 2, used: 0, adding: 3 },
      { limit: "usersPerProject", value: 1, used: 0, adding: 2 },
      { limit: "apiKeysPerProject", value: 1, used: 0, adding: 2 },
      { limit: "rowsPerTable", value: 4, used: 0, adding: 5, table: "a" },
    ]);
    const exact = {
      projects: 2,
      tablesPerProject: 3,
      usersPerProject: 2,
      apiKeysPerProject: 2,
      rowsPerTable: 5,
    };
    expect((await importExcesses(deps(exact, 1), "acme", imported)).excesses).to.deep.equal([]);
    expect((await importExcesses(deps({}, 100), "acme", imported)).excesses).to.deep.equal([]);
  });

  it("stored bytes: the measurement plus the rows as JSON; an import without rows is not held to it", async () => {
    const imported = anImport(1, 0, 0, { a: 3 });
    const size = rowBytes(imported);
    expect(size).to.equal(3 * Buffer.byteLength(JSON.stringify({ id: 0, note: "x" })));
    const fits = await importExcesses(deps({ storedBytes: 1000 + size }, 0, 1000), "acme", imported);
    expect(fits.excesses).to.deep.equal([]);
    const over = await importExcesses(deps({ storedBytes: 999 + size }, 0, 1000), "acme", imported);
    expect(over.excesses).to.deep.equal([
      { limit: "storedBytes", value: 999 + size, used: 1000, adding: size },
    ]);
    const full = await importExcesses(deps({ storedBytes: 10 }, 0, 10), "acme", anImport(1, 0, 0, {}));
    expect(full.excesses).to.deep.equal([]);
  });

  it("the refusal is 403/4032 naming the first limit, with every one under `exceeds`", () => {
    const excesses = [
      { limit: "rowsPerTable" as const, value: 4, used: 0, adding: 5, table: "a" },
      { limit: "storedBytes" as const, value: 10, used: 9, adding: 50 },
    ];
    const err = importRefusal("p", excesses);
    expect(err.statusCode).to.equal(403);
    expect(err.errorCode).to.equal(ErrorCode.quotaExceeded);
    expect(err.details).to.deep.equal({
      quota: { limit: "rowsPerTable", value: 4, used: 0, plan: "p" },
      exceeds: excesses,
    });
    expect(err.message).to.contain("rows in table 'a'").and.contain("1 other limit");
  });

  it("usage warnings from 80 % of every count limit, the new per-project ones too", () => {
    const warnings = usageWarnings({
      account: "acme",
      limits: planOf({
        usersPerProject: 10,
        apiKeysPerProject: 10,
        webhooksPerProject: 5,
        tablesPerProject: 10,
      }),
      snapshot: undefined,
      projects: [
        { name: "a", tables: 1, users: 8, apiKeys: 7, webhooks: 5 },
        { name: "b", tables: 8, users: 1, apiKeys: 10, webhooks: 3 },
      ],
    });
    expect(warnings).to.deep.equal([
      { limit: "usersPerProject", state: "warning", used: 8, value: 10, project: "a" },
      { limit: "webhooksPerProject", state: "full", used: 5, value: 5, project: "a" },
      { limit: "tablesPerProject", state: "warning", used: 8, value: 10, project: "b" },
      { limit: "apiKeysPerProject", state: "full", used: 10, value: 10, project: "b" },
    ]);
  });
});
