/**
 * The pure parts of the feed outbox (writes committed in MongoDB transactions): how a write's
 * events are split into records and put together again, and what the writer does after the commit
 * when Redis or its replica fails (with in-memory stand-ins for the outbox and the stream; the
 * integration suite runs both against FerretDB and Redis).
 */
import { expect } from "chai";
import type { FeedBatch } from "../../../services/data/src/store/change-feed.ts";
import { batchOf, outboxRecords, partsOf } from "../../../services/data/src/store/feed-outbox.ts";
import { TransactionFeed } from "../../../services/data/src/store/transaction-feed.ts";

const entry = (n: number, pad = 0): string[] => ["tx", "t1", "key", String(n), "row", "x".repeat(pad)];

const batchWith = (entries: string[][]): FeedBatch => ({
  tx: "t1",
  database: "tn_a",
  stream: "feed:{tn_a}:p~1.",
  appendedKey: "feed-tx:{tn_a}:t1",
  maxLength: 1000,
  maxAgeMs: 60_000,
  entries,
});

describe("feed outbox records", () => {
  it("a write's events fit one record until their JSON passes the part size", () => {
    const entries = Array.from({ length: 10 }, (_, i) => entry(i, 100));
    expect(partsOf(entries, 10_000)).to.have.length(1);
    const parts = partsOf(entries, 500);
    expect(parts.length).to.be.greaterThan(2);
    for (const part of parts) expect(JSON.stringify(part).length).to.be.at.most(500);
    expect(parts.flat()).to.deep.equal(entries);
  });

  it("an entry larger than the part size gets a part of its own", () => {
    const entries = [entry(1), entry(2, 1000), entry(3)];
    expect(partsOf(entries, 200).map((p) => p.length)).to.deep.equal([1, 1, 1]);
  });

  it("records name the write and their part in an order-keeping id, and give the batch back whole", () => {
    const batch = batchWith(Array.from({ length: 30 }, (_, i) => entry(i, 50)));
    const at = new Date(1_000);
    const records = outboxRecords(batch, at, 400);
    expect(records.length).to.be.greaterThan(3);
    expect(records.map((r) => r._id)).to.deep.equal(
      records.map((_, i) => `t1/${String(i).padStart(4, "0")}`),
    );
    expect(records.every((r) => r.tx === "t1" && r.at === at)).to.equal(true);
    const [last, ...others] = [...records].reverse();
    expect(batchOf("tn_a", last!, ...others)).to.deep.equal(batch);
  });
});

describe("a transaction's events after the commit", () => {
  function harness(options: {
    append?: () => Promise<boolean>;
    replicated?: boolean;
    remove?: () => Promise<void>;
  }) {
    const calls: string[] = [];
    const deferred: [number, string][] = [];
    const feed = new TransactionFeed({
      feed: {
        appendOnce: async (b) => {
          calls.push(`append ${b.tx}`);
          return (options.append ?? (async () => true))();
        },
      },
      outbox: {
        register: async (database) => {
          calls.push(`register ${database}`);
        },
        record: async (b) => {
          calls.push(`record ${b.tx}`);
        },
        remove: async (b) => {
          calls.push(`remove ${b.tx}`);
          await options.remove?.();
        },
      },
      replicated:
        options.replicated === undefined
          ? undefined
          : async () => {
              calls.push("wait for a replica");
              return options.replicated!;
            },
      onDeferred: (events, reason) => deferred.push([events, reason]),
    });
    return { feed, calls, deferred };
  }
  const batch = batchWith([entry(1), entry(2)]);

  it("appended, then removed from the outbox", async () => {
    const { feed, calls, deferred } = harness({});
    await feed.afterCommit(batch);
    expect(calls).to.deep.equal(["append t1", "remove t1"]);
    expect(deferred).to.deep.equal([]);
  });

  it("with a replica to wait for: removed only once the replica has them", async () => {
    const confirmed = harness({ replicated: true });
    await confirmed.feed.afterCommit(batch);
    expect(confirmed.calls).to.deep.equal(["append t1", "wait for a replica", "remove t1"]);
    const unconfirmed = harness({ replicated: false });
    await unconfirmed.feed.afterCommit(batch);
    expect(unconfirmed.calls, "kept for the sweeper").to.deep.equal(["append t1", "wait for a replica"]);
    expect(unconfirmed.deferred).to.deep.equal([[2, "unreplicated"]]);
  });

  it("Redis failing: kept in the outbox and counted, and the commit's answer is not an error", async () => {
    const { feed, calls, deferred } = harness({
      append: () => Promise.reject(new Error("Connection is closed.")),
    });
    await feed.afterCommit(batch);
    expect(calls).to.deep.equal(["append t1"]);
    expect(deferred).to.deep.equal([[2, "Error"]]);
  });

  it("the outbox failing to remove them: left for the sweeper, no error", async () => {
    const { feed, calls } = harness({ remove: () => Promise.reject(new Error("store away")) });
    await feed.afterCommit(batch);
    expect(calls).to.deep.equal(["append t1", "remove t1"]);
  });

  it("before the transaction, the write's database is named where the sweeper looks", async () => {
    const { feed, calls } = harness({});
    await feed.prepare(batch);
    expect(calls).to.deep.equal(["register tn_a"]);
  });

  it("a write without events touches neither store", async () => {
    const { feed, calls } = harness({});
    await feed.afterCommit(batchWith([]));
    expect(calls).to.deep.equal([]);
  });
});
