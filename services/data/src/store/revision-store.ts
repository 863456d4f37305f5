/**
 * Definition history, in META_DB (collection `project_revisions`): every
 * accepted definition of a project, by revision number, with who stored it,
 * when, and the summary of what changed. Records belong to one incarnation of
 * the project (`projectUid`). A record is written before the project moves to
 * its revision, so a write that fails half-way leaves at most a record above the
 * project's revision, which listings do not show and the next change replaces.
 */
import type { Connection, Model } from "mongoose";
import type { AuditActor } from "../../../../shared/admin-access/audit.ts";
import { type ActorFilter, actorCondition } from "./actor-filter.ts";
import type { DefinitionSealing } from "./definition-sealing.ts";
import { metaModel } from "./meta-model.ts";

export interface RevisionDoc {
  /** `<projectUid>/<revision>` */
  _id: string;
  account: string;
  project: string;
  projectUid: string;
  revision: number;
  definitionJson: string;
  /** null for a revision stored before history was kept. */
  by: AuditActor | null;
  at: Date;
  summary: string;
  requestId: string | null;
}

export interface StoredRevision {
  revision: number;
  by: AuditActor | null;
  at: Date;
  summary: string;
  requestId: string | null;
}

export interface StoredRevisionWithDefinition extends StoredRevision {
  definition: unknown;
}

export class RevisionStore {
  readonly revisions: Model<RevisionDoc>;
  readonly #sealing: DefinitionSealing;

  /** `sealing`: how definitions are kept at rest (their secret values sealed under SECRETS_KEY). */
  constructor(connection: Connection, queryTimeoutMs: number, sealing: DefinitionSealing) {
    this.#sealing = sealing;
    this.revisions = metaModel<RevisionDoc>(
      connection,
      queryTimeoutMs,
      {
        name: "ProjectRevision",
        collection: "project_revisions",
        minimize: false,
        indexes: [{ projectUid: 1, revision: 1 }],
      },
      {
        _id: String,
        account: String,
        project: String,
        projectUid: String,
        revision: Number,
        definitionJson: String,
        by: Object,
        at: Date,
        summary: String,
        requestId: String,
      },
    );
  }

  /** Stores (or replaces) the record of one revision. */
  async save(record: Omit<RevisionDoc, "_id" | "definitionJson"> & { definition: unknown }): Promise<void> {
    const { definition, ...fields } = record;
    const doc = { ...fields, definitionJson: this.#sealing.stored(definition) };
    await this.revisions
      .replaceOne({ _id: `${record.projectUid}/${record.revision}` }, doc, { upsert: true })
      .exec();
  }

  async has(projectUid: string, revision: number): Promise<boolean> {
    return (await this.revisions.countDocuments({ _id: `${projectUid}/${revision}` }).exec()) > 0;
  }

  /**
   * Revisions above `after` and below `before`, up to `upTo` (the project's current one),
   * stored by `by` if given, oldest first (or newest first), at most `limit`.
   */
  async list(
    projectUid: string,
    range: {
      after: number;
      before?: number;
      upTo: number;
      limit: number;
      by?: ActorFilter;
      newestFirst?: boolean;
    },
  ): Promise<StoredRevision[]> {
    const below = range.before === undefined ? {} : { $lt: range.before };
    const docs = await this.revisions
      .find(
        {
          projectUid,
          revision: { $gt: range.after, $lte: range.upTo, ...below },
          ...actorCondition("by", range.by),
        },
        { definitionJson: 0, account: 0, project: 0, projectUid: 0 },
      )
      .sort({ revision: range.newestFirst ? -1 : 1 })
      .limit(range.limit)
      .lean<RevisionDoc[]>()
      .exec();
    return docs.map(({ revision, by, at, summary, requestId }) => ({
      revision,
      by: by ?? null,
      at,
      summary,
      requestId: requestId ?? null,
    }));
  }

  async get(projectUid: string, revision: number): Promise<StoredRevisionWithDefinition | null> {
    const doc = await this.revisions.findById(`${projectUid}/${revision}`).lean<RevisionDoc>().exec();
    if (!doc) return null;
    return {
      revision: doc.revision,
      by: doc.by ?? null,
      at: doc.at,
      summary: doc.summary,
      requestId: doc.requestId ?? null,
      definition: this.#sealing.definition(doc.definitionJson),
    };
  }

  /**
   * Seals again, under the current SECRETS_KEY, the secret values of every revision's definition
   * that has one stored otherwise; how many records changed (one changed meanwhile is left).
   */
  resealDefinitions(): Promise<number> {
    return this.#sealing.resealRecords(this.revisions);
  }

  /** Every record of every incarnation of the project (when it is deleted). */
  async deleteProject(account: string, project: string): Promise<void> {
    await this.revisions.deleteMany({ account, project }).exec();
  }

  /** Every record of these incarnations of projects (deleted ones). */
  async deleteIncarnations(projectUids: string[]): Promise<void> {
    await this.revisions.deleteMany({ projectUid: { $in: projectUids } }).exec();
  }

  async deleteAccount(account: string): Promise<void> {
    await this.revisions.deleteMany({ account }).exec();
  }
}
