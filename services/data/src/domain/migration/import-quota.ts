/**
 * What an import of a Live API Creator project would take of the account's plan: a new
 * project, its tables, its built-in users, its API keys, the rows of each table and the bytes of
 * those rows. The dry run reports every limit the import would pass; the import itself is
 * refused whole (403/4032, naming the first) before anything is written. Pure but for reading the
 * account's plan, its projects and its last storage measurement.
 *
 * The bytes are an estimate: the rows as JSON text, which the store takes more room for (its own
 * encoding and indexes); the measurement is up to USAGE_SAMPLE_SECONDS old.
 */
import { ApiError, ErrorCode } from "../../../../../shared/errors.ts";
import { COUNTED, type EffectiveLimits, type LimitName } from "../../../../../shared/quotas/plans.ts";
import type { LacImport } from "../lac-import/lac-import.ts";

/** One limit the import would pass: the plan's value, what is in use, what the import adds. */
export interface ImportExcess {
  limit: LimitName;
  value: number;
  used: number;
  adding: number;
  /** For rowsPerTable: the table. */
  table?: string;
}

export interface ImportQuotaDeps {
  limitsOf(account: string): Promise<EffectiveLimits>;
  /** The account's stored bytes as last measured (undefined: not measured yet). */
  storedBytesOf(account: string): Promise<number | undefined>;
  /** How many projects the account has. */
  projectCount(account: string): Promise<number>;
}

/** The rows' size as JSON text (UTF-8 bytes): what the import adds to the stored bytes, at least. */
export function rowBytes(imported: Pick<LacImport, "rows">): number {
  let bytes = 0;
  for (const { rows } of imported.rows)
    for (const row of rows) bytes += Buffer.byteLength(JSON.stringify(row.values));
  return bytes;
}

/** Every limit of the account's plan the import into a new project would pass. */
export async function importExcesses(
  deps: ImportQuotaDeps,
  account: string,
  imported: LacImport,
): Promise<{ plan: string; excesses: ImportExcess[] }> {
  const { plan, limits } = await deps.limitsOf(account);
  const excesses: ImportExcess[] = [];
  const check = (limit: LimitName, used: number, adding: number, table?: string) => {
    const value = limits[limit];
    if (value !== null && adding > 0 && used + adding > value)
      excesses.push({ limit, value, used, adding, ...(table === undefined ? {} : { table }) });
  };
  if (limits.projects !== null) check("projects", await deps.projectCount(account), 1);
  check("tablesPerProject", 0, Object.keys(imported.definition.tables).length);
  check("usersPerProject", 0, imported.users.length);
  check("apiKeysPerProject", 0, imported.keys.length);
  for (const { table, rows } of imported.rows) check("rowsPerTable", 0, rows.length, table);
  if (limits.storedBytes !== null && imported.rows.some((t) => t.rows.length > 0)) {
    check("storedBytes", (await deps.storedBytesOf(account)) ?? 0, rowBytes(imported));
  }
  return { plan, excesses };
}

/**
 * The refusal of an import that would pass `excesses` (403/4032): the `quota` body names the first,
 * `exceeds` lists them all.
 */
export function importRefusal(plan: string, excesses: ImportExcess[]): ApiError {
  const [first] = excesses;
  if (!first) throw new Error("importRefusal: no excess");
  const what =
    first.limit === "rowsPerTable"
      ? `rows in table '${first.table}'`
      : first.limit === "storedBytes"
        ? "bytes of stored data"
        : COUNTED[first.limit as keyof typeof COUNTED];
  const others = excesses.length - 1;
  return new ApiError(
    403,
    ErrorCode.quotaExceeded,
    `The account's plan '${plan}' allows ${first.value} ${what} (limit ${first.limit}); ${first.used} in use, ` +
      `and the import would add ${first.adding}${others > 0 ? ` (it passes ${others} other limit(s) too: see 'exceeds')` : ""}. ` +
      "Nothing was imported: make room, import less, or ask the platform operator for a larger plan",
    {
      details: {
        quota: { limit: first.limit, value: first.value, used: first.used, plan },
        exceeds: excesses,
      },
    },
  );
}
