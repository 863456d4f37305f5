/**
 * What one live subscriber may see of a change-feed event: the read path's own
 * rules, per event. The event's table must be the resource's; the key's roles
 * must grant read (domain/read/authorization.ts); the row (a delete: the row as it
 * was) must match the query a GET of the same resource with the same
 * parameters would send the store (domain/read/query-builder.ts: the client's
 * filters and the roles' row filters with the key's globals), evaluated on the
 * row itself; the object shows the columns a GET shows (domain/read/representation.ts).
 */

import type * as Sift from "sift";
import siftDefault from "sift";
import type { ProjectModel, ResourceModel } from "../domain/model/project-model.ts";
import { type Principal, requirePermission } from "../domain/read/authorization.ts";
import { buildQuery, type ClientQuery } from "../domain/read/query-builder.ts";
import { type Addressing, toWire, type WireObject } from "../domain/read/representation.ts";
import type { FeedEvent } from "../store/change-feed.ts";

// sift is CommonJS: its named exports reach an ES module as properties of the default export.
const sift = siftDefault as unknown as typeof Sift;
/** The operators the query translator emits, and no others (sift's `$where` would run code). */
const { $and, $or, $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $regex, $options } = sift;
const QUERY_OPERATIONS = { $and, $or, $eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $regex, $options };

export interface LiveScope {
  project: ProjectModel;
  principal: Principal;
  addressing: Addressing;
}

/** The subscriber's view of an event: the object to send, or null when it may not see it. */
export type LiveView = (event: FeedEvent) => WireObject | null;

/** Throws 403 when the key may not read the resource's table (as a GET would). */
export function liveView(scope: LiveScope, resource: ResourceModel, client: ClientQuery): LiveView {
  const { project, principal, addressing } = scope;
  const permission = requirePermission(project, principal, resource.table, "read");
  const matches = sift.createQueryTester(buildQuery(resource, permission, principal.globals, client), {
    operations: QUERY_OPERATIONS,
  });
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
