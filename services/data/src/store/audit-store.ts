/**
 * The audit trail, in META_DB (collection `audit`): one entry per admin change,
 * appended and never changed. Entries carry the account's name and incarnation,
 * so an account's own listing shows its current incarnation only while the
 * operator can still read those of deleted ones. Entry ids sort by time (the
 * millisecond it was stored, then random digits), which is the listing order.
 */
import { randomBytes } from "node:crypto";
import type { Connection, Model } from "mongoose";
import type { AuditReport } from "../../../../shared/admin-access/audit.ts";
import { metaModel } from "./meta-model.ts";

/** An entry: a report (shared/admin-access/audit.ts) with when it was stored and its account's incarnation. */
export type AuditDoc = Omit<AuditReport, "account" | "accountUid"> & {
  _id: string;
  at: Date;
  /** null for platform-wide changes. */
  account: string | null;
  /** null when the account did not exist (a refused change). */
  accountUid: string | null;
};

/** The smallest entry id of a moment: every entry stored at or after it sorts after this. */
export function auditIdAt(epochMs: number): string {
  return `${String(epochMs).padStart(13, "0")}-`;
}

export const AUDIT_ID = /^\d{13}-[0-9a-f]{12}$/;

export class AuditStore {
  readonly entries: Model<AuditDoc>;
  readonly #now: () => number;

  constructor(connection: Connection, queryTimeoutMs: number, now: () => number = Date.now) {
    this.#now = now;
    this.entries = metaModel<AuditDoc>(
      connection,
      queryTimeoutMs,
      {
        name: "AuditEntry",
        collection: "audit",
        indexes: [
          { accountUid: 1, _id: 1 },
          { account: 1, _id: 1 },
        ],
      },
      {
        _id: String,
        at: Date,
        account: String,
        accountUid: String,
        actor: Object,
        method: String,
        path: String,
        summary: String,
        status: Number,
        errorCode: Number,
        requestId: String,
      },
    );
  }

  async append(entry: Omit<AuditDoc, "_id" | "at">): Promise<void> {
    const at = this.#now();
    await this.entries.create({
      _id: auditIdAt(at) + randomBytes(6).toString("hex"),
      at: new Date(at),
      ...entry,
    });
  }

  /** Entries matching `filter` with an id after `after`, oldest first, at most `limit`. */
  async page(
    filter: { account?: string; accountUid?: string },
    after: string,
    limit: number,
  ): Promise<AuditDoc[]> {
    return this.entries
      .find({ ...filter, _id: { $gt: after } })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<AuditDoc[]>()
      .exec();
  }
}
