/**
 * The answer of a committed write (writer.ts), rendered in one place: 201 for a POST and 200
 * otherwise, with the txsummary (each changed object in its final state, as the key may read it)
 * unless `txsummary=false`, and with `rulesummary=true` the rules that ran for each object. The
 * version's response events (scripts/) may then change the body, as for any answer.
 */
import { permissionFor } from "../read/authorization.ts";
import { flag, type QueryParams, single } from "../read/query-params.ts";
import { checksumOf, objectHref, toWire, type WireObject } from "../read/representation.ts";
import { type RowChange, rowOfChange, type WritePlan } from "./write-plan.ts";
import type { WriteRequest, WriteResult } from "./writer.ts";

/** What of the answer the client asked for. */
export interface WriteAnswerParts {
  txsummary: boolean;
  rulesummary: boolean;
}

export interface WriteAnswer {
  statusCode: 200 | 201;
  body: { statusCode: 200 | 201; txsummary?: WireObject[]; rulesummary?: unknown[] };
}

/** The parts a write's query parameters ask for (`txsummary`, on unless `false`; `rulesummary`, off unless set). */
export function writeAnswerParts(params: QueryParams): WriteAnswerParts {
  return { txsummary: single(params, "txsummary") !== "false", rulesummary: flag(params, "rulesummary") };
}

export function renderWriteAnswer(result: WriteResult, parts: WriteAnswerParts): WriteAnswer {
  const statusCode = result.request.method === "POST" ? 201 : 200;
  const body: WriteAnswer["body"] = { statusCode };
  if (parts.txsummary) body.txsummary = txsummary(result.request, result.plan.changes);
  if (parts.rulesummary) body.rulesummary = rulesummary(result.request, result.plan);
  return { statusCode, body };
}

/** Per changed object, in txsummary order: the rules that ran for it. */
function rulesummary(req: WriteRequest, plan: WritePlan): unknown[] {
  return plan.changes.map((c) => ({
    "@metadata": {
      href: objectHref(req.addressing, c.resource, rowOfChange(c)),
      resource: c.resource.name,
      verb: c.verb,
    },
    rules: plan.rulesOf(c),
  }));
}

/** Each changed row in its final state, showing only the columns the key may read. */
function txsummary(req: WriteRequest, changes: RowChange[]): WireObject[] {
  return changes.map((c) => {
    const doc = rowOfChange(c);
    const readable = permissionFor(req.project, req.principal, c.table, "read");
    const visibleColumns = readable ? readable.columns : new Set(c.table.key);
    const wire = toWire(req.addressing, c.resource, doc, {
      nometa: true,
      visibleColumns,
      tables: req.project.tables,
    });
    const meta: Record<string, unknown> = {
      href: objectHref(req.addressing, c.resource, doc),
      resource: c.resource.name,
      verb: c.verb,
    };
    if (c.after) meta.checksum = checksumOf(c.after);
    return { "@metadata": meta, ...wire };
  });
}
