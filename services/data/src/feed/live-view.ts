/**
 * What one live subscriber may see of a change-feed event: the read path's own
 * rules, per event. The event's table must be the resource's; the key's roles
 * must grant read (domain/read/authorization.ts); the row (a delete: the row as it
 * was) must match the query a GET of the same resource with the same
 * parameters would send the store (domain/read/query-builder.ts: the client's
 * filters and the roles' row filters with the key's globals), evaluated on the
 * row itself (store/mongo-filter.ts); the object shows the columns a GET shows (domain/read/representation.ts).
 * An update whose row matched before and no longer does is a `leave`: the row's key
 * and `@metadata` only, nothing of its new state.
 */

import { outputValue } from "../domain/model/column-values.ts";
import type { ProjectModel, ResourceModel } from "../domain/model/project-model.ts";
import { type Principal, requirePermission } from "../domain/read/authorization.ts";
import { buildQuery, type ClientQuery } from "../domain/read/query-builder.ts";
import { type Addressing, objectHref, toWire, type WireObject } from "../domain/read/representation.ts";
import type { FeedEvent } from "../store/change-feed.ts";
import { rowMatcher } from "../store/mongo-filter.ts";
import type { RowDocument } from "../store/tenant-rows.ts";

export interface LiveScope {
  project: ProjectModel;
  principal: Principal;
  addressing: Addressing;
}

/**
 * What a subscriber is sent of an event: a `change` (the object as a GET shows it), a `leave` (a
 * row it saw no longer matches: its key and `@metadata`), or nothing (null).
 */
export interface LiveNotice {
  event: "change" | "leave";
  data: WireObject;
}

/** The subscriber's view of an event. */
export type LiveView = (event: FeedEvent) => LiveNotice | null;

/** Numbers for objects, by identity (a project model, a resource), for view keys. */
const identities = new WeakMap<object, number>();
let lastIdentity = 0;
function identityOf(object: object): number {
  let id = identities.get(object);
  if (id === undefined) {
    id = ++lastIdentity;
    identities.set(object, id);
  }
  return id;
}

/**
 * What makes two views see the same of every event: the same resource of the same project model
 * (a redeployed definition is another model), the same roles, globals and administrator (table
 * access, row filters with their globals, columns), the same addressing (hrefs) and the same client
 * filters. Views with equal keys share their frames (feed/live-frames.ts).
 */
export function liveViewKey(scope: LiveScope, resource: ResourceModel, client: ClientQuery): string {
  const { project, principal, addressing } = scope;
  return JSON.stringify([
    identityOf(project),
    identityOf(resource),
    principal.roles,
    principal.globals,
    principal.administrator ?? null,
    addressing,
    client,
  ]);
}

/** Throws 403 when the key may not read the resource's table (as a GET would). */
export function liveView(scope: LiveScope, resource: ResourceModel, client: ClientQuery): LiveView {
  const { project, principal, addressing } = scope;
  const permission = requirePermission(project, principal, resource.table, "read");
  const matches = rowMatcher(buildQuery(resource, permission, principal.globals, client));
  const keyAttributes = resource.attributes.filter(
    (a) =>
      resource.table.key.includes(a.column.name) &&
      (!permission.columns || permission.columns.has(a.column.name)),
  );
  const noticeOf = (event: FeedEvent, doc: RowDocument): WireObject => {
    const wire = toWire(addressing, resource, doc, {
      nometa: false,
      visibleColumns: permission.columns,
      tables: project.tables,
    });
    const meta: Record<string, unknown> = { ...wire["@metadata"], verb: event.verb, tx: event.tx };
    if (event.verb === "DELETE") delete meta.checksum;
    if (event.rules.length > 0) meta.rules = event.rules;
    return { ...wire, "@metadata": meta };
  };
  const leaveOf = (event: FeedEvent, before: RowDocument): WireObject => {
    const meta: Record<string, unknown> = {
      href: objectHref(addressing, resource, before),
      verb: event.verb,
      tx: event.tx,
    };
    if (event.rules.length > 0) meta.rules = event.rules;
    const key: WireObject = { "@metadata": meta };
    for (const a of keyAttributes) key[a.name] = outputValue(a.column, before[a.column.name]);
    return key;
  };
  return (event) => {
    if (event.table !== resource.table.name) return null;
    const { row, oldRow } = event;
    if (row && matches(row)) return { event: "change", data: noticeOf(event, row) };
    // A delete is told as the row was; an update of a row that matched (before it, as it was) is a leave.
    if (!oldRow || !matches(oldRow)) return null;
    if (event.verb === "DELETE") return { event: "change", data: noticeOf(event, oldRow) };
    return { event: "leave", data: leaveOf(event, oldRow) };
  };
}
