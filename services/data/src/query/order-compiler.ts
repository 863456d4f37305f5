/**
 * Order AST → MongoDB sort pairs. MongoDB sorts null and missing values before
 * every other value in ascending order and after them in descending order (as
 * SQLite does with NULLs), so `null_first` is plain ascending. The caller appends
 * the key fields as a tie-breaker.
 */
import type { OrderItem, QuerySchema, SortPair } from "./ast.ts";
import { badQuery, type QueryLabel, show } from "./query-error.ts";
import { resolveAttribute } from "./schema.ts";

export function compileOrder(
  items: readonly OrderItem[],
  schema: QuerySchema,
  options: { label?: QueryLabel } = {},
): SortPair[] {
  const pairs: SortPair[] = [];
  const seen = new Set<string>();
  for (const item of items) {
    const label = options.label ?? item.source ?? "order";
    const info = resolveAttribute(schema, item.attr, label);
    if (info.type === "json") {
      throw badQuery(label, item.attr.pos, `cannot order by json attribute ${show(item.attr.name)}`);
    }
    if (item.fold && info.type === "string") {
      const modifier = `${item.direction}_${item.fold === "upper" ? "uc" : "lc"}`;
      throw badQuery(
        label,
        item.attr.pos,
        `case-insensitive ordering (${modifier}) of ${show(item.attr.name)} is not supported; use ${item.direction}`,
      );
    }
    if (item.nulls === "last") {
      throw badQuery(
        label,
        item.attr.pos,
        `null_last is not supported (ascending order puts nulls first); use null_first or desc`,
      );
    }
    // A later key on a field already ordered by cannot change the order: skip it.
    if (seen.has(info.field)) continue;
    seen.add(info.field);
    pairs.push([info.field, item.direction === "desc" ? -1 : 1]);
  }
  return pairs;
}
