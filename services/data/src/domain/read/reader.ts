/**
 * GET of a resource: one query for the page (pagesize + 1 rows to know whether
 * more exist), then one query per nested level for the whole page, not one per
 * row (plus at most one per parent with more children than a page; see
 * firstChildren). Deep pages use a keyset position instead of skip when the order's columns
 * allow one (query-builder.ts isKeysetOrder): the key's order, and orders on required columns.
 *
 * Each parent's children are paged on their own: a parent shows up to
 * pagesize children and, when it has more, a next_batch that lists the rest of
 * them (the nested resource read alone, restricted to that parent).
 */
import { errors } from "../../../../../shared/errors.ts";
import { present } from "../../../../../shared/present.ts";
import type { RowDocument, RowFilter, RowId, TenantRows } from "../../store/tenant-rows.ts";
import { distinctByJson, keySegment, parseKeySegment, rowId } from "../model/column-values.ts";
import type { ProjectModel, ResourceModel } from "../model/project-model.ts";
import { type Permission, type Principal, permissionFor, requirePermission } from "./authorization.ts";
import {
  afterKey,
  buildQuery,
  buildSort,
  type ClientQuery,
  childrenOfAnyQuery,
  childrenQuery,
  isKeysetOrder,
  pagekeyAfter,
  rowFilterQuery,
  type SortSpec,
} from "./query-builder.ts";
import { type Addressing, toWire, type WireObject } from "./representation.ts";
import { ALL_ROWS, and, byId, byIds } from "./row-filters.ts";

export interface ReadRequest {
  project: ProjectModel;
  principal: Principal;
  resource: ResourceModel;
  addressing: Addressing;
  /** GET by key: the typed key values. */
  key?: Record<string, unknown>;
  client: ClientQuery;
  pagesize: number;
  offset: number;
  /** Keyset position from a previous page's next_batch (key values of its last row). */
  pagekey?: unknown[];
  /** Nested resource of children only: the key of the container row whose children to list. */
  parent?: Record<string, unknown>;
  nometa: boolean;
  /** Builds the next_batch URL for the given offset and keyset position. */
  nextBatchUrl: (offset: number, pagekey: unknown[] | undefined) => string;
  /** Builds the next_batch URL of one parent's children: `sub` read alone, restricted to that parent. */
  childrenBatchUrl: (
    sub: ResourceModel,
    parent: string,
    offset: number,
    pagekey: unknown[] | undefined,
  ) => string;
}

const NO_CLIENT_QUERY: ClientQuery = { filters: [], sysfilters: [], orders: [], sysorders: [] };

/** The typed key of the container row named by the `parent` parameter of a nested resource of children. */
export function parseParentKey(resource: ResourceModel, raw: string): Record<string, unknown> {
  if (resource.via?.kind !== "children") {
    throw errors.malformed(
      `Parameter 'parent' applies to nested resources that list a parent's children, not to '${resource.name}'`,
    );
  }
  return parseKeySegment(resource.via.container.table, raw);
}

/**
 * What a read asks of the store before any query: the key's permission (403), the row filter and
 * the sort (400 for a filter or an order that does not compile).
 */
export function planRead(req: ReadRequest): { permission: Permission; query: RowFilter; sort: SortSpec } {
  const { project, principal, resource } = req;
  const permission = requirePermission(project, principal, resource.table, "read");
  const query = buildQuery(resource, permission, principal.globals, req.client);
  return { permission, query, sort: buildSort(resource, permission, req.client) };
}

export async function readResource(store: TenantRows, req: ReadRequest): Promise<WireObject[]> {
  const { project, resource } = req;
  const planned = planRead(req);
  const { permission, sort } = planned;
  let query = planned.query;
  if (req.parent) {
    const children = await childrenOfVisibleParent(store, req, resource, req.parent);
    if (!children) return [];
    query = and([children, query]);
  }
  let skip = req.offset;
  if (req.key) {
    query = and([byId(rowId(resource.table, req.key)), query]);
    skip = 0;
  } else if (req.pagekey && isKeysetOrder(resource.table, sort)) {
    query = and([query, afterKey(sort, req.pagekey)]);
    skip = 0;
  }
  const docs = await store.find(project.storage, resource.table.name, query, {
    sort,
    skip,
    limit: req.pagesize + 1,
  });
  const more = docs.length > req.pagesize;
  const page = more ? docs.slice(0, req.pagesize) : docs;
  const objects = page.map((doc) =>
    toWire(req.addressing, resource, doc, {
      nometa: req.nometa,
      visibleColumns: permission.columns,
      tables: project.tables,
    }),
  );
  await attachSubresources(store, req, resource, page, objects);
  if (more && !req.key) {
    const last = present(page.at(-1), "the page's last row");
    const pagekey = pagekeyAfter(resource.table, sort, last);
    objects.push({ "@metadata": { next_batch: req.nextBatchUrl(req.offset + req.pagesize, pagekey) } });
  }
  return objects;
}

/**
 * The condition for the children of one container row, or null when the key
 * may not read that row through the container resource: listing them shows
 * nothing the container resource with its nested children would not show.
 */
async function childrenOfVisibleParent(
  store: TenantRows,
  req: ReadRequest,
  resource: ResourceModel,
  parentKey: Record<string, unknown>,
): Promise<RowFilter | null> {
  const { relationship: rel, container } = present(resource.via, "a subresource's relationship");
  const permission = permissionFor(req.project, req.principal, container.table, "read");
  if (!permission) return null;
  const visible = and([
    byId(rowId(container.table, parentKey)),
    buildQuery(container, permission, req.principal.globals, NO_CLIENT_QUERY),
  ]);
  if (!(await store.exists(req.project.storage, container.table.name, visible))) return null;
  return childrenQuery(rel, parentKey);
}

/** Adds each sub-resource to the page's objects with one query per sub-resource. */
async function attachSubresources(
  store: TenantRows,
  req: ReadRequest,
  container: ResourceModel,
  docs: RowDocument[],
  objects: WireObject[],
): Promise<void> {
  if (docs.length === 0) return;
  for (const sub of container.subresources) {
    const permission = permissionFor(req.project, req.principal, sub.table, "read");
    if (!permission || !sub.via) continue;
    const name = sub.name.slice(container.name.length + 1);
    const rel = sub.via.relationship;
    if (sub.via.kind === "children") {
      await attachChildren(store, req, sub, permission, docs, objects, name);
    } else {
      // The container row holds the foreign key; the parent is one object (or null).
      const ids = distinctByJson(
        docs.map((d) => parentIdOf(rel.childColumns, d)).filter((x) => x !== undefined),
      );
      const query = and([
        byIds(ids as RowId[]),
        rowFilterQuery(sub.table, permission, req.principal.globals) ?? ALL_ROWS,
      ]);
      const parents = await store.find(req.project.storage, sub.table.name, query);
      const byId = new Map(parents.map((p) => [idText(p._id), p]));
      const pageParents: RowDocument[] = [];
      const pageObjects: WireObject[] = [];
      docs.forEach((d, i) => {
        const parent = byId.get(idText(parentIdOf(rel.childColumns, d)));
        const object = present(objects[i], "a row's object");
        if (!parent) {
          object[name] = null;
          return;
        }
        const wire = toWire(req.addressing, sub, parent, {
          nometa: req.nometa,
          visibleColumns: permission.columns,
          tables: req.project.tables,
        });
        object[name] = wire;
        pageParents.push(parent);
        pageObjects.push(wire);
      });
      await attachSubresources(store, req, sub, pageParents, pageObjects);
    }
  }
}

async function attachChildren(
  store: TenantRows,
  req: ReadRequest,
  sub: ResourceModel,
  permission: Permission,
  docs: RowDocument[],
  objects: WireObject[],
  name: string,
): Promise<void> {
  const { relationship: rel, container } = present(sub.via, "a subresource's relationship");
  const sort = buildSort(sub, permission, NO_CLIENT_QUERY);
  const found = await firstChildren(store, req, sub, permission, sort, docs);
  const allChildren: RowDocument[] = [];
  const allObjects: WireObject[] = [];
  docs.forEach((d, i) => {
    const list = found.get(idText(rel.parentColumns.map((c) => d[c]))) ?? [];
    const kept = list.slice(0, req.pagesize);
    const wires = kept.map((c) =>
      toWire(req.addressing, sub, c, {
        nometa: req.nometa,
        visibleColumns: permission.columns,
        tables: req.project.tables,
      }),
    );
    present(objects[i], "a row's object")[name] = wires;
    allChildren.push(...kept);
    allObjects.push(...wires);
    if (list.length > req.pagesize) {
      const last = present(kept.at(-1), "the page's last child");
      const pagekey = pagekeyAfter(sub.table, sort, last);
      const url = req.childrenBatchUrl(sub, keySegment(container.table, d), req.pagesize, pagekey);
      wires.push({ "@metadata": { next_batch: url } });
    }
  });
  await attachSubresources(store, req, sub, allChildren, allObjects);
}

/**
 * The first pagesize + 1 children of each parent (one more than shown, to know
 * whether more exist), in the level's order, keyed by the parent's key. One
 * query sorted by foreign key first, limited to pagesize + 1 rows per parent,
 * gets them all unless a parent with more children than that takes up the
 * limit; then the parents it crowded out are queried again, together. The limit
 * can only be reached when a pending parent has more than a page of children,
 * and each such round settles at least the first of them, so a level costs one
 * query plus at most one per parent whose children do not fit in a page.
 */
async function firstChildren(
  store: TenantRows,
  req: ReadRequest,
  sub: ResourceModel,
  permission: Permission,
  sort: SortSpec,
  docs: RowDocument[],
): Promise<Map<string, RowDocument[]>> {
  const rel = present(sub.via, "a subresource's relationship").relationship;
  const want = req.pagesize + 1;
  const filter = buildQuery(sub, permission, req.principal.globals, NO_CLIENT_QUERY);
  const byParent: SortSpec = [
    ...rel.childColumns.map((c): [string, 1] => [c, 1]),
    ...sort.filter(([field]) => !rel.childColumns.includes(field)),
  ];
  const parentOf = (child: RowDocument) => idText(rel.childColumns.map((c) => child[c]));
  const found = new Map<string, RowDocument[]>();
  let pending = distinctByJson(docs.map((d) => rel.parentColumns.map((c) => d[c])));
  while (pending.length > 0) {
    const limit = want * pending.length;
    const children = await store.find(
      req.project.storage,
      sub.table.name,
      and([childrenOfAnyQuery(rel, pending), filter]),
      { sort: byParent, limit },
    );
    const groups = new Map<string, RowDocument[]>();
    for (const child of children) {
      const k = parentOf(child);
      const list = groups.get(k) ?? [];
      list.push(child);
      groups.set(k, list);
    }
    // Cut off by the limit: the last parent's children may go on, and parents not reached may have some.
    const cut = children.length === limit ? parentOf(present(children.at(-1), "the last child")) : undefined;
    const next: unknown[][] = [];
    for (const values of pending) {
      const k = idText(values);
      const list = groups.get(k) ?? [];
      const settled = cut === undefined || list.length >= want || (list.length > 0 && k !== cut);
      if (settled) found.set(k, list.slice(0, want));
      else next.push(values);
    }
    pending = next;
  }
  return found;
}

function parentIdOf(columns: string[], doc: RowDocument): unknown {
  const values = columns.map((c) => doc[c]);
  if (values.some((v) => v === null || v === undefined)) return undefined;
  return values.length === 1 ? values[0] : JSON.stringify(values);
}

function idText(id: unknown): string {
  return JSON.stringify(id);
}
