/**
 * The patched FerretDB (services/dev-stack/ferretdb.patch) queues the writes of one database in
 * the process, each starting when the one before it ends, instead of letting them meet SQLite's
 * write lock: SQLite's busy handler polls a held lock after sleeping 1, 2, 5, 10 … 100 ms, so under
 * concurrent writers a write waited up to 100 ms for a lock let go long before (ten clients
 * inserting into one database: p99 ~90–110 ms). This test turns SQLite's busy wait off
 * (`busy_timeout(0)`: a write that meets the lock fails at once with "database is locked"), so it
 * sees any write that still reaches a held write lock, without timing anything.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { ferretdbBinary, type StartedStore, startFerretdb } from "../../../services/dev-stack/src/stores.ts";

const WRITERS = 10;
const WRITES_EACH = 60;

describe("FerretDB patch: the writes of a database queue in the store, never in SQLite's busy wait", function () {
  this.timeout(120_000);
  let dir: string;
  let store: StartedStore;
  let client: MongoClient;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-ferretdb-writes-"));
    const state = path.join(dir, "state");
    // The same FerretDB, its SQLite URL given again with the busy wait off (the last flag wins).
    const wrapper = path.join(dir, "ferretdb-no-busy-wait");
    writeFileSync(
      wrapper,
      `#!/bin/sh\nexec ${ferretdbBinary} "$@" '--sqlite-url=file:${state}/?_pragma=busy_timeout(0)'\n`,
    );
    chmodSync(wrapper, 0o755);
    store = await startFerretdb(state, () => {}, wrapper);
    client = await MongoClient.connect(store.url, { maxPoolSize: WRITERS * 2 });
    // The collection and its index exist before the writers start (making them is not a row write).
    await client.db("acct").collection("rows").createIndex({ n: 1 });
  });

  after(async () => {
    await client?.close();
    await store?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("inserts, updates and deletes from ten clients at once into one database, none refused as locked", async () => {
    const rows = client.db("acct").collection<{ _id: string; n: number; v?: number }>("rows");
    const failures: string[] = [];
    await Promise.all(
      Array.from({ length: WRITERS }, async (_, w) => {
        for (let i = 0; i < WRITES_EACH; i++) {
          const _id = `w${w}-${i}`;
          try {
            await rows.insertOne({ _id, n: i });
            if (i % 3 === 1) await rows.updateOne({ _id }, { $set: { v: i } });
            if (i % 3 === 2) await rows.deleteOne({ _id });
          } catch (err) {
            failures.push(`${_id}: ${(err as Error).message}`);
          }
        }
      }),
    );
    expect(failures.slice(0, 3), `${failures.length} writes failed`).to.deep.equal([]);
    const kept = (WRITES_EACH - Math.floor(WRITES_EACH / 3)) * WRITERS;
    expect(await rows.countDocuments({})).to.equal(kept);
    expect(await rows.countDocuments({ v: { $exists: true } })).to.equal((WRITES_EACH / 3) * WRITERS);
  });
});
