/**
 * Live-query fan-out (pure parts of feed/live-frames.ts and http/grouped-checks.ts): frames shared
 * between views with the same key and only those, one check per group and interval.
 */
import { expect } from "chai";
import { type KeyedView, LiveFrames } from "../../../services/data/src/feed/live-frames.ts";
import { GroupedChecks } from "../../../services/data/src/http/grouped-checks.ts";
import type { FeedEvent } from "../../../services/data/src/store/change-feed.ts";
import { until } from "../../support/until.ts";

function event(id: string, table: string, name: string): FeedEvent {
  return {
    id,
    tx: "t",
    table,
    verb: "INSERT",
    key: [name],
    row: { _id: name, _ck: "c", name },
    oldRow: null,
    oldChecksum: null,
    rules: [],
  } as unknown as FeedEvent;
}

/** A view that shows `table`'s rows with `label`, counting its evaluations. */
function counted(key: string, table: string, label: string) {
  const calls: string[] = [];
  const keyed: KeyedView = {
    key,
    view: (e) => {
      calls.push(e.id);
      return e.table === table ? { event: "change", data: { label, name: e.row!.name } } : null;
    },
  };
  return { keyed, calls };
}

describe("live-query fan-out: shared frames", () => {
  it("views with the same key evaluate and encode each event once; other keys get their own", () => {
    const frames = new LiveFrames();
    const batch = [event("1-0", "customer", "a"), event("1-1", "order", "b"), event("2-0", "customer", "c")];
    const first = counted("k1", "customer", "one");
    const second = counted("k1", "customer", "one");
    const other = counted("k2", "customer", "two");
    const text = frames.batch(first.keyed, batch);
    expect(frames.batch(second.keyed, batch)).to.equal(text);
    expect(first.calls).to.deep.equal(["1-0", "1-1", "2-0"]);
    expect(second.calls).to.deep.equal([]);
    expect(text).to.equal(
      'id: 1-0\nevent: change\ndata: {"label":"one","name":"a"}\n\n' +
        'id: 2-0\nevent: change\ndata: {"label":"one","name":"c"}\n\n',
    );
    const otherText = frames.batch(other.keyed, batch);
    expect(other.calls).to.deep.equal(["1-0", "1-1", "2-0"]);
    expect(otherText).to.include('"label":"two"').and.not.include('"label":"one"');
    // One event of the batch (catching up): the frame computed for the batch, not a new evaluation.
    expect(frames.frame(second.keyed, batch[2]!)).to.equal(
      'id: 2-0\nevent: change\ndata: {"label":"one","name":"c"}\n\n',
    );
    expect(frames.frame(second.keyed, batch[1]!)).to.equal(null);
    expect(second.calls).to.deep.equal([]);
  });

  it("a view that sees nothing of a batch gets an empty text", () => {
    const frames = new LiveFrames();
    const none = counted("k3", "invoice", "x");
    expect(frames.batch(none.keyed, [event("3-0", "customer", "a")])).to.equal("");
  });
});

describe("live-query fan-out: grouped checks", () => {
  it("runs one check per group and interval, tells every member, and stops with the last member", async () => {
    const checks = new GroupedChecks<string>(20);
    const ran: string[] = [];
    const heard: Record<string, number> = { a1: 0, a2: 0, a3: 0, b1: 0 };
    const member = (group: string, name: string) =>
      checks.join(group, {
        check: async () => {
          ran.push(name);
          return "ok";
        },
        onResult: (r) => {
          if (r.status === "fulfilled") heard[name]!++;
        },
      });
    const leaves = [member("a", "a1"), member("a", "a2"), member("a", "a3"), member("b", "b1")];
    expect(checks.groups).to.equal(2);
    await until("three rounds", async () => Object.values(heard).every((n) => n >= 3));
    // Only the first member of each group ran the check, once per round its members heard.
    expect(new Set(ran)).to.deep.equal(new Set(["a1", "b1"]));
    expect(ran.filter((n) => n === "a1").length).to.be.at.most(heard.a1! + 1);
    leaves[0]!();
    const before = ran.filter((n) => n === "a2").length;
    await until(
      "the next member checks for the group",
      async () => ran.filter((n) => n === "a2").length > before,
    );
    for (const leave of leaves.slice(1)) leave();
    expect(checks.groups).to.equal(0);
  });

  it("hands a failed check to every member, and starts no check while one is running", async () => {
    const checks = new GroupedChecks<string>(10);
    let started = 0;
    let release: () => void = () => {};
    const failures: unknown[] = [];
    const join = () =>
      checks.join("k", {
        check: () => {
          started++;
          return new Promise((_, reject) => {
            release = () => reject(new Error("revoked"));
          });
        },
        onResult: (r) => {
          if (r.status === "rejected") failures.push(r.reason);
        },
      });
    const leaves = [join(), join()];
    await until("a check started", async () => started === 1);
    // Several intervals pass while it runs (a group of the same interval beside it counts them): no second check.
    let ticks = 0;
    const leaveProbe = checks.join("probe", { check: async () => String(++ticks), onResult: () => {} });
    await until("three intervals", async () => ticks >= 3);
    leaveProbe();
    expect(started).to.equal(1);
    release();
    await until("both members heard the failure", async () => failures.length === 2);
    for (const leave of leaves) leave();
  });
});
