/**
 * Built-in users, in META_DB (collection `users`). Each belongs to one
 * incarnation of its project (`projectUid`, part of its id): a user written
 * while its project was being deleted stays with the dead incarnation and is
 * never seen by a project created again under the same name. Users stored
 * before incarnations were recorded (id `<account>/<project>/<username>`, no
 * `projectUid`) are read as the current project's and move to the new id the
 * next time they are written.
 */
import type { Connection, Model } from "mongoose";
import { z } from "zod";
import { readStoredJson } from "../../../../shared/stored-json.ts";
import { metaModel } from "./meta-model.ts";

export interface UserDoc {
  /** `<projectUid>/<username>`; `<account>/<project>/<username>` for a legacy record. */
  _id: string;
  account: string;
  project: string;
  /** Absent on legacy records. */
  projectUid?: string;
  username: string;
  passwordHash: string;
  roles: string[];
  globalsJson: string;
  keyLifetimeSeconds?: number;
  updatedAt: Date;
}

export interface StoredUser {
  username: string;
  passwordHash: string;
  roles: string[];
  globals: Record<string, unknown>;
  keyLifetimeSeconds?: number;
}

/** One incarnation of a project: what its users belong to. */
export interface ProjectIncarnation {
  account: string;
  name: string;
  uid: string;
}

/** A user's globals as stored (JSON text of an object; "" or none for a user stored without any). */
const storedGlobals = z.record(z.string(), z.unknown());

const ownId = (project: ProjectIncarnation, username: string) => `${project.uid}/${username}`;
const legacyId = (project: ProjectIncarnation, username: string) =>
  `${project.account}/${project.name}/${username}`;

/** The records of `project`: its own, and legacy ones of the same names. */
const ofProject = (project: ProjectIncarnation) => ({
  $or: [
    { projectUid: project.uid },
    { account: project.account, project: project.name, projectUid: { $exists: false } },
  ],
});

export class UserStore {
  readonly users: Model<UserDoc>;

  constructor(connection: Connection, queryTimeoutMs: number) {
    this.users = metaModel<UserDoc>(
      connection,
      queryTimeoutMs,
      { name: "User", collection: "users", indexes: [{ account: 1 }, { projectUid: 1 }] },
      {
        _id: String,
        account: String,
        project: String,
        projectUid: String,
        username: String,
        passwordHash: String,
        roles: [String],
        globalsJson: String,
        keyLifetimeSeconds: Number,
        updatedAt: Date,
      },
    );
  }

  async get(project: ProjectIncarnation, username: string): Promise<StoredUser | null> {
    const docs = await this.users
      .find({ _id: { $in: [ownId(project, username), legacyId(project, username)] } })
      .lean<UserDoc[]>()
      .exec();
    const doc =
      docs.find((d) => d.projectUid === project.uid) ?? docs.find((d) => d.projectUid === undefined);
    return doc ? toStoredUser(doc) : null;
  }

  async list(project: ProjectIncarnation): Promise<StoredUser[]> {
    const docs = await this.users.find(ofProject(project)).lean<UserDoc[]>().exec();
    // A legacy record shadowed by its own one (written again, its legacy copy not yet removed) is not listed.
    const own = new Set(docs.filter((d) => d.projectUid !== undefined).map((d) => d.username));
    return docs
      .filter((d) => d.projectUid !== undefined || !own.has(d.username))
      .map(toStoredUser)
      .sort((a, b) => a.username.localeCompare(b.username));
  }

  /** Creates or replaces a user of this incarnation; true when created. */
  async put(project: ProjectIncarnation, user: StoredUser): Promise<boolean> {
    const fields = {
      account: project.account,
      project: project.name,
      projectUid: project.uid,
      username: user.username,
      passwordHash: user.passwordHash,
      roles: user.roles,
      globalsJson: JSON.stringify(user.globals),
      keyLifetimeSeconds: user.keyLifetimeSeconds,
      updatedAt: new Date(),
    };
    const result = await this.users
      .updateOne({ _id: ownId(project, user.username) }, { $set: fields }, { upsert: true })
      .exec();
    const legacy = await this.users
      .deleteOne({ _id: legacyId(project, user.username), projectUid: { $exists: false } })
      .exec();
    return result.upsertedCount === 1 && legacy.deletedCount === 0;
  }

  /** Replaces the password hash only if it is still `expectedHash` (no lost update on concurrent changes). */
  async changePassword(
    project: ProjectIncarnation,
    username: string,
    expectedHash: string,
    newHash: string,
  ): Promise<boolean> {
    for (const id of [ownId(project, username), legacyId(project, username)]) {
      const result = await this.users
        .updateOne(
          { _id: id, passwordHash: expectedHash },
          { $set: { passwordHash: newHash, updatedAt: new Date() } },
        )
        .exec();
      if (result.modifiedCount === 1) return true;
    }
    return false;
  }

  async delete(project: ProjectIncarnation, username: string): Promise<boolean> {
    const result = await this.users
      .deleteMany({
        $or: [
          { _id: ownId(project, username) },
          { _id: legacyId(project, username), projectUid: { $exists: false } },
        ],
      })
      .exec();
    return result.deletedCount > 0;
  }

  /** Every user of every incarnation of the project (when it is deleted). */
  async deleteProject(account: string, project: string): Promise<void> {
    await this.users.deleteMany({ account, project }).exec();
  }

  /** Every user of these incarnations of projects (deleted ones). */
  async deleteIncarnations(projectUids: string[]): Promise<void> {
    await this.users.deleteMany({ projectUid: { $in: projectUids } }).exec();
  }

  /** Every user of every project of the account (when it is deleted). */
  async deleteAccount(account: string): Promise<void> {
    await this.users.deleteMany({ account }).exec();
  }
}

function toStoredUser(doc: UserDoc): StoredUser {
  return {
    username: doc.username,
    passwordHash: doc.passwordHash,
    roles: doc.roles ?? [],
    globals: readStoredJson(storedGlobals, "user's globals", doc.globalsJson || "{}"),
    keyLifetimeSeconds: doc.keyLifetimeSeconds ?? undefined,
  };
}
