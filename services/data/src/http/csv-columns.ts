/**
 * The columns of a resource's CSV, from the model (so an empty page still has
 * its header and every row the same columns): the attributes the key may read,
 * then each parent sub-resource's flattened under `<name>.<attribute>`, to any
 * depth. Child collections (arrays) have no place in one row per object and are
 * left out; they are addressable on their own (`Customers.Orders`).
 */
import type { ResourceModel } from "../domain/model/project-model.ts";
import type { AccessView } from "./access-view.ts";
import type { CsvColumn } from "./csv-writer.ts";

export function resourceCsvColumns(
  resource: ResourceModel,
  access: AccessView,
  prefix: string[] = [],
): CsvColumn[] {
  const permission = access(resource.table, "read");
  if (!permission) return [];
  const columns: CsvColumn[] = [];
  for (const attr of resource.attributes) {
    if (permission.columns && !permission.columns.has(attr.column.name)) continue;
    const path = [...prefix, attr.name];
    columns.push({ header: path.join("."), path });
  }
  for (const sub of resource.subresources) {
    if (sub.via?.kind !== "parent") continue;
    columns.push(...resourceCsvColumns(sub, access, [...prefix, sub.name.slice(resource.name.length + 1)]));
  }
  return columns;
}
