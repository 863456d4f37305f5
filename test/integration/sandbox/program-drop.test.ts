/**
 * Dropping a deleted project incarnation's programs at once (ProcessSandboxPool
 * against a real sandbox host process): every program under the incarnation's
 * key prefix goes with its isolates, the same project's other incarnation and
 * other projects keep theirs (warm, with their state).
 */
import { expect } from "chai";
import { programKey, programKeyPrefix } from "../../../services/data/src/domain/model/project-model.ts";
import { ProcessSandboxPool } from "../../../services/data/src/sandbox/index.ts";
import { memoryLogger } from "../../unit/sandbox/support.ts";

const COUNTER = "let n = 0; function next() { return ++n }";

describe("dropping a project incarnation's sandbox programs", function () {
  this.timeout(30_000);
  let pool: ProcessSandboxPool;

  before(() => {
    pool = new ProcessSandboxPool({
      allowLoopbackFetch: false,
      timeoutMs: 5000,
      memoryLimitMb: 8,
      processes: 1,
      logger: memoryLogger(),
    });
  });
  after(() => pool?.close());

  it("drops every program of the incarnation and nothing else", async () => {
    const dead = { account: "acme", name: "shop", uid: "u1" };
    const live = { account: "acme", name: "shop", uid: "u2" };
    const other = { account: "acme", name: "shopping", uid: "u1" };
    const keys = [
      programKey(dead, "auth"),
      programKey(dead, "v1/scripts"),
      programKey(dead, "rules"),
      programKey(live, "auth"),
      programKey(other, "auth"),
    ];
    for (const key of keys) expect(await pool.program(key, COUNTER).call("next")).to.equal(1);
    expect(pool.stats().programs).to.equal(5);

    pool.dropUnder(programKeyPrefix(dead));

    expect(keys.map((k) => pool.get(k) !== undefined)).to.deep.equal([false, false, false, true, true]);
    expect(pool.stats().programs).to.equal(2);
    // The others are the same warm programs, state and all.
    expect(await pool.get(programKey(live, "auth"))!.call("next")).to.equal(2);
    expect(await pool.get(programKey(other, "auth"))!.call("next")).to.equal(2);
    // A program registered again under a dropped key starts afresh.
    expect(await pool.program(programKey(dead, "auth"), COUNTER).call("next")).to.equal(1);
  });
});
