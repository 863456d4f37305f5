/**
 * Platform metadata in META_DB (mongoose): accounts with the name of their
 * database, project definitions with a revision counter, an incarnation id and
 * the prefix of their collections, and the storage of deleted accounts and
 * projects that is still to be swept. Definitions are stored as JSON text so
 * any key (spaces, dots, `$`) round-trips. A project belongs to one incarnation
 * of its account (`accountUid`): one written while its account was being
 * deleted is not the project of an account created again under the same name,
 * which may create a project of that name anew.
 */
import { randomUUID } from "node:crypto";
import type { Connection, Model, SchemaDefinition } from "mongoose";
import type { DefinitionSealing } from "./definition-sealing.ts";
import { metaModel } from "./meta-model.ts";
import { isDuplicateKey } from "./mongo-errors.ts";
import type { StorageNames, TenantStorage } from "./storage-names.ts";

export interface AccountDoc {
  _id: string;
  /** Incarnation id, new for every creation; absent on accounts created before it was recorded. */
  uid?: string;
  displayName?: string;
  /** Chosen at creation; absent on accounts created before databases had incarnation ids. */
  database?: string;
  createdAt: Date;
}

export interface ProjectDoc {
  _id: string;
  account: string;
  name: string;
  /** The account's incarnation; absent on projects created before it was recorded (they belong to any). */
  accountUid?: string;
  /** New for every creation of the project: keys minted for an earlier project of the same name stop working. */
  uid: string;
  /** Chosen at creation; absent on projects created before collection prefixes had incarnation ids. */
  collectionPrefix?: string;
  revision: number;
  definitionJson: string;
  updatedAt: Date;
}

export interface StoredProject {
  account: string;
  name: string;
  uid: string;
  revision: number;
  definition: unknown;
  updatedAt: Date;
}

/** A project with the names of the storage that holds its rows. */
export interface ProjectWithStorage extends StoredProject {
  storage: TenantStorage;
}

/**
 * The storage of a deleted account (its whole database) or project (the
 * collections under its prefix). Writes that were in flight at the deletion
 * may still create collections there; the sweeper drops them while this is kept.
 */
export interface DeletedStorageDoc {
  _id: string;
  account: string;
  /** Absent for an account. */
  project?: string;
  database: string;
  /** Absent for an account. */
  collectionPrefix?: string;
  /** The deleted incarnation (the account's or the project's); absent on records of earlier releases. */
  uid?: string;
  /** An account's projects when it was deleted (`collectionPrefix`: absent on records of earlier releases). */
  projects?: { name: string; uid: string; collectionPrefix?: string }[];
  deletedAt: Date;
}

export class MetaStore {
  readonly accounts: Model<AccountDoc>;
  readonly projects: Model<ProjectDoc>;
  readonly deletedStorage: Model<DeletedStorageDoc>;
  readonly #names: StorageNames;
  readonly #sealing: DefinitionSealing;

  /** `sealing`: how definitions are kept at rest (their secret values sealed under SECRETS_KEY). */
  constructor(
    connection: Connection,
    queryTimeoutMs: number,
    names: StorageNames,
    sealing: DefinitionSealing,
  ) {
    this.#names = names;
    this.#sealing = sealing;
    const model = <T>(name: string, collection: string, fields: SchemaDefinition<T>) =>
      metaModel<T>(connection, queryTimeoutMs, { name, collection }, fields);
    this.accounts = model<AccountDoc>("Account", "accounts", {
      _id: String,
      uid: String,
      displayName: String,
      database: String,
      createdAt: Date,
    });
    this.projects = model<ProjectDoc>("Project", "projects", {
      _id: String,
      account: { type: String, index: true },
      name: String,
      // Indexed: an account's deletion finds its incarnation's projects without reading them all.
      accountUid: { type: String, index: true },
      uid: String,
      collectionPrefix: String,
      revision: Number,
      definitionJson: String,
      updatedAt: Date,
    });
    this.deletedStorage = model<DeletedStorageDoc>("DeletedStorage", "deleted_storage", {
      _id: String,
      account: String,
      project: String,
      database: String,
      collectionPrefix: String,
      uid: String,
      projects: [{ _id: false, name: String, uid: String, collectionPrefix: String }],
      deletedAt: Date,
    });
  }

  /** Accounts in name order after `after` (all from the start when it is ""), at most `limit`. */
  async listAccounts(after: string, limit: number): Promise<AccountDoc[]> {
    return this.accounts
      .find(after === "" ? {} : { _id: { $gt: after } })
      .sort({ _id: 1 })
      .limit(limit)
      .lean<AccountDoc[]>()
      .exec();
  }

  async getAccount(account: string): Promise<AccountDoc | null> {
    return this.accounts.findById(account).lean<AccountDoc>().exec();
  }

  /** The database of an account's rows: the recorded one, else the name derived from the account's. */
  accountDatabase(doc: AccountDoc): string {
    return doc.database ?? this.#names.legacyDatabase(doc._id);
  }

  /**
   * The account's incarnation: what its administrators, their keys and its audit
   * trail belong to. Accounts recorded before incarnation ids have their database
   * name instead, which no later incarnation shares either.
   */
  accountUid(doc: AccountDoc): string {
    return doc.uid ?? this.accountDatabase(doc);
  }

  /**
   * Creates the account (with an incarnation id and a database name never used
   * before) or changes its display name; answers the account as stored and
   * whether it was created.
   */
  async putAccount(
    account: string,
    displayName: string | undefined,
  ): Promise<{ created: boolean; doc: AccountDoc }> {
    const existing = await this.getAccount(account);
    if (!existing) {
      const doc: AccountDoc = {
        _id: account,
        uid: randomUUID(),
        displayName,
        database: this.#names.newDatabase(account),
        createdAt: new Date(),
      };
      try {
        await this.accounts.create(doc);
        return { created: true, doc };
      } catch (err) {
        // Created by a concurrent request a moment ago: this one is an update.
        if (!isDuplicateKey(err)) throw err;
      }
    }
    await this.accounts.updateOne({ _id: account }, { $set: { displayName } }).exec();
    const doc = existing ? { ...existing, displayName } : await this.getAccount(account);
    return doc ? { created: false, doc } : this.putAccount(account, displayName);
  }

  /** The projects of the account's current incarnation, with their storage, in name order. */
  async listProjects(account: string): Promise<ProjectWithStorage[]> {
    const accountDoc = await this.getAccount(account);
    if (!accountDoc) return [];
    const docs = await this.projects.find({ account }).lean<ProjectDoc[]>().exec();
    const database = this.accountDatabase(accountDoc);
    return docs
      .filter((d) => this.#belongs(d, accountDoc))
      .map((d) => ({ ...this.#toStored(d), storage: { database, collectionPrefix: this.#prefixOf(d) } }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Deletes the account record first, so that nothing checked against it after
   * this passes; then its projects' records (of every incarnation).
   */
  async deleteAccount(account: string): Promise<void> {
    await this.accounts.deleteOne({ _id: account }).exec();
    await this.projects.deleteMany({ account }).exec();
  }

  /** Whether a project record belongs to this incarnation of its account (a legacy one: to any). */
  #belongs(project: ProjectDoc, account: AccountDoc): boolean {
    return project.accountUid === undefined || project.accountUid === this.accountUid(account);
  }

  /** The account and its project of that name in its current incarnation; null when either is absent. */
  async #live(
    account: string,
    project: string,
  ): Promise<{ account: AccountDoc; project: ProjectDoc } | null> {
    const [accountDoc, projectDoc] = await Promise.all([
      this.getAccount(account),
      this.projects.findById(`${account}/${project}`).lean<ProjectDoc>().exec(),
    ]);
    if (!accountDoc || !projectDoc || !this.#belongs(projectDoc, accountDoc)) return null;
    return { account: accountDoc, project: projectDoc };
  }

  async getProject(account: string, project: string): Promise<StoredProject | null> {
    const live = await this.#live(account, project);
    return live ? this.#toStored(live.project) : null;
  }

  /** A project and where its rows live; null when the project or its account does not exist. */
  async getProjectWithStorage(account: string, project: string): Promise<ProjectWithStorage | null> {
    const live = await this.#live(account, project);
    if (!live) return null;
    return {
      ...this.#toStored(live.project),
      storage: {
        database: this.accountDatabase(live.account),
        collectionPrefix: this.#prefixOf(live.project),
      },
    };
  }

  #prefixOf(doc: ProjectDoc): string {
    return doc.collectionPrefix ?? this.#names.legacyCollectionPrefix(doc.name);
  }

  /** Current incarnation and revision of the given projects (id `account/project`), one query. */
  async incarnations(ids: string[]): Promise<Map<string, { uid: string; revision: number }>> {
    const docs = await this.projects
      .find({ _id: { $in: ids } }, { uid: 1, revision: 1 })
      .lean<{ _id: string; uid: string; revision: number }[]>()
      .exec();
    return new Map(docs.map((d) => [d._id, { uid: d.uid, revision: d.revision }]));
  }

  /**
   * Stores a definition as the project's next revision: creates the project with
   * `uid` in the account's incarnation `accountUid` when `expected.revision` is 0
   * (replacing a record left by an earlier incarnation of the account), else
   * moves it from `expected.revision` to the next. null when the project is not
   * (or no longer) at `expected.revision`: nothing was written. Callers serialise
   * changes of one project (a guarded update alone is not atomic on every
   * MongoDB-wire server).
   */
  async writeProject(
    account: string,
    project: string,
    definition: unknown,
    expected: { accountUid: string; uid: string; revision: number },
  ): Promise<StoredProject | null> {
    const id = `${account}/${project}`;
    const definitionJson = this.#sealing.stored(definition);
    const updatedAt = new Date();
    if (expected.revision === 0) {
      const doc: ProjectDoc = {
        _id: id,
        account,
        name: project,
        accountUid: expected.accountUid,
        uid: expected.uid,
        collectionPrefix: this.#names.newCollectionPrefix(project),
        revision: 1,
        definitionJson,
        updatedAt,
      };
      try {
        await this.projects.create(doc);
        return { ...this.#toStored(doc), definition };
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const replaced = await this.projects
        .replaceOne({ _id: id, accountUid: { $exists: true, $ne: expected.accountUid } }, doc)
        .exec();
      return replaced.modifiedCount === 1 ? { ...this.#toStored(doc), definition } : null;
    }
    const revision = expected.revision + 1;
    const result = await this.projects
      .updateOne(
        { _id: id, uid: expected.uid, revision: expected.revision },
        { $set: { revision, definitionJson, updatedAt } },
      )
      .exec();
    if (result.modifiedCount !== 1) return null;
    return { account, name: project, uid: expected.uid, revision, definition, updatedAt };
  }

  /** Projects recorded for an incarnation of their account (left by writes in flight at its deletion). */
  async projectsOfAccountIncarnation(accountUid: string): Promise<{ name: string; uid: string }[]> {
    return this.projects
      .find({ accountUid }, { name: 1, uid: 1 })
      .lean<{ name: string; uid: string }[]>()
      .exec()
      .then((docs) => docs.map(({ name, uid }) => ({ name, uid })));
  }

  async deleteProjectsOfAccountIncarnation(accountUid: string): Promise<void> {
    await this.projects.deleteMany({ accountUid }).exec();
  }

  /** Deletes the project record if it is still incarnation `uid`. */
  async deleteProject(account: string, project: string, uid: string): Promise<boolean> {
    const result = await this.projects.deleteOne({ _id: `${account}/${project}`, uid }).exec();
    return result.deletedCount === 1;
  }

  /** Records the storage of an account or project about to be deleted (again: the clock restarts). */
  async recordDeletedStorage(entry: Omit<DeletedStorageDoc, "_id" | "deletedAt">): Promise<void> {
    const id =
      entry.collectionPrefix === undefined ? entry.database : `${entry.database}/${entry.collectionPrefix}`;
    await this.deletedStorage
      .updateOne({ _id: id }, { $set: { ...entry, deletedAt: new Date() } }, { upsert: true })
      .exec();
  }

  async listDeletedStorage(): Promise<DeletedStorageDoc[]> {
    return this.deletedStorage.find({}).lean<DeletedStorageDoc[]>().exec();
  }

  async forgetDeletedStorage(id: string): Promise<void> {
    await this.deletedStorage.deleteOne({ _id: id }).exec();
  }

  /**
   * Whether a live account or project uses this storage after all: a deletion
   * that failed half-way, or a restore of the deleted one from a backup.
   */
  async storageInUse(entry: DeletedStorageDoc): Promise<boolean> {
    const account = await this.getAccount(entry.account);
    if (!account || this.accountDatabase(account) !== entry.database) return false;
    if (entry.project === undefined) return true;
    const live = await this.#live(entry.account, entry.project);
    return live !== null && this.#prefixOf(live.project) === entry.collectionPrefix;
  }

  #toStored(doc: ProjectDoc): StoredProject {
    return {
      account: doc.account,
      name: doc.name,
      uid: doc.uid,
      revision: doc.revision,
      definition: this.#sealing.definition(doc.definitionJson),
      updatedAt: doc.updatedAt,
    };
  }

  /**
   * Seals again, under the current SECRETS_KEY, the secret values of every project definition
   * that has one stored otherwise (as it was, or under an older key); how many records changed.
   * A record changed meanwhile is left to the next run.
   */
  resealDefinitions(): Promise<number> {
    return this.#sealing.resealRecords(this.projects);
  }
}
