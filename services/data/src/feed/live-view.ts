/**
 * What one live subscriber may see of a change-feed event: the read path's own
 * rules, per event. The event's table must be the resource's; the key's roles
 * must grant read (domain/read/authorization.ts); the row (a delete: the row as it
 * was) must match the query a GET of the same resource with the same
 * parameters would send the store (domain/read/query-builder.ts: the client's
 * filters and the roles' row filters with the key's globals), evaluated on the
 * row itself (store/mongo-filter.ts); the object shows the columns a GET shows (domain/read/representation.ts).
 */

import type { ProjectModel, ResourceModel } from "../domain/model/project-model.ts";
import { type Principal, requirePermission } from "../domain/read/authorization.ts";
import { buildQuery, type ClientQuery } from "../domain/read/query-builder.ts";
import { type Addressing, toWire, type WireObject } from "../domain/read/representation.ts";
import type { FeedEvent } from "../store/change-feed.ts";
import { rowMatcher } from "../store/mongo-filter.ts";

export interface LiveScope {
  project: ProjectModel;
  principal: Principal;
  addressing: Addressing;
}

/** The subscriber's view of an event: the object to send, or null when it may not see it. */
export type LiveView = (event: FeedEvent) => WireObject | null;

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
  return (event) => {
    const doc = event.row ?? event.oldRow;
    if (event.table !== resource.table.name || !doc || !matches(doc)) return null;
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
}
