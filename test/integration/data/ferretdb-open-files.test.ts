/**
 * The patched FerretDB (services/dev-stack/ferretdb.patch) closes a database's
 * connections once they are idle (FERRETDB_SQLITE_IDLE_TIMEOUT, a minute by
 * default; short here), so its open files follow the databases in use, not
 * every account's database it ever opened.
 */
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { ferretdbBinary, type StartedStore, startFerretdb } from "../../../services/dev-stack/src/stores.ts";

const DATABASES = 40;

/** The open files of a process that are SQLite database files (and their WAL and shared memory). */
function sqliteFiles(pid: number): number {
  const fdDir = `/proc/${pid}/fd`;
  let count = 0;
  for (const fd of readdirSync(fdDir)) {
    try {
      if (/\.sqlite(-wal|-shm)?$/.test(readlinkSync(path.join(fdDir, fd)))) count++;
    } catch {
      // closed meanwhile
    }
  }
  return count;
}

describe("FerretDB patch: open files bounded by the databases in use", function () {
  this.timeout(120_000);
  let dir: string;
  let store: StartedStore;
  let client: MongoClient;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-ferretdb-files-"));
    store = await startFerretdb(dir, () => {}, ferretdbBinary, { FERRETDB_SQLITE_IDLE_TIMEOUT: "300ms" });
    client = await MongoClient.connect(store.url);
  });

  after(async () => {
    await client?.close();
    await store?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("closes the files of databases nobody uses, and reads them again when one is used", async () => {
    for (let i = 0; i < DATABASES; i++)
      await client.db(`acct${i}`).collection<{ _id: number }>("t").insertOne({ _id: i });
    const pid = store.pid!;
    expect(sqliteFiles(pid)).to.be.greaterThan(DATABASES);
    for (let attempt = 0; sqliteFiles(pid) > 0; attempt++) {
      if (attempt > 600) throw new Error(`still ${sqliteFiles(pid)} SQLite files open`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await client.db("acct7").collection<{ _id: number }>("t").findOne({ _id: 7 })).to.deep.equal({
      _id: 7,
    });
  });
});
