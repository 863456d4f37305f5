/**
 * Whether one of the table's indexes serves a read's client filter and order, and if not, which
 * index would: the answer carries it as a hint (http/rest-routes.ts). An index serves a read when
 * its first column has a condition in every row the filter keeps (a comparison or `in` at the top
 * level of the filter, not under `or`/`not`, not case-folded) or leads the order; a read with
 * neither filter nor order goes in key order, which the key's index serves.
 */
import { type FilterNode, parseFilter, parseOrder, parseSysfilter } from "../../query/index.ts";
import type { ResourceModel } from "../model/project-model.ts";
import type { ClientQuery } from "./query-builder.ts";

/** The index a read would need, as `table(columns)`, or undefined when one of the table's serves it. */
export function missingIndex(resource: ResourceModel, client: ClientQuery): string | undefined {
  const fieldOf = new Map(resource.attributes.map((a) => [a.name, a.column.name]));
  const filters = [
    ...client.filters.map((text) => parseFilter(text)),
    ...client.sysfilters.map((text) => parseSysfilter(text)),
  ];
  const fields = (names: string[]) => names.map((name) => fieldOf.get(name)).filter((c) => c !== undefined);
  const filtered = fields(filters.flatMap(topConditions));
  const named = fields(filters.flatMap(namedAttributes));
  const ordered = fields(client.orders.flatMap((text) => parseOrder(text).map((item) => item.attr.name)));
  if (filters.length === 0 && (ordered.length === 0 || client.sysorders.length > 0)) return undefined;
  const leading = new Set(resource.table.indexes.map((index) => index.columns[0]));
  if (filtered.some((c) => leading.has(c))) return undefined;
  const firstOrdered = ordered[0];
  if (filters.length === 0 && firstOrdered !== undefined && leading.has(firstOrdered)) return undefined;
  const wanted = filtered[0] ?? named.find((c) => !leading.has(c)) ?? named[0] ?? ordered[0];
  return wanted === undefined ? undefined : `${resource.table.name}(${wanted})`;
}

/** Every attribute a filter names. */
function namedAttributes(node: FilterNode): string[] {
  switch (node.type) {
    case "and":
    case "or":
      return node.items.flatMap(namedAttributes);
    case "not":
      return namedAttributes(node.item);
    default:
      return [node.attr.name];
  }
}

/** The attributes with a comparison or `in` that every row the filter keeps satisfies. */
function topConditions(node: FilterNode): string[] {
  switch (node.type) {
    case "and":
      return node.items.flatMap(topConditions);
    case "compare":
      return node.upper || node.op === "<>" ? [] : [node.attr.name];
    case "in":
      return node.negated ? [] : [node.attr.name];
    default:
      return [];
  }
}
