/**
 * Platform metadata in META_DB (mongoose): accounts, project definitions with a
 * revision counter and an incarnation id, and built-in users. Definitions and
 * globals are stored as JSON text so any key (spaces, dots, `$`) round-trips.
 */
import { randomUUID } from "node:crypto";
import mongoose, { type Connection, type Model } from "mongoose";

export interface AccountDoc {
  _id: string;
  displayName?: string;
  createdAt: Date;
}

export interface ProjectDoc {
  _id: string;
  account: string;
  name: string;
  /** New for every creation of the project: keys minted for an earlier project of the same name stop working. */
  uid: string;
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
}

export interface StoredUser {
  username: string;
  passwordHash: string;
  roles: string[];
  globals: Record<string, unknown>;
  keyLifetimeSeconds?: number;
}

const { Schema } = mongoose;

export class MetaStore {
  readonly accounts: Model<AccountDoc>;
  readonly projects: Model<ProjectDoc>;
  readonly users: Model<UserDoc>;

  constructor(connection: Connection, queryTimeoutMs: number) {
    // Every query on metadata carries the same time limit as queries on tenant data.
    const limitTime = (schema: mongoose.Schema) => {
      schema.pre(
        /^(find|count|update|delete|replace|distinct)/,
        function (this: mongoose.Query<unknown, unknown>) {
          this.maxTimeMS(queryTimeoutMs);
        },
      );
      return schema;
    };
    this.accounts = connection.model<AccountDoc>(
      "Account",
      limitTime(
        new Schema<AccountDoc>(
          { _id: String, displayName: String, createdAt: Date },
          { collection: "accounts", versionKey: false },
        ),
      ),
    );
    this.projects = connection.model<ProjectDoc>(
      "Project",
      limitTime(
        new Schema<ProjectDoc>(
          {
            _id: String,
            account: { type: String, index: true },
            name: String,
            uid: String,
            revision: Number,
            definitionJson: String,
            updatedAt: Date,
          },
          { collection: "projects", versionKey: false },
        ),
      ),
    );
    this.users = connection.model<UserDoc>(
      "User",
      limitTime(
        new Schema<UserDoc>(
          {
            _id: String,
            account: String,
            project: String,
            username: String,
            passwordHash: String,
            roles: [String],
            globalsJson: String,
            keyLifetimeSeconds: Number,
            updatedAt: Date,
          },
          { collection: "users", versionKey: false },
        ),
      ),
    );
  }

  async getAccount(account: string): Promise<AccountDoc | null> {
    return this.accounts.findById(account).lean<AccountDoc>().exec();
  }

  /** true when created, false when updated. */
  async putAccount(account: string, displayName: string | undefined): Promise<boolean> {
    const existing = await this.accounts.findById(account).lean().exec();
    if (existing) {
      await this.accounts.updateOne({ _id: account }, { $set: { displayName } }).exec();
      return false;
    }
    await this.accounts.create({ _id: account, displayName, createdAt: new Date() });
    return true;
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

  async getProject(account: string, project: string): Promise<StoredProject | null> {
    const doc = await this.projects.findById(`${account}/${project}`).lean<ProjectDoc>().exec();
    return doc ? toStoredProject(doc) : null;
  }

  /** Current revisions of the given projects (id `account/project`), one query. */
  async revisions(ids: string[]): Promise<Map<string, number>> {
    const docs = await this.projects
      .find({ _id: { $in: ids } }, { revision: 1 })
      .lean<{ _id: string; revision: number }[]>()
      .exec();
    return new Map(docs.map((d) => [d._id, d.revision]));
  }

  /** Stores a definition; the revision only moves forward. Returns the stored project and whether it is new. */
  async putProject(
    account: string,
    project: string,
    definition: unknown,
  ): Promise<{ created: boolean; stored: StoredProject }> {
    const id = `${account}/${project}`;
    const definitionJson = JSON.stringify(definition);
    for (;;) {
      const existing = await this.projects.findById(id).lean<ProjectDoc>().exec();
      if (!existing) {
        const doc: ProjectDoc = {
          _id: id,
          account,
          name: project,
          uid: randomUUID(),
          revision: 1,
          definitionJson,
          updatedAt: new Date(),
        };
        try {
          await this.projects.create(doc);
          return { created: true, stored: toStoredProject(doc) };
        } catch (err) {
          if ((err as { code?: number }).code === 11000) continue;
          throw err;
        }
      }
      const revision = existing.revision + 1;
      const result = await this.projects
        .updateOne(
          { _id: id, revision: existing.revision },
          { $set: { revision, definitionJson, updatedAt: new Date() } },
        )
        .exec();
      if (result.modifiedCount === 1) {
        return { created: false, stored: toStoredProject({ ...existing, revision, definitionJson }) };
      }
    }
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
}

function toStoredProject(doc: ProjectDoc): StoredProject {
  return {
    account: doc.account,
    name: doc.name,
    uid: doc.uid,
    revision: doc.revision,
    definition: JSON.parse(doc.definitionJson),
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
