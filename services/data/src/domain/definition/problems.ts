/**
 * A problem of a project definition: where (a JSON path such as
 * `$.tables.customer.columns.x.type`) and what. Every check of a definition
 * reports these; the admin API answers them as `problems`.
 */

export interface Problem {
  path: string;
  message: string;
}

/** Reports a problem at a path given as keys (`["tables", "customer", "key", 0]`). */
export type Report = (path: readonly PropertyKey[], message: string) => void;

export function jsonPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (acc, part) =>
      typeof part === "number"
        ? `${acc}[${part}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(String(part))
          ? `${acc}.${String(part)}`
          : `${acc}[${JSON.stringify(String(part))}]`,
    "$",
  );
}

/** A problem list and the `Report` that appends to it. */
export function problemList(): { problems: Problem[]; report: Report } {
  const problems: Problem[] = [];
  return { problems, report: (path, message) => problems.push({ path: jsonPath(path), message }) };
}
