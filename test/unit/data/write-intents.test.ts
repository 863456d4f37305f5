/**
 * The pure parts of durable writes: what a failed commit undoes, the lease
 * arithmetic, the intent's encoding, lock requests, the back-off, and the
 * recoverer's loop (with an in-memory stand-in for the Redis record).
 */
import { expect } from "chai";
import { ConflictError, type PlannedWrite } from "../../../services/data/src/store/guarded-writes.ts";
import { Lease } from "../../../services/data/src/store/intent-lease.ts";
import { IntentRecoverer } from "../../../services/data/src/store/intent-recoverer.ts";
import { backoffMs } from "../../../services/data/src/store/retry-policy.ts";
import { lockRequests } from "../../../services/data/src/store/row-locks.ts";
import { writesToUndo } from "../../../services/data/src/store/unit-of-work.ts";
import {
  type ClaimedIntent,
  decodeIntent,
  encodeIntent,
  type WriteIntents,
} from "../../../services/data/src/store/write-intents.ts";
import { errors } from "../../../shared/errors.ts";
import { createLogger } from "../../../shared/logger.ts";

const insert = (id: number): PlannedWrite => ({
  kind: "insert",
  collection: "shop.lineitem",
  after: { _id: id, _ck: `i${id}` },
});
const update = (id: string): PlannedWrite => ({
  kind: "update",
  collection: "shop.customer",
  before: { _id: id, _ck: "b" },
  after: { _id: id, _ck: "a" },
});
const remove = (id: string): PlannedWrite => ({
  kind: "delete",
  collection: "shop.customer",
  before: { _id: id, _ck: "b" },
});

describe("write path: what a failed commit undoes", () => {
  const writes = [insert(1), update("x"), update("y"), remove("z")];

  it("a refusal (conflict, duplicate key) did not apply the failing write: it is not undone", () => {
    expect(writesToUndo(writes, 2, new ConflictError())).to.deep.equal([update("x"), insert(1)]);
    expect(writesToUndo(writes, 0, errors.badAttribute("exists"))).to.deep.equal([]);
  });

  it("a store failure may have applied the failing write: it is undone too, newest first", () => {
    expect(writesToUndo(writes, 2, new Error("connection reset"))).to.deep.equal([
      update("y"),
      update("x"),
      insert(1),
    ]);
    expect(writesToUndo(writes, 0, errors.unavailable("A data store"))).to.deep.equal([insert(1)]);
  });
});

describe("write path: row lock requests", () => {
  it("one lock per written row; rows the plan read as existing are marked", () => {
    const keys = {
      lockKey: (db: string, collection: string, id: unknown) => `${db}/${collection}/${JSON.stringify(id)}`,
    };
    expect(lockRequests(keys, "tn_acme", [insert(7), update("x"), remove("z")])).to.deep.equal([
      { key: "tn_acme/shop.lineitem/7", existed: false },
      { key: 'tn_acme/shop.customer/"x"', existed: true },
      { key: 'tn_acme/shop.customer/"z"', existed: true },
    ]);
  });
});

describe("write path: the lease of an intent", () => {
  let now = 0;
  const clock = () => now;

  it("is held while at least a third of it is left, counted from when the grant was sent", () => {
    const lease = new Lease(900, async () => true, clock);
    expect(lease.held).to.equal(false);
    now = 1000;
    lease.granted(1000);
    expect(lease.held).to.equal(true);
    now = 1599;
    expect(lease.held).to.equal(true);
    now = 1600;
    expect(lease.held).to.equal(false);
  });

  it("a renewal extends it from its own send time; a refused one ends it; a failed one changes nothing", async () => {
    let answer: () => Promise<boolean> = async () => true;
    const lease = new Lease(900, () => answer(), clock);
    now = 0;
    lease.granted(0);
    now = 500;
    await lease.renewNow();
    now = 1099;
    expect(lease.held).to.equal(true);
    answer = async () => {
      throw new Error("Redis unreachable");
    };
    await lease.renewNow();
    expect(lease.held).to.equal(true);
    now = 1100;
    expect(lease.held).to.equal(false);
    now = 1200;
    answer = async () => true;
    await lease.renewNow();
    expect(lease.held).to.equal(true);
    answer = async () => false;
    await lease.renewNow();
    expect(lease.held).to.equal(false);
  });
});

describe("write path: intent encoding", () => {
  it("round-trips rows with dates and numbers; refuses what is not an intent", () => {
    const body = {
      database: "Acme",
      writes: [
        insert(1),
        { ...update("x"), after: { _id: "x", _ck: "a", at: new Date(86_400_000), n: 2.5, none: null } },
      ],
    };
    expect(decodeIntent(encodeIntent(body))).to.deep.equal(body);
    expect(() => decodeIntent('{"writes": []}')).to.throw("not a write intent");
  });
});

describe("write path: back-off", () => {
  it("doubles from 2 ms to at most 100 ms, jittered by ±50 %", () => {
    expect(backoffMs(1, () => 0.5)).to.equal(2);
    expect(backoffMs(3, () => 0.5)).to.equal(8);
    expect(backoffMs(30, () => 0.5)).to.equal(100);
    expect(backoffMs(30, () => 0)).to.equal(50);
    expect(backoffMs(30, () => 0.999)).to.be.below(150);
  });
});

/** An in-memory stand-in for the Redis record: a queue of claimable intents. */
function fakeIntents(claimable: ClaimedIntent[]) {
  const log: string[] = [];
  const intents: Pick<WriteIntents, "claim" | "finish" | "renew" | "handOver"> = {
    async claim(owner) {
      const next = claimable.shift();
      log.push(`claim ${next?.id ?? "none"}`);
      return next ? { ...next, owner } : null;
    },
    async finish(_database, id) {
      log.push(`finish ${id}`);
      return "finished";
    },
    async renew() {
      return true;
    },
    async handOver(_database, id) {
      log.push(`hand over ${id}`);
      const intent = claimedBefore.get(id);
      if (intent) claimable.push(intent);
      return true;
    },
  };
  const claimedBefore = new Map(claimable.map((i) => [i.id, i]));
  return { intents, log };
}

const intent = (id: string, writes: PlannedWrite[]): ClaimedIntent => ({
  id,
  owner: "",
  database: "acme",
  writes,
  keys: [],
  ageMs: 0,
});

describe("write path: the intent recoverer", () => {
  const logger = createLogger("test", "silent");

  it("undoes every claimed intent newest write first, then finishes it", async () => {
    const { intents, log } = fakeIntents([intent("a", [insert(1), update("x")]), intent("b", [remove("z")])]);
    const undone: string[] = [];
    let recovered = 0;
    const recoverer = new IntentRecoverer({
      intents,
      undo: async (database, writes) => {
        undone.push(...writes.map((w) => `${database}:${w.kind}`));
        return [];
      },
      leaseMs: 1000,
      intervalMs: 1000,
      logger,
      onRecovered: () => recovered++,
    });
    expect(await recoverer.runOnce()).to.equal(2);
    expect(undone).to.deep.equal(["acme:update", "acme:insert", "acme:delete"]);
    expect(log).to.deep.equal(["claim a", "finish a", "claim b", "finish b", "claim none"]);
    expect(recovered).to.equal(2);
  });

  it("an intent it cannot undo yet is handed back and not tried again in the same run", async () => {
    const { intents, log } = fakeIntents([intent("a", [update("x")])]);
    const recoverer = new IntentRecoverer({
      intents,
      undo: async (_database, writes) => writes,
      leaseMs: 1000,
      intervalMs: 1000,
      logger,
    });
    expect(await recoverer.runOnce()).to.equal(0);
    expect(log).to.deep.equal(["claim a", "hand over a", "claim a", "hand over a"]);
  });

  it("runs at start and then every interval until stopped", async () => {
    const { intents, log } = fakeIntents([]);
    const recoverer = new IntentRecoverer({
      intents,
      undo: async () => [],
      leaseMs: 1000,
      intervalMs: 20,
      logger,
    });
    recoverer.start();
    await new Promise((r) => setTimeout(r, 70));
    await recoverer.stop();
    const runs = log.length;
    expect(runs).to.be.at.least(2);
    await new Promise((r) => setTimeout(r, 50));
    expect(log.length).to.equal(runs);
  });
});
