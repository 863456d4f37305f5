/**
 * What the explorer knows of a table's or resource's attributes: their types, which are
 * the key, and which a rule computes (`derived`), from `@tables/<name>` and `@resources`.
 * Key attributes cannot change once written, derived ones never: neither is offered for
 * editing.
 */
import { type Client, seg } from "../api.ts";

export interface ColumnInfo {
  name: string;
  /** `string`, `number`, `integer`, `boolean`, `date`, `datetime`, `json` (or unknown: any). */
  type: string;
  required: boolean;
  generated: boolean;
  key: boolean;
  /** The type of the rule that computes it (`sum`, `formula`, …). */
  derived?: string;
}

export interface Collection {
  kind: "table" | "resource";
  name: string;
  /** undefined: a JavaScript resource, whose answer no definition describes (read-only). */
  columns: () => Promise<ColumnInfo[] | undefined>;
  /** Names of the nested child lists in its rows (a custom resource's sub-resources). */
  children: string[];
}

interface TableAnswer {
  columns: { name: string; type: string; required?: boolean; generated?: boolean; derived?: string }[];
  primaryKeyColumns?: string[];
}

interface ResourceAnswer {
  name: string;
  resource_type?: string;
  attributes?: { name: string; type: string; required?: boolean; key?: boolean; derived?: string }[];
  subresources?: string[];
}

/** The version's tables and custom resources. */
export async function loadCollections(client: Client, root: string): Promise<Collection[]> {
  const [tables, resources] = await Promise.all([
    client.call<{ name: string }[]>("GET", `${root}/@tables`),
    client.call<ResourceAnswer[]>("GET", `${root}/@resources`),
  ]);
  const tableColumns = (name: string) => async () => {
    const r = await client.call<TableAnswer>("GET", `${root}/@tables/${seg(name)}`);
    const keys = r.body.primaryKeyColumns ?? [];
    return r.body.columns.map((c) => ({
      name: c.name,
      type: c.type,
      required: c.required ?? false,
      generated: c.generated ?? false,
      key: keys.includes(c.name),
      ...(c.derived ? { derived: c.derived } : {}),
    }));
  };
  return [
    ...tables.body.map(
      (t): Collection => ({
        kind: "table",
        name: t.name,
        columns: tableColumns(t.name),
        children: [],
      }),
    ),
    ...resources.body.map(
      (r): Collection => ({
        kind: "resource",
        name: r.name,
        columns: async () =>
          r.attributes?.map((a) => ({
            name: a.name,
            type: a.type,
            required: a.required ?? false,
            generated: false,
            key: a.key ?? false,
            ...(a.derived ? { derived: a.derived } : {}),
          })),
        children: (r.subresources ?? []).map((sub) => childListName(r.name, sub)),
      }),
    ),
  ];
}

/**
 * The name a sub-resource's list has inside its parent's rows: `@resources` names each
 * sub-resource in full (`Owners.Pets`), a row holds the list under its own name (`Pets`).
 */
export function childListName(parent: string, subresource: string): string {
  return subresource.startsWith(`${parent}.`) ? subresource.slice(parent.length + 1) : subresource;
}

/** Why an attribute cannot be edited in an existing row, if it cannot. */
export function readOnlyReason(column: ColumnInfo): string | undefined {
  if (column.derived) return `computed by a ${column.derived} rule`;
  if (column.key) return "key: cannot change";
  return undefined;
}
