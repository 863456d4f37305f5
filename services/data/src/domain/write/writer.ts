/**
 * POST / PUT / DELETE of a resource: validates and plans every object of the
 * request (actions INSERT, UPDATE, DELETE, MERGE_INSERT, LOOKUP; nested children
 * and parents), then commits the plan as one unit. Its result is the committed
 * plan; write-answer.ts renders the answer from it.
 */
import { type ApiError, errors } from "../../../../../shared/errors.ts";
import { present } from "../../../../../shared/present.ts";
import type { RowDocument, RowWrite, TenantRows, WriteLoop, WriteQuota } from "../../store/tenant-rows.ts";
import type { AccessLevel } from "../definition/project-definition.ts";
import { coerceValue, isPlainObject, parseKeySegment, rowId } from "../model/column-values.ts";
import {
  type ProjectModel,
  type Relationship,
  type ResourceModel,
  resourceOfTable,
  type TableModel,
  type VersionModel,
} from "../model/project-model.ts";
import { columnNamed } from "../model/table-model.ts";
import { type Permission, type Principal, requirePermission } from "../read/authorization.ts";
import { childrenQuery, rowFilterQuery } from "../read/query-builder.ts";
import { type Addressing, checksumOf } from "../read/representation.ts";
import { ALL_ROWS, and, byId, columnsEqual } from "../read/row-filters.ts";
import { newRowValues } from "./new-row.ts";
import { newChecksum, WritePlan } from "./write-plan.ts";

export const ACTIONS = ["INSERT", "UPDATE", "DELETE", "MERGE_INSERT", "LOOKUP"] as const;
type Action = (typeof ACTIONS)[number];

export const MAX_OBJECTS_PER_REQUEST = 1000;

export interface WriteRequest {
  project: ProjectModel;
  principal: Principal;
  resource: ResourceModel;
  addressing: Addressing;
  method: "POST" | "PUT" | "DELETE";
  body?: unknown;
  /** Key from the URL (PUT / DELETE of one object). */
  urlKey?: Record<string, unknown>;
  /** DELETE's `checksum` parameter. */
  checksum?: string;
  ignoreDeleted?: boolean;
  /** The limits of the account's plan the write is held to (none: no limits). */
  quota?: WriteQuota;
}

/** What a committed write leaves for its answer (write-answer.ts renders it). */
export interface WriteResult {
  request: WriteRequest;
  /** The committed plan: each changed row in answer order, and the rules that ran for it (the logic engine's). */
  plan: WritePlan;
  /** How many times the request was planned (more than 1 after write conflicts on rows it did not address). */
  attempts: number;
}

/** What the logic engine learns about the request besides the plan. */
export interface PlanContext {
  /** The resource the client wrote to. */
  resource: ResourceModel;
  version: VersionModel;
}

/** Hook for the logic engine: runs after the client's objects are planned and before the commit. */
export type PlanExtension = (plan: WritePlan, principal: Principal, context: PlanContext) => Promise<unknown>;

interface Ctx {
  store: TenantRows;
  req: WriteRequest;
  plan: WritePlan;
  objectCount: number;
}

/**
 * Plans the request, lets the logic engine extend the plan, and commits it
 * through the write loop (store/write-loop.ts), which plans it again when another
 * request wrote the same rows meanwhile.
 */
export async function executeWrite(
  store: TenantRows,
  loop: WriteLoop,
  req: WriteRequest,
  extend?: PlanExtension,
): Promise<WriteResult> {
  const version = present(req.project.versions.get(req.addressing.version), "the request's version");
  const { value: plan, attempts } = await loop.run(
    req.project.storage,
    async () => {
      const plan = new WritePlan(store, req.project);
      await planRequest({ store, req, plan, objectCount: 0 });
      if (extend) await extend(plan, req.principal, { resource: req.resource, version });
      return {
        writes: plan.writes(),
        value: plan,
        duplicate: (write) => duplicateKey(plan, write),
        rulesOf: (write) => rulesOfWrite(plan, write),
      };
    },
    req.quota,
  );
  return { request: req, plan, attempts };
}

async function planRequest(ctx: Ctx): Promise<void> {
  const { req } = ctx;
  if (req.method === "DELETE") {
    if (!req.urlKey) throw errors.malformed("DELETE needs the key of the object in the URL");
    await deleteByKey(ctx, req.resource, req.urlKey, req.checksum, req.ignoreDeleted ?? false);
    return;
  }
  const objects = Array.isArray(req.body) ? req.body : [req.body];
  if (objects.length === 0) throw errors.malformed("The request body is an empty array");
  if (req.urlKey && objects.length !== 1) throw errors.malformed("PUT to an object's URL takes one object");
  for (const obj of objects) {
    await processObject(ctx, req.resource, obj, req.method === "POST" ? "INSERT" : "UPDATE", {
      urlKey: req.urlKey,
    });
  }
}

/** The names of the rules that ran for the row a planned write changes. */
function rulesOfWrite(plan: WritePlan, write: RowWrite): string[] {
  const row = write.kind === "delete" ? write.before : write.after;
  const change = plan.planned(
    present(plan.project.tables.get(write.table), `table '${write.table}'`),
    row._id,
  );
  return change ? plan.rulesOf(change).map((r) => r.name) : [];
}

interface ObjectContext {
  urlKey?: Record<string, unknown>;
  /** Foreign-key values the container stamps into this (child) object. */
  stamp?: Record<string, unknown>;
}

/** A nested attribute: a child list or a parent object, through a table relationship or a sub-resource. */
interface Nested {
  resource: ResourceModel;
  relationship: Relationship;
  kind: "children" | "parent";
}

function nestedOf(ctx: Ctx, resource: ResourceModel, name: string): Nested | undefined {
  const sub = resource.subresources.find((s) => s.name === `${resource.name}.${name}`);
  if (sub?.via) return { resource: sub, relationship: sub.via.relationship, kind: sub.via.kind };
  if (!resource.isTable) return undefined;
  const version = present(ctx.req.project.versions.get(ctx.req.addressing.version), "the request's version");
  const child = resource.table.children.get(name);
  if (child)
    return { resource: resourceOfTable(version, child.childTable), relationship: child, kind: "children" };
  const parent = resource.table.parents.get(name);
  if (parent)
    return { resource: resourceOfTable(version, parent.parentTable), relationship: parent, kind: "parent" };
  return undefined;
}

interface SplitObject {
  meta: Record<string, unknown>;
  values: Record<string, unknown>;
  nested: { nested: Nested; value: unknown; name: string }[];
}

function splitObject(
  ctx: Ctx,
  resource: ResourceModel,
  obj: Record<string, unknown>,
  permission: Permission,
): SplitObject {
  const rawMeta = obj["@metadata"];
  if (rawMeta !== undefined && !isPlainObject(rawMeta))
    throw errors.malformed("'@metadata' must be an object");
  const values: Record<string, unknown> = {};
  const nested: SplitObject["nested"] = [];
  for (const [name, value] of Object.entries(obj)) {
    if (name === "@metadata") continue;
    const attr = resource.attributeByName.get(name);
    if (attr && (!permission.columns || permission.columns.has(attr.column.name))) {
      values[attr.column.name] = coerceValue(attr.column, value, name);
      continue;
    }
    const n = attr ? undefined : nestedOf(ctx, resource, name);
    if (n) {
      nested.push({ nested: n, value, name });
      continue;
    }
    throw errors.badAttribute(`Unknown attribute '${name}' for resource '${resource.name}'`);
  }
  return { meta: (rawMeta as Record<string, unknown>) ?? {}, values, nested };
}

function actionOf(meta: Record<string, unknown>, fallback: Action): Action {
  const action = meta.action ?? fallback;
  if (typeof action !== "string" || !(ACTIONS as readonly string[]).includes(action)) {
    throw errors.malformed(`'@metadata.action' must be one of ${ACTIONS.join(", ")}`);
  }
  return action as Action;
}

function levelOf(action: Action): AccessLevel {
  return action === "INSERT"
    ? "insert"
    : action === "DELETE"
      ? "delete"
      : action === "LOOKUP"
        ? "read"
        : "update";
}

async function processObject(
  ctx: Ctx,
  resource: ResourceModel,
  obj: unknown,
  fallback: Action,
  oc: ObjectContext,
): Promise<RowDocument | null> {
  if (!isPlainObject(obj))
    throw errors.malformed(`Each object written to '${resource.name}' must be a JSON object`);
  if (++ctx.objectCount > MAX_OBJECTS_PER_REQUEST) {
    throw errors.malformed(`A request may write at most ${MAX_OBJECTS_PER_REQUEST} objects`);
  }
  const rawMeta = isPlainObject(obj["@metadata"]) ? (obj["@metadata"] as Record<string, unknown>) : {};
  const action = actionOf(rawMeta, fallback);
  const level = levelOf(action);
  const permission = requirePermission(ctx.req.project, ctx.req.principal, resource.table, level);
  const split = splitObject(ctx, resource, obj, permission);

  // Parents named inside the object (LOOKUP) stamp their key into this row first.
  const stamp: Record<string, unknown> = { ...oc.stamp };
  for (const n of split.nested.filter((x) => x.nested.kind === "parent")) {
    const parent = await processObject(ctx, n.nested.resource, n.value, "LOOKUP", {});
    if (!parent) throw errors.badAttribute(`'${n.name}' did not resolve to an object`);
    n.nested.relationship.childColumns.forEach((c, i) => {
      stamp[c] = parent[present(n.nested.relationship.parentColumns[i], "a parent column")];
    });
  }
  Object.assign(split.values, stamp);

  let row: RowDocument | null;
  switch (action) {
    case "INSERT":
      row = await insertRow(ctx, resource, split.values);
      break;
    case "UPDATE":
      row = await updateRow(ctx, resource, split, oc.urlKey, true);
      break;
    case "DELETE": {
      const key = keyOf(resource, split, oc.urlKey);
      await deleteByKey(ctx, resource, key, checksumIn(split.meta), false);
      return null;
    }
    case "MERGE_INSERT": {
      const existing = await findByMetaKey(ctx, resource, split, permission);
      if (existing) {
        const asUpdate = { ...split, meta: { ...split.meta, checksum: "override" } };
        row = await updateRow(ctx, resource, asUpdate, rowKeyValues(resource.table, existing), false);
      } else {
        requirePermission(ctx.req.project, ctx.req.principal, resource.table, "insert");
        row = await insertRow(ctx, resource, split.values);
      }
      break;
    }
    case "LOOKUP": {
      const found = await findByMetaKey(ctx, resource, split, permission);
      if (!found) throw errors.badAttribute(`LOOKUP found no object in '${resource.name}'`);
      return found;
    }
  }

  for (const n of split.nested.filter((x) => x.nested.kind === "children")) {
    if (!Array.isArray(n.value)) throw errors.badAttribute(`'${n.name}' must be an array of objects`);
    const childStamp: Record<string, unknown> = {};
    const parentRow = present(row, "the row its children belong to");
    n.nested.relationship.parentColumns.forEach((c, i) => {
      childStamp[present(n.nested.relationship.childColumns[i], "a child column")] = parentRow[c];
    });
    for (const child of n.value) {
      const childMeta = isPlainObject(child) && isPlainObject(child["@metadata"]) ? child["@metadata"] : {};
      const childFallback: Action = (childMeta as Record<string, unknown>).checksum ? "UPDATE" : "INSERT";
      await processObject(ctx, n.nested.resource, child, childFallback, { stamp: childStamp });
    }
  }
  return row;
}

function checksumIn(meta: Record<string, unknown>): string | undefined {
  const c = meta.checksum;
  if (c === undefined) return undefined;
  if (typeof c !== "string") throw errors.malformed("'@metadata.checksum' must be a string");
  return c;
}

function rowKeyValues(table: TableModel, doc: RowDocument): Record<string, unknown> {
  return Object.fromEntries(table.key.map((k) => [k, doc[k]]));
}

/** The key of the object to update/delete: the URL's, else the key attributes, else `@metadata.href`. */
function keyOf(
  resource: ResourceModel,
  split: SplitObject,
  urlKey?: Record<string, unknown>,
): Record<string, unknown> {
  if (urlKey) return urlKey;
  const table = resource.table;
  if (table.key.every((k) => split.values[k] !== undefined && split.values[k] !== null)) {
    return rowKeyValues(table, split.values as RowDocument);
  }
  const href = split.meta.href;
  if (typeof href === "string") {
    const [path = ""] = href.split("?");
    const segment = path.split("/").pop() ?? "";
    return parseKeySegment(table, segment);
  }
  throw errors.malformed(
    `An object to update or delete in '${resource.name}' needs its key or '@metadata.href'`,
  );
}

async function loadVisible(
  ctx: Ctx,
  resource: ResourceModel,
  level: AccessLevel,
  key: Record<string, unknown>,
): Promise<RowDocument | null> {
  const table = resource.table;
  const id = rowId(table, key);
  const doc = await ctx.plan.current(table, id);
  if (!doc) return null;
  const permission = requirePermission(ctx.req.project, ctx.req.principal, table, level);
  const rows = rowFilterQuery(table, permission, ctx.req.principal.globals);
  if (!rows) return doc;
  // A key cannot touch a row its row filter hides: check the row against the filter in the store.
  const visible = await ctx.store.exists(ctx.req.project.storage, table.name, and([byId(id), rows]));
  return visible || ctx.plan.planned(table, id)?.verb === "INSERT" ? doc : null;
}

function describeKey(key: Record<string, unknown>): string {
  return Object.values(key)
    .map((v) => String(v))
    .join(",");
}

async function insertRow(
  ctx: Ctx,
  resource: ResourceModel,
  values: Record<string, unknown>,
): Promise<RowDocument> {
  const table = resource.table;
  const row = await newRowValues(table, values, {
    nextSequence: () => ctx.plan.nextSequence(table),
    missing: (column) => errors.badAttribute(`Attribute '${attributeName(resource, column)}' is required`),
  });
  await checkParentsExist(ctx, table, row);
  const id = rowId(table, row);
  // No read: a stored row with this key fails the commit (duplicateKey below).
  if (ctx.plan.known(table, id)) throw alreadyExists(resource, row as RowDocument);
  const doc = { ...row, _id: id, _ck: newChecksum() } as RowDocument;
  ctx.plan.insert(resource, doc);
  return doc;
}

function alreadyExists(resource: ResourceModel, row: RowDocument): ApiError {
  return errors.badAttribute(
    `An object with key ${describeKey(rowKeyValues(resource.table, row))} already exists in '${resource.name}'`,
  );
}

/** The store refused an insert of the plan for its key: answered in terms of the resource written. */
function duplicateKey(plan: WritePlan, write: RowWrite & { kind: "insert" }): ApiError {
  // plan.writes() builds every insert from a change's `after`, so the change is there.
  const change = present(
    plan.changes.find((c) => c.after === write.after),
    "the change of an insert",
  );
  return alreadyExists(change.resource, write.after);
}

function attributeName(resource: ResourceModel, column: string): string {
  return resource.attributeByColumn.get(column)?.name ?? column;
}

async function checkParentsExist(ctx: Ctx, table: TableModel, row: Record<string, unknown>): Promise<void> {
  for (const rel of table.parents.values()) {
    // A managedParent rule creates a missing parent (logic engine).
    if (managedParent(ctx.req.project, table, rel.role)) continue;
    const values = rel.childColumns.map((c) => row[c]);
    if (values.some((v) => v === undefined || v === null)) continue;
    const parentTable = present(ctx.req.project.tables.get(rel.parentTable), `table '${rel.parentTable}'`);
    const parentKey = Object.fromEntries(rel.parentColumns.map((c, i) => [c, values[i]]));
    if (!(await ctx.plan.current(parentTable, rowId(parentTable, parentKey)))) {
      throw errors.badAttribute(
        `No '${rel.parentTable}' with key ${values.join(",")} exists for '${rel.role}'`,
      );
    }
  }
}

function managedParent(project: ProjectModel, table: TableModel, role: string): boolean {
  return project.rules.some((r) => r.type === "managedParent" && r.table === table.name && r.parent === role);
}

async function updateRow(
  ctx: Ctx,
  resource: ResourceModel,
  split: SplitObject,
  urlKey: Record<string, unknown> | undefined,
  needChecksum: boolean,
): Promise<RowDocument> {
  const table = resource.table;
  const key = keyOf(resource, split, urlKey);
  const checksum = checksumIn(split.meta);
  if (needChecksum && checksum === undefined) {
    throw errors.malformed("'@metadata.checksum' is required to update an object (or 'override')");
  }
  const before = await loadVisible(ctx, resource, "update", key);
  if (!before) throw errors.notFound(`No object with key ${describeKey(key)} in '${resource.name}'`);
  if (checksum !== undefined && checksum !== "override" && checksum !== checksumOf(before)) {
    throw errors.conflict(
      `The checksum of '${resource.name}' ${describeKey(key)} does not match: it was changed since it was read`,
    );
  }
  for (const k of table.key) {
    if (split.values[k] !== undefined && JSON.stringify(split.values[k]) !== JSON.stringify(before[k])) {
      throw errors.badAttribute(`Key attribute '${attributeName(resource, k)}' cannot be changed`);
    }
  }
  for (const [column, value] of Object.entries(split.values)) {
    const c = columnNamed(table, column);
    if ((value === null || value === undefined) && c.required) {
      throw errors.badAttribute(`Attribute '${attributeName(resource, column)}' is required`);
    }
  }
  const after = { ...before, ...split.values, _ck: newChecksum() } as RowDocument;
  const parentChanged = [...table.parents.values()].some((rel) =>
    rel.childColumns.some((c) => split.values[c] !== undefined),
  );
  if (parentChanged) await checkParentsExist(ctx, table, after);
  ctx.plan.update(resource, before, after);
  return after;
}

async function deleteByKey(
  ctx: Ctx,
  resource: ResourceModel,
  key: Record<string, unknown>,
  checksum: string | undefined,
  ignoreDeleted: boolean,
): Promise<void> {
  if (checksum === undefined)
    throw errors.malformed("A checksum is required to delete an object (or 'override')");
  const before = await loadVisible(ctx, resource, "delete", key);
  requirePermission(ctx.req.project, ctx.req.principal, resource.table, "delete");
  if (!before) {
    if (ignoreDeleted) return;
    throw errors.notFound(`No such object: key ${describeKey(key)} in '${resource.name}'`);
  }
  if (checksum !== "override" && checksum !== checksumOf(before)) {
    throw errors.conflict(
      `The checksum of '${resource.name}' ${describeKey(key)} does not match: it was changed since it was read`,
    );
  }
  await checkNoChildren(ctx, resource.table, before);
  ctx.plan.delete(resource, before);
}

async function checkNoChildren(ctx: Ctx, table: TableModel, doc: RowDocument): Promise<void> {
  for (const rel of table.children.values()) {
    if (await ctx.store.exists(ctx.req.project.storage, rel.childTable, childrenQuery(rel, doc))) {
      throw errors.badAttribute(
        `'${table.name}' ${describeKey(rowKeyValues(table, doc))} cannot be deleted: it has '${rel.childrenName}'`,
      );
    }
  }
}

/** MERGE_INSERT / LOOKUP: find the one row whose `@metadata.key` attributes equal the object's values. */
async function findByMetaKey(
  ctx: Ctx,
  resource: ResourceModel,
  split: SplitObject,
  permission: Permission,
): Promise<RowDocument | null> {
  const rawKey = split.meta.key;
  const names = typeof rawKey === "string" ? [rawKey] : rawKey;
  if (!Array.isArray(names) || names.length === 0 || !names.every((n) => typeof n === "string")) {
    throw errors.malformed("'@metadata.key' must name the attribute(s) to look up by");
  }
  const columns: string[] = [];
  const values: unknown[] = [];
  for (const name of names as string[]) {
    const attr = resource.attributeByName.get(name);
    if (!attr) throw errors.badAttribute(`'@metadata.key' names unknown attribute '${name}'`);
    const value = split.values[attr.column.name];
    if (value === undefined)
      throw errors.badAttribute(`The object needs a value for key attribute '${name}'`);
    columns.push(attr.column.name);
    values.push(value);
  }
  const rows = rowFilterQuery(resource.table, permission, ctx.req.principal.globals);
  const found = await ctx.store.find(
    ctx.req.project.storage,
    resource.table.name,
    and([columnsEqual(columns, values), rows ?? ALL_ROWS]),
    {
      limit: 2,
    },
  );
  if (found.length > 1)
    throw errors.badAttribute(`'@metadata.key' matches more than one object in '${resource.name}'`);
  if (found[0]) ctx.plan.remember(resource.table, found[0]);
  return found[0] ? ((await ctx.plan.current(resource.table, found[0]._id)) ?? null) : null;
}
