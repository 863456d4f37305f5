/**
 * The patched FerretDB (services/dev-stack/ferretdb.patch) closes a database's
 * connections once they are idle (FERRETDB_SQLITE_IDLE_TIMEOUT, a minute by
 * default; short here), so its open files follow the databases in use, not
 * every account's database it ever opened. And it keeps idle connections for
 * only the FERRETDB_SQLITE_OPEN_DATABASES databases used most recently, so that
 * however many accounts are used within that minute, the open files stay within
 * a bound the file limit can hold.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { expect } from "chai";
import { MongoClient } from "mongodb";
import { ferretdbBinary, type StartedStore, startFerretdb } from "../../../services/dev-stack/src/stores.ts";
import { until } from "../../support/until.ts";

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
    await until("no SQLite file open", async () => sqliteFiles(pid) === 0);
    expect(await client.db("acct7").collection<{ _id: number }>("t").findOne({ _id: 7 })).to.deep.equal({
      _id: 7,
    });
  });
});

describe("FerretDB patch: open databases bounded, whatever the accounts used within a minute", function () {
  this.timeout(180_000);
  /** Databases kept open (small here, so that a few hundred accounts prove what thousands would). */
  const OPEN = 8;
  /** Accounts used within the idle timeout: each would hold three files if all were kept open. */
  const ACCOUNTS = 300;
  /**
   * The store's file limit: room for its own files and OPEN databases' (three each) plus the ones
   * in use, far below the ACCOUNTS × 3 files the accounts would hold without the bound.
   */
  const FILE_LIMIT = 256;
  let dir: string;
  let store: StartedStore;
  let client: MongoClient;

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "tessera-ferretdb-open-"));
    // The default idle timeout (a minute): every account below is used within it.
    store = await startFerretdb(dir, () => {}, ferretdbBinary, {
      FERRETDB_SQLITE_OPEN_DATABASES: String(OPEN),
    });
    execFileSync("prlimit", [`--pid=${store.pid}`, `--nofile=${FILE_LIMIT}:${FILE_LIMIT}`]);
    client = await MongoClient.connect(store.url, { maxPoolSize: 4 });
  });

  after(async () => {
    await client?.close();
    await store?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers every request of many accounts used at once, its SQLite files within the bound", async () => {
    const pid = store.pid!;
    let most = 0;
    const used = async (i: number) => {
      const rows = client.db(`acct${i}`).collection<{ _id: string; n: number }>("t");
      await rows.insertOne({ _id: `r${i}`, n: i });
      const found = await rows.findOne({ _id: `r${i}` });
      expect(found).to.deep.equal({ _id: `r${i}`, n: i });
      most = Math.max(most, sqliteFiles(pid));
    };
    for (let i = 0; i < ACCOUNTS; i += 4) await Promise.all([i, i + 1, i + 2, i + 3].map(used));
    // Every account again, the first ones long let go: each opens its database again.
    for (let i = 0; i < ACCOUNTS; i += 4)
      await Promise.all(
        [i, i + 1, i + 2, i + 3].map(async (j) => {
          const found = await client.db(`acct${j}`).collection<{ _id: string; n: number }>("t").findOne({});
          expect(found).to.deep.equal({ _id: `r${j}`, n: j });
        }),
      );
    // OPEN databases' idle connections, and those of the requests in flight (4 clients, the
    // metadata database), three files each.
    expect(most).to.be.at.most(3 * 2 * (OPEN + 4 + 1));
  });
});
