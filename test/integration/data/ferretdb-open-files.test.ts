/**
 * The patched FerretDB (services/dev-stack/ferretdb.patch) closes a database's
 * connections once they are idle (FERRETDB_SQLITE_IDLE_TIMEOUT, ten minutes by
 * default; short here), so its open files follow the databases in use, not
 * every account's database it ever opened. And it keeps idle connections for
 * only the FERRETDB_SQLITE_OPEN_DATABASES databases used most recently (by
 * default as many as three quarters of its file limit hold), so that however many
 * accounts are used within that time, the open files stay within a bound the
 * file limit can hold. A database closed keeps its WAL and shared-memory files
 * (so that opening it again does not create them); dropping it removes them.
 * The dev stack starts FerretDB under FERRETDB_FILE_LIMIT open files where it may set that limit.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
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

/** A FerretDB of its own (started by `start` in a temporary directory) and a client of it. */
async function ownStore(prefix: string, start: (dir: string) => Promise<StartedStore>, maxPoolSize = 100) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const store = await start(dir);
  const client = await MongoClient.connect(store.url, { maxPoolSize });
  const stop = async () => {
    await client.close();
    await store.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, store, client, stop };
}

type OwnStore = Awaited<ReturnType<typeof ownStore>>;

/** Writes a row in account i's database (made by the write when new) and reads it back. */
async function writeAndRead(client: MongoClient, i: number): Promise<void> {
  const rows = client.db(`acct${i}`).collection<{ _id: string }>("t");
  await rows.insertOne({ _id: `r${i}` });
  expect(await rows.findOne({ _id: `r${i}` })).to.deep.equal({ _id: `r${i}` });
}

/** The state directory of a FerretDB that `ownStore` made in `dir`. */
const stateOf = (dir: string) => path.join(dir, "state");

/** FerretDB started in `stateOf(dir)` under a file limit of its own (prlimit runs it in its own process). */
function startUnderFileLimit(
  dir: string,
  limit: number,
  env: Record<string, string> = {},
): Promise<StartedStore> {
  const wrapper = path.join(dir, "ferretdb-limited");
  writeFileSync(wrapper, `#!/bin/sh\nexec prlimit --nofile=${limit}:${limit} ${ferretdbBinary} "$@"\n`);
  chmodSync(wrapper, 0o755);
  return startFerretdb(stateOf(dir), () => {}, wrapper, env);
}

describe("FerretDB patch: open files bounded by the databases in use", function () {
  this.timeout(120_000);
  let own: OwnStore;

  before(async () => {
    own = await ownStore("tessera-ferretdb-files-", (dir) =>
      startFerretdb(dir, () => {}, ferretdbBinary, { FERRETDB_SQLITE_IDLE_TIMEOUT: "300ms" }),
    );
  });

  after(() => own?.stop());

  it("closes the files of databases nobody uses, and reads them again when one is used", async () => {
    for (let i = 0; i < DATABASES; i++)
      await own.client.db(`acct${i}`).collection<{ _id: number }>("t").insertOne({ _id: i });
    const pid = own.store.pid!;
    expect(sqliteFiles(pid)).to.be.greaterThan(DATABASES);
    await until("no SQLite file open", async () => sqliteFiles(pid) === 0);
    expect(await own.client.db("acct7").collection<{ _id: number }>("t").findOne({ _id: 7 })).to.deep.equal({
      _id: 7,
    });
  });

  it("keeps a closed database's WAL (emptied) and shared memory, and removes them with the database", async () => {
    const file = path.join(own.dir, "acct3.sqlite");
    await own.client
      .db("acct3")
      .collection<{ _id: number; n?: number }>("t")
      .updateOne({ _id: 3 }, { $set: { n: 1 } });
    const pid = own.store.pid!;
    await until("no SQLite file open", async () => sqliteFiles(pid) === 0);
    // Closed: the WAL was checkpointed into the database and emptied, not removed.
    expect(statSync(`${file}-wal`).size).to.equal(0);
    expect(existsSync(`${file}-shm`)).to.equal(true);
    expect(
      await own.client.db("acct3").collection<{ _id: number; n?: number }>("t").findOne({ _id: 3 }),
    ).to.deep.equal({ _id: 3, n: 1 });
    await own.client.db("acct3").dropDatabase();
    for (const suffix of ["", "-wal", "-shm"]) expect(existsSync(`${file}${suffix}`), suffix).to.equal(false);
  });
});

describe("FerretDB patch: the default bound of open databases follows the file limit", function () {
  this.timeout(180_000);
  /** The store's file limit: three quarters of it hold 600 × 3 / 4 / 4 = 112 databases' idle connections. */
  const FILE_LIMIT = 600;
  const BOUND = 112;
  /** Accounts used within the idle timeout: more than the bound. */
  const ACCOUNTS = 200;
  let own: OwnStore;

  before(async () => {
    own = await ownStore("tessera-ferretdb-default-", (dir) => startUnderFileLimit(dir, FILE_LIMIT), 4);
  });

  after(() => own?.stop());

  it("keeps idle connections for no more databases than three quarters of the file limit hold", async () => {
    const pid = own.store.pid!;
    let most = 0;
    const used = async (i: number) => {
      await writeAndRead(own.client, i);
      most = Math.max(most, sqliteFiles(pid));
    };
    for (let i = 0; i < ACCOUNTS; i += 4) await Promise.all([i, i + 1, i + 2, i + 3].map(used));
    // The bound's databases (up to four files each: the database, its WAL and shared memory, a
    // database descriptor held back after a second connection closed), those of the requests in
    // flight and of the metadata database, and those being let go meanwhile.
    expect(most).to.be.at.most(4 * (BOUND + 4 + 1) + 4 * 4);
  });
});

describe("FerretDB patch: open databases bounded, whatever the accounts used within the idle timeout", function () {
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
  let own: OwnStore;

  before(async () => {
    // The default idle timeout (ten minutes): every account below is used within it.
    own = await ownStore(
      "tessera-ferretdb-open-",
      async (dir) => {
        const store = await startFerretdb(dir, () => {}, ferretdbBinary, {
          FERRETDB_SQLITE_OPEN_DATABASES: String(OPEN),
        });
        execFileSync("prlimit", [`--pid=${store.pid}`, `--nofile=${FILE_LIMIT}:${FILE_LIMIT}`]);
        return store;
      },
      4,
    );
  });

  after(() => own?.stop());

  it("answers every request of many accounts used at once, its SQLite files within the bound", async () => {
    const pid = own.store.pid!;
    let most = 0;
    const used = async (i: number) => {
      const rows = own.client.db(`acct${i}`).collection<{ _id: string; n: number }>("t");
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
          const found = await own.client
            .db(`acct${j}`)
            .collection<{ _id: string; n: number }>("t")
            .findOne({});
          expect(found).to.deep.equal({ _id: `r${j}`, n: j });
        }),
      );
    // OPEN databases' idle connections, and those of the requests in flight (4 clients, the
    // metadata database), three files each.
    expect(most).to.be.at.most(3 * 2 * (OPEN + 4 + 1));
  });
});

describe("FerretDB patch: 8,000 accounts used at once after a start, under a file limit of 2,000", function () {
  // Copying 8,000 databases and starting the store on them takes seconds; writing and reading every
  // one 48 s at a load of 10, 68 s at 10 with other tests beside it.
  this.timeout(600_000);
  const ACCOUNTS = 8000;
  /** A quarter of the accounts' 4 files each: without the bound, a quarter of them would fit. */
  const FILE_LIMIT = 2000;
  /** The default bound under FILE_LIMIT: three quarters of it at four files a database. */
  const BOUND = (FILE_LIMIT * 3) / 4 / 4;
  const CLIENTS = 8;
  let own: OwnStore;

  before(async () => {
    own = await ownStore(
      "tessera-ferretdb-8000-",
      async (dir) => {
        // One account's database made by FerretDB, then 7,999 more as copies of it, so that the
        // store starts with 8,000 databases (as after a restart) without making each through it.
        const maker = await startFerretdb(stateOf(dir), () => {});
        const client = await MongoClient.connect(maker.url);
        await client.db("acct0").collection<{ _id: string; n: number }>("t").insertOne({ _id: "r", n: -1 });
        await client.close();
        await maker.stop();
        const template = path.join(stateOf(dir), "acct0.sqlite");
        for (let i = 1; i < ACCOUNTS; i++) copyFileSync(template, path.join(stateOf(dir), `acct${i}.sqlite`));
        // No database closes for being idle while the test runs: only the bound keeps files free.
        return startUnderFileLimit(dir, FILE_LIMIT, { FERRETDB_SQLITE_IDLE_TIMEOUT: "24h" });
      },
      CLIENTS,
    );
  });

  after(() => own?.stop());

  /** Each account once, CLIENTS at a time: `use` on each; the most SQLite files seen open meanwhile. */
  async function everyAccount(use: (i: number) => Promise<void>): Promise<number> {
    const pid = own.store.pid!;
    let next = 0;
    let most = 0;
    const client = async () => {
      for (let i = next++; i < ACCOUNTS; i = next++) {
        await use(i);
        if (i % 50 === 0) most = Math.max(most, sqliteFiles(pid));
      }
    };
    await Promise.all(Array.from({ length: CLIENTS }, client));
    return most;
  }

  const rows = (i: number) => own.client.db(`acct${i}`).collection<{ _id: string; n: number }>("t");

  it("writes and reads every account, every request answered, its SQLite files within the bound", async () => {
    const written = await everyAccount(async (i) => {
      const result = await rows(i).updateOne({ _id: "r" }, { $set: { n: i } });
      expect(result.modifiedCount, `acct${i}`).to.equal(1);
    });
    // Every account again, each long let go: its database opens again, and holds what was written.
    const read = await everyAccount(async (i) => {
      expect(await rows(i).findOne({ _id: "r" }), `acct${i}`).to.deep.equal({ _id: "r", n: i });
    });
    // The bound's databases, four files each, and those of the requests in flight, of the
    // metadata database and of the let-go databases still closing (at most 16).
    const ceiling = 4 * (BOUND + CLIENTS + 1 + 16);
    expect(written).to.be.at.most(ceiling);
    expect(read).to.be.at.most(ceiling);
  });
});

describe("dev stack: FerretDB started under FERRETDB_FILE_LIMIT", () => {
  it("runs FerretDB under the limit asked (a lower one here: any process may lower its limit)", function () {
    this.timeout(60_000);
    const stores = path.resolve(import.meta.dirname, "../../../services/dev-stack/src/stores.ts");
    const dir = mkdtempSync(path.join(os.tmpdir(), "tessera-ferretdb-limit-"));
    // A process of its own: the dev stack reads its settings once per process.
    const script =
      `import { readFileSync } from "node:fs";\n` +
      `import { startFerretdb } from ${JSON.stringify(stores)};\n` +
      `const store = await startFerretdb(${JSON.stringify(dir)}, () => {});\n` +
      `process.stdout.write(readFileSync("/proc/" + store.pid + "/limits", "utf8"));\n` +
      `await store.stop();\n`;
    try {
      const run = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
        env: { ...process.env, FERRETDB_FILE_LIMIT: "4096" },
        encoding: "utf8",
      });
      expect(run.status, run.stderr).to.equal(0);
      expect(run.stdout).to.match(/^Max open files\s+4096\s+4096\s+files/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
