/**
 * GET of a resource: one query for the page (pagesize + 1 rows to know whether
 * more exist), then one query per nested level for the whole page, never one
 * per row. Deep pages in key order use a keyset position instead of skip.
 */
import type { Document } from "mongodb";
import type { RowDocument, TenantStore } from "../store/tenant-store.ts";
import { type Permission, type Principal, permissionFor, requirePermission } from "./authorization.ts";
import type { ProjectModel, ResourceModel } from "./project-model.ts";
import {
  afterKey,
  and,
  buildQuery,
  buildSort,
  type ClientQuery,
  isKeyOrder,
  rowFilterQuery,
} from "./query-builder.ts";
import { type Addressing, collectionHref, equalsFilter, toWire, type WireObject } from "./representation.ts";
import { rowId } from "./values.ts";

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
  nometa: boolean;
  /** Builds the next_batch URL for the given offset and keyset position. */
  nextBatchUrl: (offset: number, pagekey: unknown[] | undefined) => string;
}

export async function readResource(store: TenantStore, req: ReadRequest): Promise<WireObject[]> {
  const { project, principal, resource } = req;
  const permission = requirePermission(project, principal, resource.table, "read");
  const collection = store.rows(project.account, project.name, resource.table.name);
  let query = buildQuery(resource, permission, principal.globals, req.client);
  const sort = buildSort(resource, permission, req.client);
  let skip = req.offset;
  if (req.key) {
    query = and([{ _id: rowId(resource.table, req.key) }, query]);
    skip = 0;
  } else if (req.pagekey && isKeyOrder(resource.table, sort)) {
    query = and([query, afterKey(resource.table, req.pagekey)]);
    skip = 0;
  }
  const docs = await collection
    .find(query, { sort, skip, limit: req.pagesize + 1, maxTimeMS: store.queryTimeoutMs })
    .toArray();
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
    const last = page[page.length - 1]!;
    const pagekey = isKeyOrder(resource.table, sort) ? resource.table.key.map((k) => last[k]) : undefined;
    objects.push({ "@metadata": { next_batch: req.nextBatchUrl(req.offset + req.pagesize, pagekey) } });
  }
  return objects;
}

/** Adds each sub-resource to the page's objects with one query per sub-resource. */
async function attachSubresources(
  store: TenantStore,
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
      const ids = unique(docs.map((d) => parentIdOf(rel.childColumns, d)).filter((x) => x !== undefined));
      const query = and([
        { _id: { $in: ids } },
        rowFilterQuery(sub.table, permission, req.principal.globals) ?? {},
      ]);
      const parents = await store
        .rows(req.project.account, req.project.name, sub.table.name)
        .find(query, { maxTimeMS: store.queryTimeoutMs })
        .toArray();
      const byId = new Map(parents.map((p) => [idText(p._id), p]));
      const pageParents: RowDocument[] = [];
      const pageObjects: WireObject[] = [];
      docs.forEach((d, i) => {
        const parent = byId.get(idText(parentIdOf(rel.childColumns, d)));
        if (!parent) {
          objects[i]![name] = null;
          return;
        }
        const wire = toWire(req.addressing, sub, parent, {
          nometa: req.nometa,
          visibleColumns: permission.columns,
          tables: req.project.tables,
        });
        objects[i]![name] = wire;
        pageParents.push(parent);
        pageObjects.push(wire);
      });
      await attachSubresources(store, req, sub, pageParents, pageObjects);
    }
  }
}

async function attachChildren(
  store: TenantStore,
  req: ReadRequest,
  sub: ResourceModel,
  permission: Permission,
  docs: RowDocument[],
  objects: WireObject[],
  name: string,
): Promise<void> {
  const rel = sub.via!.relationship;
  const fkQuery: Document =
    rel.childColumns.length === 1
      ? { [rel.childColumns[0]!]: { $in: unique(docs.map((d) => d[rel.parentColumns[0]!])) } }
      : {
          $or: docs.map((d) =>
            Object.fromEntries(rel.childColumns.map((c, i) => [c, { $eq: d[rel.parentColumns[i]!] }])),
          ),
        };
  const clientQuery = { filters: [], sysfilters: [], orders: [], sysorders: [] };
  const query = and([fkQuery, buildQuery(sub, permission, req.principal.globals, clientQuery)]);
  const sort = buildSort(sub, permission, clientQuery);
  const children = await store
    .rows(req.project.account, req.project.name, sub.table.name)
    .find(query, { sort, limit: (req.pagesize + 1) * docs.length, maxTimeMS: store.queryTimeoutMs })
    .toArray();
  const groups = new Map<string, RowDocument[]>();
  for (const child of children) {
    const k = idText(rel.childColumns.map((c) => child[c]));
    const list = groups.get(k) ?? [];
    list.push(child);
    groups.set(k, list);
  }
  const allChildren: RowDocument[] = [];
  const allObjects: WireObject[] = [];
  docs.forEach((d, i) => {
    const list = groups.get(idText(rel.parentColumns.map((c) => d[c]))) ?? [];
    const kept = list.slice(0, req.pagesize);
    const wires = kept.map((c) =>
      toWire(req.addressing, sub, c, {
        nometa: req.nometa,
        visibleColumns: permission.columns,
        tables: req.project.tables,
      }),
    );
    if (list.length > req.pagesize && !req.nometa) {
      const fk = rel.childColumns.map((c, j) => equalsFilter(c, d[rel.parentColumns[j]!])).join(" and ");
      const filterable = rel.childColumns.every((c) => sub.attributeByName.get(c)?.column.name === c);
      if (filterable) {
        const url = `${collectionHref(req.addressing, sub.name)}?filter=${encodeURIComponent(fk)}`;
        wires.push({ "@metadata": { next_batch: url } });
      }
    }
    objects[i]![name] = wires;
    allChildren.push(...kept);
    allObjects.push(...wires.slice(0, kept.length));
  });
  await attachSubresources(store, req, sub, allChildren, allObjects);
}

function parentIdOf(columns: string[], doc: RowDocument): unknown {
  const values = columns.map((c) => doc[c]);
  if (values.some((v) => v === null || v === undefined)) return undefined;
  return values.length === 1 ? values[0] : JSON.stringify(values);
}

function idText(id: unknown): string {
  return JSON.stringify(id);
}

function unique<T>(values: T[]): T[] {
  const seen = new Map<string, T>();
  for (const v of values) seen.set(JSON.stringify(v), v);
  return [...seen.values()];
}
