/**
 * The unit of work's transaction branch (MongoDB replica sets and sharded clusters) without a
 * mongod: the writes run inside a real driver session's `withTransaction` (a session of a client
 * that never connects: a transaction whose operations never reach a server starts, aborts and
 * commits without one), against in-memory collections. What the driver does on its documented
 * error labels — run the callback again on TransientTransactionError, abort on any other error —
 * is the driver's own code here. Where a replica set exists, `MONGO_URL=…?replicaSet=… make test`
 * runs the integration suites through this branch against it (docs/operations.md).
 */
import { expect } from "chai";
import { type ClientSession, MongoClient, MongoNetworkError, MongoServerError } from "mongodb";
import type { FeedBatch } from "../../../services/data/src/store/change-feed.ts";
import type { PlannedWrite } from "../../../services/data/src/store/guarded-writes.ts";
import { retryPolicy } from "../../../services/data/src/store/retry-policy.ts";
import type { RowLockSession } from "../../../services/data/src/store/row-locks.ts";
import type { TenantDatabases } from "../../../services/data/src/store/tenant-databases.ts";
import { transactionFailure } from "../../../services/data/src/store/transaction-outcome.ts";
import { type CommitEvents, commitWrites } from "../../../services/data/src/store/unit-of-work.ts";
import { ApiError } from "../../../shared/errors.ts";

const insert = (id: number): PlannedWrite => ({
  kind: "insert",
  collection: "p1_order",
  after: { _id: id, _ck: "c" },
});
const update = (id: string): PlannedWrite => ({
  kind: "update",
  collection: "p1_customer",
  before: { _id: id, _ck: "a" },
  after: { _id: id, _ck: "b" },
});

const transient = () =>
  new MongoServerError({ message: "WriteConflict", code: 112, errorLabels: ["TransientTransactionError"] });

/** A tenant store whose collections record every write (and whether it ran in a transaction). */
function storeWith(client: MongoClient, fail: (op: string, call: number) => unknown) {
  const ops: string[] = [];
  const sessions: ClientSession[] = [];
  let calls = 0;
  const run = (op: string, options?: { session?: ClientSession }) => {
    calls++;
    const inTransaction = options?.session?.inTransaction() ?? false;
    ops.push(`${op}${inTransaction ? "" : " (no transaction!)"}`);
    const err = fail(op, calls);
    if (err) throw err;
  };
  const collection = {
    insertOne: async (doc: { _id: unknown }, o?: { session?: ClientSession }) => run(`insert ${doc._id}`, o),
    replaceOne: async (f: { _id: unknown }, _d: unknown, o?: { session?: ClientSession }) => {
      run(`update ${f._id}`, o);
      return { matchedCount: 1 };
    },
    deleteOne: async (f: { _id: unknown }, o?: { session?: ClientSession }) => {
      run(`delete ${f._id}`, o);
      return { deletedCount: 1 };
    },
  };
  const store = {
    queryTimeoutMs: 1000,
    db: () => ({ collection: () => collection }),
    collection: () => collection,
    startSession: () => {
      const session = client.startSession();
      sessions.push(session);
      return session;
    },
  } as unknown as TenantDatabases;
  return { store, ops, sessions };
}

describe("unit of work with MongoDB transactions", () => {
  let client: MongoClient;
  const locks = { withoutTransactions: false } as RowLockSession;
  const policy = retryPolicy({ lockWaitMs: 100, leaseMs: 1000 });

  before(() => {
    client = new MongoClient("mongodb://127.0.0.1:1/?replicaSet=rs0", { serverSelectionTimeoutMS: 100 });
  });
  after(() => client.close());

  it("runs every write in one transaction of one session, and ends the session", async () => {
    const { store, ops, sessions } = storeWith(client, () => undefined);
    await commitWrites(store, "tn_acme", [insert(1), update("x")], locks, policy);
    expect(ops).to.deep.equal(["insert 1", "update x"]);
    expect(sessions).to.have.length(1);
    expect(sessions[0]!.hasEnded).to.equal(true);
  });

  it("a TransientTransactionError (a write conflict): the driver runs the whole unit again", async () => {
    const { store, ops } = storeWith(client, (_op, call) => (call === 2 ? transient() : undefined));
    await commitWrites(store, "tn_acme", [insert(1), update("x")], locks, policy);
    expect(ops).to.deep.equal(["insert 1", "update x", "insert 1", "update x"]);
  });

  it("a refused write (checksum conflict) aborts the transaction; the conflict is the answer", async () => {
    const { store, ops, sessions } = storeWith(client, (op) =>
      op === "update x" ? new ApiError(409, 4091, "changed") : undefined,
    );
    const err = await commitWrites(
      store,
      "tn_acme",
      [insert(1), update("x"), insert(2)],
      locks,
      policy,
    ).catch((e: unknown) => e);
    expect(err).to.deep.include({ statusCode: 409, errorCode: 4091 });
    expect(ops, "nothing after the refused write").to.deep.equal(["insert 1", "update x"]);
    expect(sessions[0]!.inTransaction()).to.equal(false);
    expect(sessions[0]!.hasEnded).to.equal(true);
  });

  it("a duplicate key aborts the transaction with 400", async () => {
    const { store } = storeWith(client, (op) =>
      op === "insert 2"
        ? new MongoServerError({ message: "E11000 duplicate key", code: 11000, keyPattern: { _id: 1 } })
        : undefined,
    );
    const err = await commitWrites(store, "tn_acme", [insert(1), insert(2)], locks, policy).catch(
      (e: unknown) => e,
    );
    expect(err).to.deep.include({ statusCode: 400, errorCode: 4003 });
  });

  it("a query stopped at its time limit leaves the unit of work as the service's 503/5031, not the driver's error", async () => {
    const { store } = storeWith(client, (op) =>
      op === "update x"
        ? new MongoServerError({ message: "operation exceeded time limit", code: 50 })
        : undefined,
    );
    const err = await commitWrites(store, "tn_acme", [insert(1), update("x")], locks, policy).catch(
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ApiError);
    expect(err).to.deep.include({ statusCode: 503, errorCode: 5031 });
  });

  describe("the write's change-feed events", () => {
    const batch: FeedBatch = {
      tx: "t1",
      database: "tn_acme",
      stream: "feed:{tn_acme}:p1_",
      appendedKey: "feed-tx:{tn_acme}:t1",
      maxLength: 100,
      maxAgeMs: 60_000,
      entries: [["tx", "t1"]],
    };
    /** Events that log into the store's list of operations, in or out of the transaction. */
    const eventsInto = (ops: string[]): CommitEvents => ({
      batch,
      prepare: async (b) => {
        ops.push(`prepare ${b.database}`);
      },
      record: async (b, session) => {
        ops.push(`record ${b.tx}${session.inTransaction() ? "" : " (no transaction!)"}`);
      },
      afterCommit: async (b) => {
        ops.push(`after commit ${b.tx}`);
      },
    });

    it("are prepared for before the transaction, recorded inside it after its writes, and appended after the commit", async () => {
      const { store, ops } = storeWith(client, () => undefined);
      await commitWrites(store, "tn_acme", [insert(1), update("x")], locks, policy, eventsInto(ops));
      expect(ops).to.deep.equal(["prepare tn_acme", "insert 1", "update x", "record t1", "after commit t1"]);
    });

    it("a transaction the driver runs again records them in the attempt that commits", async () => {
      const { store, ops } = storeWith(client, (_op, call) => (call === 2 ? transient() : undefined));
      await commitWrites(store, "tn_acme", [insert(1), update("x")], locks, policy, eventsInto(ops));
      expect(ops).to.deep.equal([
        "prepare tn_acme",
        "insert 1",
        "update x",
        "insert 1",
        "update x",
        "record t1",
        "after commit t1",
      ]);
    });

    it("a transaction that fails records and appends nothing", async () => {
      const { store, ops } = storeWith(client, (op) =>
        op === "update x" ? new ApiError(409, 4091, "changed") : undefined,
      );
      const err = await commitWrites(
        store,
        "tn_acme",
        [insert(1), update("x")],
        locks,
        policy,
        eventsInto(ops),
      ).catch((e: unknown) => e);
      expect(err).to.deep.include({ statusCode: 409 });
      expect(ops).to.deep.equal(["prepare tn_acme", "insert 1", "update x"]);
    });
  });

  describe("the answer once the driver gave up", () => {
    it("TransientTransactionError: aborted, nothing written: 503", () => {
      const answer = transactionFailure(transient()) as ApiError;
      expect(answer).to.be.instanceOf(ApiError);
      expect(answer).to.deep.include({ statusCode: 503, errorCode: 5031 });
      expect(answer.message).to.include("nothing was written");
    });

    it("UnknownTransactionCommitResult: 503 saying the change may have been applied", () => {
      const err = new MongoServerError({
        message: "operation exceeded time limit",
        code: 50,
        errorLabels: ["UnknownTransactionCommitResult"],
      });
      const answer = transactionFailure(err) as ApiError;
      expect(answer).to.deep.include({ statusCode: 503, errorCode: 5031 });
      expect(answer.message).to.include("may or may not have been applied");
      expect(answer.message).to.not.include("nothing was written");
    });

    it("a network error the driver labelled transient inside a transaction: 503", () => {
      const err = new MongoNetworkError("connection reset");
      err.addErrorLabel("TransientTransactionError");
      expect(transactionFailure(err)).to.deep.include({ statusCode: 503 });
    });

    it("API errors and errors without a label are left as they are", () => {
      const conflict = new ApiError(409, 4091, "changed");
      expect(transactionFailure(conflict)).to.equal(conflict);
      const other = new MongoServerError({ message: "bad", code: 2 });
      expect(transactionFailure(other)).to.equal(other);
      const plain = new Error("x");
      expect(transactionFailure(plain)).to.equal(plain);
    });
  });
});
