/**
 * Waiting for a replica (pure logic, a fake connection): callers that arrive while a round is out
 * share the next one (group commit), a primary without replicas is never sent WAIT, and a round
 * that no replica acknowledged in time says so.
 */
import { expect } from "chai";
import type { Redis } from "ioredis";
import { ReplicaAcks } from "../../../shared/redis/replica-acks.ts";

/** A connection that records its commands; each WAIT stays out until `acknowledge` is called. */
function fakeConnection(replicas: number) {
  const commands: string[] = [];
  const waits: ((n: number) => void)[] = [];
  const connection = {
    role: async () => {
      commands.push("ROLE");
      return ["master", 0, Array.from({ length: replicas }, () => ["127.0.0.1", "1", "0"])];
    },
    set: async () => {
      commands.push("SET");
      return "OK";
    },
    wait: (_n: number, _timeout: number) => {
      commands.push("WAIT");
      return new Promise<number>((resolve) => waits.push(resolve));
    },
  } as unknown as Redis;
  const settled = () => new Promise((r) => setImmediate(r));
  return { connection, commands, waits, settled };
}

describe("waiting for a replica", () => {
  it("shares one round among the callers that arrive while the previous one is out", async () => {
    const fake = fakeConnection(1);
    const acks = new ReplicaAcks(fake.connection, "scratch", 1000);
    const first = acks.confirm();
    await fake.settled();
    expect(fake.waits).to.have.length(1);
    // Two more arrive while the first round is out: they wait for the next, together.
    const second = acks.confirm();
    const third = acks.confirm();
    expect(second).to.equal(third);
    await fake.settled();
    expect(fake.waits).to.have.length(1);
    fake.waits[0]!(1);
    expect(await first).to.equal(true);
    await fake.settled();
    expect(fake.waits).to.have.length(2);
    fake.waits[1]!(0);
    expect(await second).to.equal(false);
    expect(fake.commands.filter((c) => c === "ROLE")).to.have.length(1);
  });

  it("never sends WAIT to a primary without replicas", async () => {
    const fake = fakeConnection(0);
    const acks = new ReplicaAcks(fake.connection, "scratch", 1000);
    expect(await acks.confirm()).to.equal(true);
    expect(await acks.confirm()).to.equal(true);
    expect(fake.commands).to.deep.equal(["ROLE"]);
  });
});
