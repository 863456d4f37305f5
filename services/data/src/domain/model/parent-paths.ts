/**
 * Parents more than one level up (docs/rules.md#parents): what rule code
 * reads through a chain of parent roles (`row.order.customer.region`), as the
 * attributes the rule depends on and the role paths whose rows the rule needs.
 *
 * A dependency is written as a dotted path from the rule's row: `qty` (an own
 * column), `order.paid` (a parent's column), `order.customer.region` (a
 * grand-parent's column). A role path names a parent row the same way:
 * `order`, `order.customer`. Pure functions of the compiled tables.
 */

import { present } from "../../../../../shared/present.ts";
import type { Relationship, TableModel } from "./table-model.ts";

/** What one chain of names read from `row` means. */
export interface ChainReads {
  /** Dependencies (dotted paths): the column read, plus the foreign keys that choose each parent on the way. */
  deps: string[];
  /** Role paths of the parents on the way (`order`, `order.customer`). */
  roles: string[];
  /** The first name that is neither a column nor a parent role of its table, if any. */
  unknown?: { name: string; table: TableModel; path: string[] };
}

/**
 * Follows `chain` from `table`: role names descend to the parent, the first
 * column name ends it (what follows is a property of the value), and a chain
 * that ends on a role reads that parent whole (every column).
 */
export function readChain(tables: Map<string, TableModel>, table: TableModel, chain: string[]): ChainReads {
  const out: ChainReads = { deps: [], roles: [] };
  const prefix: string[] = [];
  const at = (name: string) => [...prefix, name].join(".");
  let current = table;
  for (const [i, name] of chain.entries()) {
    if (current.columns.has(name)) {
      out.deps.push(at(name));
      return out;
    }
    const rel = current.parents.get(name);
    const parent = rel && tables.get(rel.parentTable);
    if (!rel || !parent) {
      out.unknown = { name, table: current, path: [...prefix, name] };
      return out;
    }
    // The foreign key decides which parent is read.
    for (const c of rel.childColumns) out.deps.push(at(c));
    prefix.push(name);
    out.roles.push(prefix.join("."));
    current = parent;
    if (i === chain.length - 1) for (const c of parent.columns.keys()) out.deps.push(at(c));
  }
  return out;
}

/** Where a dependency leads: the relationships followed from the rule's table, the table reached and its column. */
export interface DepTarget {
  rels: Relationship[];
  table: TableModel;
  column: string;
}

/** Resolves a dependency written by `readChain` (undefined if a name no longer resolves). */
export function depTarget(
  tables: Map<string, TableModel>,
  table: TableModel,
  dep: string,
): DepTarget | undefined {
  const names = dep.split(".");
  const column = present(names.pop(), "a dependency's column");
  const rels: Relationship[] = [];
  let current = table;
  for (const role of names) {
    const rel = current.parents.get(role);
    const parent = rel && tables.get(rel.parentTable);
    if (!rel || !parent) return undefined;
    rels.push(rel);
    current = parent;
  }
  return current.columns.has(column) ? { rels, table: current, column } : undefined;
}

/** Role paths as a tree: `order`, `order.customer` → {order: {customer: {}}}. */
export type RoleTree = Map<string, RoleTree>;

export function roleTree(paths: Iterable<string>): RoleTree {
  const root: RoleTree = new Map();
  for (const path of paths) {
    let node = root;
    for (const role of path.split(".")) {
      let next = node.get(role);
      if (!next) {
        next = new Map();
        node.set(role, next);
      }
      node = next;
    }
  }
  return root;
}
