/**
 * Platform metadata in META_DB (mongoose): accounts with the name of their
 * database, project definitions with a revision counter, an incarnation id and
 * the prefix of their collections, built-in users, and the storage of deleted
 * accounts and projects that is still to be swept. Definitions and globals are
 * stored as JSON text so any key (spaces, dots, `$`) round-trips.
 */
import { randomUUID } from "node:crypto";
import type { Connection, Model, SchemaDefinition } from "mongoose";
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
  /** New for every creation of the project: keys minted for an earlier project of the same name stop working. */
  uid: string;
  /** Chosen at creation; absent on projects created before collection prefixes had incarnation ids. */
  collectionPrefix?: string;
  revision: number;
  definitionJson: string;
  updatedAt: Date;
}

export interface UserDoc {
  _id: string;
  account: string;
  project: string;
  username: string;
  passwordHash: string;
  roles: string[];
  globalsJson: string;
  keyLifetimeSeconds?: number;
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
  deletedAt: Date;
}

export interface StoredUser {
  username: string;
  passwordHash: string;
  roles: string[];
  globals: Record<string, unknown>;
  keyLifetimeSeconds?: number;
}

export class MetaStore {
  readonly accounts: Model<AccountDoc>;
  readonly projects: Model<ProjectDoc>;
  readonly users: Model<UserDoc>;
  readonly deletedStorage: Model<DeletedStorageDoc>;
  readonly #names: StorageNames;

  constructor(connection: Connection, queryTimeoutMs: number, names: StorageNames) {
    this.#names = names;
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
      uid: String,
      collectionPrefix: String,
      revision: Number,
      definitionJson: String,
      updatedAt: Date,
    });
    this.users = model<UserDoc>("User", "users", {
      _id: String,
      account: { type: String, index: true },
      project: String,
      username: String,
      passwordHash: String,
      roles: [String],
      globalsJson: String,
      keyLifetimeSeconds: Number,
      updatedAt: Date,
    });
    this.deletedStorage = model<DeletedStorageDoc>("DeletedStorage", "deleted_storage", {
      _id: String,
      account: String,
      project: String,
      database: String,
      collectionPrefix: String,
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

  async listProjects(account: string): Promise<StoredProject[]> {
    const docs = await this.projects.find({ account }).lean<ProjectDoc[]>().exec();
    return docs.map(toStoredProject).sort((a, b) => a.name.localeCompare(b.name));
  }

  async deleteAccount(account: string): Promise<void> {
    await this.users.deleteMany({ account }).exec();
    await this.projects.deleteMany({ account }).exec();
    await this.accounts.deleteOne({ _id: account }).exec();
  }

  #projectDoc(account: string, project: string): Promise<ProjectDoc | null> {
    return this.projects.findById(`${account}/${project}`).lean<ProjectDoc>().exec();
  }

  async getProject(account: string, project: string): Promise<StoredProject | null> {
    const doc = await this.#projectDoc(account, project);
    return doc ? toStoredProject(doc) : null;
  }

  /** A project and where its rows live; null when the project or its account does not exist. */
  async getProjectWithStorage(account: string, project: string): Promise<ProjectWithStorage | null> {
    const [accountDoc, projectDoc] = await Promise.all([
      this.getAccount(account),
      this.#projectDoc(account, project),
    ]);
    if (!accountDoc || !projectDoc) return null;
    return {
      ...toStoredProject(projectDoc),
      storage: { database: this.accountDatabase(accountDoc), collectionPrefix: this.#prefixOf(projectDoc) },
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
   * `uid` when `expectedRevision` is 0, else moves it from `expectedRevision` to
   * the next. null when the project is not (or no longer) at `expectedRevision`:
   * nothing was written. Callers serialise changes of one project (a guarded update
   * alone is not atomic on every MongoDB-wire server).
   */
  async writeProject(
    account: string,
    project: string,
    definition: unknown,
    expected: { uid: string; revision: number },
  ): Promise<StoredProject | null> {
    const id = `${account}/${project}`;
    const definitionJson = JSON.stringify(definition);
    const updatedAt = new Date();
    if (expected.revision === 0) {
      const doc: ProjectDoc = {
        _id: id,
        account,
        name: project,
        uid: expected.uid,
        collectionPrefix: this.#names.newCollectionPrefix(project),
        revision: 1,
        definitionJson,
        updatedAt,
      };
      try {
        await this.projects.create(doc);
        return toStoredProject(doc);
      } catch (err) {
        if (isDuplicateKey(err)) return null;
        throw err;
      }
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

  async deleteProject(account: string, project: string): Promise<boolean> {
    await this.users.deleteMany({ account, project }).exec();
    const result = await this.projects.deleteOne({ _id: `${account}/${project}` }).exec();
    return result.deletedCount === 1;
  }

  async getUser(account: string, project: string, username: string): Promise<StoredUser | null> {
    const doc = await this.users.findById(`${account}/${project}/${username}`).lean<UserDoc>().exec();
    return doc ? toStoredUser(doc) : null;
  }

  async listUsers(account: string, project: string): Promise<StoredUser[]> {
    const docs = await this.users.find({ account, project }).lean<UserDoc[]>().exec();
    return docs.map(toStoredUser).sort((a, b) => a.username.localeCompare(b.username));
  }

  async putUser(account: string, project: string, user: StoredUser): Promise<boolean> {
    const id = `${account}/${project}/${user.username}`;
    const fields = {
      account,
      project,
      username: user.username,
      passwordHash: user.passwordHash,
      roles: user.roles,
      globalsJson: JSON.stringify(user.globals),
      keyLifetimeSeconds: user.keyLifetimeSeconds,
      updatedAt: new Date(),
    };
    const result = await this.users.updateOne({ _id: id }, { $set: fields }, { upsert: true }).exec();
    return result.upsertedCount === 1;
  }

  /** Replaces the password hash only if it is still `expectedHash` (no lost update on concurrent changes). */
  async changePassword(
    account: string,
    project: string,
    username: string,
    expectedHash: string,
    newHash: string,
  ): Promise<boolean> {
    const result = await this.users
      .updateOne(
        { _id: `${account}/${project}/${username}`, passwordHash: expectedHash },
        { $set: { passwordHash: newHash, updatedAt: new Date() } },
      )
      .exec();
    return result.modifiedCount === 1;
  }

  async deleteUser(account: string, project: string, username: string): Promise<boolean> {
    const result = await this.users.deleteOne({ _id: `${account}/${project}/${username}` }).exec();
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
    const project = await this.#projectDoc(entry.account, entry.project);
    return project !== null && this.#prefixOf(project) === entry.collectionPrefix;
  }
}

function toStoredProject(doc: ProjectDoc): StoredProject {
  return {
    account: doc.account,
    name: doc.name,
    uid: doc.uid,
    revision: doc.revision,
    definition: JSON.parse(doc.definitionJson),
    updatedAt: doc.updatedAt,
  };
}

function toStoredUser(doc: UserDoc): StoredUser {
  return {
    username: doc.username,
    passwordHash: doc.passwordHash,
    roles: doc.roles ?? [],
    globals: JSON.parse(doc.globalsJson || "{}"),
    keyLifetimeSeconds: doc.keyLifetimeSeconds ?? undefined,
  };
}
