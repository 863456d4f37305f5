/**
 * Account administrators, in META_DB (collection `admins`). Each belongs to one
 * incarnation of its account (`accountUid`): an account deleted and created
 * again has none of its predecessor's. Passwords are stored as argon2id hashes
 * only; the credential stamp changes with every new password, which revokes the
 * administrator's older keys.
 */
import type { Connection, Model } from "mongoose";
import type { AdminRole } from "../../../../shared/keys/key-record.ts";
import { metaModel } from "./meta-model.ts";

export interface AdminDoc {
  /** `<accountUid>/<login>` */
  _id: string;
  account: string;
  accountUid: string;
  login: string;
  role: AdminRole;
  passwordHash: string;
  credentialStamp: string;
  createdAt: Date;
  updatedAt: Date;
}

export type StoredAdmin = Omit<AdminDoc, "_id">;

export class AdminStore {
  readonly admins: Model<AdminDoc>;

  constructor(connection: Connection, queryTimeoutMs: number) {
    this.admins = metaModel<AdminDoc>(
      connection,
      queryTimeoutMs,
      { name: "Admin", collection: "admins", indexes: [{ accountUid: 1 }] },
      {
        _id: String,
        account: String,
        accountUid: String,
        login: String,
        role: String,
        passwordHash: String,
        credentialStamp: String,
        createdAt: Date,
        updatedAt: Date,
      },
    );
  }

  async list(accountUid: string): Promise<StoredAdmin[]> {
    const docs = await this.admins.find({ accountUid }).lean<AdminDoc[]>().exec();
    return docs.map(stored).sort((a, b) => (a.login < b.login ? -1 : a.login > b.login ? 1 : 0));
  }

  async get(accountUid: string, login: string): Promise<StoredAdmin | null> {
    const doc = await this.admins.findById(`${accountUid}/${login}`).lean<AdminDoc>().exec();
    return doc ? stored(doc) : null;
  }

  /** Creates or replaces an administrator; true when created. */
  async put(admin: Omit<StoredAdmin, "createdAt" | "updatedAt">): Promise<boolean> {
    const now = new Date();
    const result = await this.admins
      .updateOne(
        { _id: `${admin.accountUid}/${admin.login}` },
        { $set: { ...admin, updatedAt: now }, $setOnInsert: { createdAt: now } },
        { upsert: true },
      )
      .exec();
    return result.upsertedCount === 1;
  }

  /** Sets a new password only if the hash is still `expectedHash` (no lost update on concurrent changes). */
  async changePassword(
    accountUid: string,
    login: string,
    expectedHash: string,
    change: { passwordHash: string; credentialStamp: string },
  ): Promise<boolean> {
    const result = await this.admins
      .updateOne(
        { _id: `${accountUid}/${login}`, passwordHash: expectedHash },
        { $set: { ...change, updatedAt: new Date() } },
      )
      .exec();
    return result.modifiedCount === 1;
  }

  async delete(accountUid: string, login: string): Promise<boolean> {
    const result = await this.admins.deleteOne({ _id: `${accountUid}/${login}` }).exec();
    return result.deletedCount === 1;
  }

  /** Every administrator of one incarnation of an account (a deleted one). */
  async deleteIncarnation(accountUid: string): Promise<void> {
    await this.admins.deleteMany({ accountUid }).exec();
  }

  /** Every administrator of every incarnation of the account (when it is deleted). */
  async deleteAccount(account: string): Promise<void> {
    await this.admins.deleteMany({ account }).exec();
  }
}

function stored(doc: AdminDoc): StoredAdmin {
  const { _id, ...admin } = doc;
  return admin;
}
