/**
 * The parent rows rule code reads, fetched for many rows at once: the direct
 * parents of every row of a sandbox call, then their parents, and so on
 * (`row.order`, `row.order.customer`), with one query per table and level for
 * the rows the request has not read yet; and the rows further down that a
 * change of a grand-parent reaches (its children's children, one query per
 * level).
 */

import { outputValue, rowId } from "../domain/model/column-values.ts";
import { type RoleTree, roleTree } from "../domain/model/parent-paths.ts";
import type { Relationship, TableModel } from "../domain/model/project-model.ts";
import { tableNamed } from "../domain/model/table-model.ts";
import { childrenOfAnyQuery } from "../domain/read/query-builder.ts";
import { parentIdOf, type WritePlan } from "../domain/write/write-plan.ts";
import type { RowDocument, RowId } from "../store/tenant-rows.ts";
import type { RuleRow } from "./program.ts";

/** A row as rule code sees it: column names, output values. */
export function toRuleRow(table: TableModel, doc: RowDocument): RuleRow {
  const out: RuleRow = {};
  for (const [c, column] of table.columns) out[c] = outputValue(column, doc[c]);
  return out;
}

/** A rule row that still needs the parents its rules read (role paths). */
export interface ParentTarget {
  table: TableModel;
  doc: RowDocument;
  roles: ReadonlySet<string>;
  row: RuleRow;
}

const trees = new WeakMap<ReadonlySet<string>, RoleTree>();

function treeOf(roles: ReadonlySet<string>): RoleTree {
  let tree = trees.get(roles);
  if (!tree) {
    tree = roleTree(roles);
    trees.set(roles, tree);
  }
  return tree;
}

interface Level {
  table: TableModel;
  doc: RowDocument;
  tree: RoleTree;
  row: RuleRow;
}

/** Sets `row.<role>` (nested for role paths) on every target: the parent as the request sees it, or null. */
export async function attachParents(plan: WritePlan, targets: ParentTarget[]): Promise<void> {
  const tables = plan.project.tables;
  let level: Level[] = targets
    .filter((t) => t.roles.size > 0)
    .map((t) => ({ table: t.table, doc: t.doc, tree: treeOf(t.roles), row: t.row }));
  while (level.length > 0) {
    const links: { from: Level; role: string; sub: RoleTree; parent: TableModel; id: RowId | null }[] = [];
    const wanted = new Map<TableModel, RowId[]>();
    for (const from of level) {
      for (const [role, sub] of from.tree) {
        const rel = from.table.parents.get(role);
        if (!rel) throw new Error(`'${role}' is not a parent role of '${from.table.name}'`);
        const parent = tableNamed(tables, rel.parentTable);
        const id = parentIdOf(parent, rel, from.doc);
        links.push({ from, role, sub, parent, id });
        if (id === null) continue;
        const ids = wanted.get(parent);
        if (ids) ids.push(id);
        else wanted.set(parent, [id]);
      }
    }
    await Promise.all([...wanted].map(([table, ids]) => plan.prefetch(table, ids)));
    const next: Level[] = [];
    for (const { from, role, sub, parent, id } of links) {
      const doc = id === null ? null : await plan.current(parent, id);
      const row = doc ? toRuleRow(parent, doc) : null;
      from.row[role] = row;
      if (doc && row && sub.size > 0) next.push({ table: parent, doc, tree: sub, row });
    }
    level = next;
  }
}

/**
 * The rows `rels` lead down to from `doc` (children of its children…), as
 * this request sees them: stored rows that still point to a parent on the
 * path, plus rows the request moved there or inserted there.
 */
export async function descendantsOf(
  plan: WritePlan,
  rels: readonly Relationship[],
  doc: RowDocument,
): Promise<RowDocument[]> {
  let rows = [doc];
  for (const rel of rels) {
    if (rows.length === 0) break;
    rows = await childrenOfAll(plan, rel, rows);
  }
  return rows;
}

async function childrenOfAll(
  plan: WritePlan,
  rel: Relationship,
  parents: RowDocument[],
): Promise<RowDocument[]> {
  const tables = plan.project.tables;
  const child = tableNamed(tables, rel.childTable);
  const parentTable = tableNamed(tables, rel.parentTable);
  const ids = new Set(parents.map((p) => rowId(parentTable, p)));
  // Rows this request inserted have no stored children.
  const stored = parents.filter((p) => plan.planned(parentTable, rowId(parentTable, p))?.before !== null);
  const keys = stored.map((p) => rel.parentColumns.map((c) => p[c]));
  const docs = keys.length > 0 ? await plan.findStored(child, childrenOfAnyQuery(rel, keys)) : [];
  const out = new Map<RowId, RowDocument>();
  for (const d of docs) {
    const now = await plan.current(child, d._id);
    if (now && isChildOf(ids, parentIdOf(parentTable, rel, now))) out.set(d._id, now);
  }
  for (const c of plan.changesOf(child)) {
    if (c.after && isChildOf(ids, parentIdOf(parentTable, rel, c.after))) out.set(c.id, c.after);
  }
  return [...out.values()];
}

/** Whether a row whose parent is `parentId` (null: none) is a child of one of `parents`. */
function isChildOf(parents: Set<RowId>, parentId: RowId | null): boolean {
  return parentId !== null && parents.has(parentId);
}
