/**
 * The storage rounds (usage/storage-sampler.ts) on real processes (the data
 * service, FerretDB, Redis): a round measures the accounts written since the
 * last one, not the others, whose last measurement stands — in the usage
 * answer's series too; the rounds' sweep measures unchanged accounts in turn;
 * the Prometheus gauges of all accounts stay right however few each round
 * measures, and an account deleted leaves them.
 */
import { expect } from "chai";
import { UsageTotals } from "../../../services/data/src/usage/usage-totals.ts";
import { ITEM_PROJECT } from "../../support/definitions.ts";
import { adminClient, call, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { deleteKeys, isolationPrefix, keysMatching, testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";

/** A gauge of the data service's /metrics page (NaN when absent). */
async function gauge(platform: Platform, name: string): Promise<number> {
  const page = (await call(platform.dataUrl, "GET", "/metrics")).body as string;
  const line = page.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? Number.NaN : Number(line.split(" ").at(-1));
}

function tenants(platform: Platform) {
  const admin = adminClient(platform.baseUrl, platform.adminToken);
  const snapshot = (account: string) => platform.data.deps.usage?.series.snapshot(account);
  return {
    admin,
    snapshot,
    /** A new account with project `shop` and `rows` rows; its key. */
    async create(name: string, rows: number): Promise<string> {
      expect((await admin.putAccount(name)).status).to.equal(201);
      expect((await admin.putProject(name, "shop", ITEM_PROJECT)).status).to.equal(201);
      const key = await admin.keyWith(name, "shop", ["Full access"]);
      await this.write(name, key, 0, rows);
      return key;
    },
    async write(name: string, key: string, from: number, rows: number): Promise<void> {
      const items = Array.from({ length: rows }, (_, i) => ({ id: `r${from + i}`, note: "x".repeat(200) }));
      expect((await projectClient(platform.baseUrl, name, "shop").post(key, "item", items)).status).to.equal(
        201,
      );
    },
  };
}

describe("storage rounds", function () {
  this.timeout(120_000);

  describe("without a sweep", () => {
    let platform: Platform;
    before(async () => {
      platform = await startPlatform({
        USAGE_SAMPLE_SECONDS: "1",
        USAGE_FLUSH_MS: "100",
        USAGE_SWEEP_ACCOUNTS: "0",
      });
    });
    after(() => platform?.close());

    it("a round measures the accounts written since the last, and the others keep their measurement", async () => {
      const t = tenants(platform);
      const quietKey = await t.create("quiet", 3);
      const busyKey = await t.create("busy", 2);
      await until("both measured after their writes", async () => {
        return (await t.snapshot("quiet"))?.rows === 3 && (await t.snapshot("busy"))?.rows === 2;
      });
      const quiet = (await t.snapshot("quiet"))!;
      for (let round = 1; round <= 3; round++) {
        await t.write("busy", busyKey, 10 * round, 1);
        await until(`the busy account measured again (${round})`, async () => {
          return (await t.snapshot("busy"))?.rows === 2 + round;
        });
      }
      expect(await t.snapshot("quiet"), "not measured again: it did not write").to.deep.equal(quiet);
      // The usage answer's series shows the quiet account's storage all the same.
      const usage = await t.admin.send("GET", "/accounts/quiet/usage?step=60");
      expect(usage.status).to.equal(200);
      const points = (usage.body as { series: { points: { storedBytes: number | null }[] } }).series.points;
      expect(points.at(-1)?.storedBytes, "the last measurement carried to now").to.equal(quiet.storedBytes);
      // Its key still works and a write of it is measured at the next round.
      await t.write("quiet", quietKey, 100, 1);
      await until(
        "the quiet account measured after its write",
        async () => (await t.snapshot("quiet"))?.rows === 4,
      );
    });

    it("the gauges count every account, however few a round measures; a deleted account leaves them", async () => {
      const t = tenants(platform);
      const total = async () => {
        let sum = 0;
        for (const account of ["quiet", "busy", "gone"]) sum += (await t.snapshot(account))?.storedBytes ?? 0;
        return sum;
      };
      await t.create("gone", 5);
      await until("the new account measured", async () => (await t.snapshot("gone"))?.rows === 5);
      await until(
        "the stored-bytes gauge is all accounts' bytes",
        async () => (await gauge(platform, "tessera_usage_stored_bytes")) === (await total()),
      );
      const withGone = await gauge(platform, "tessera_usage_stored_bytes");
      const gone = (await t.snapshot("gone"))!.storedBytes;
      expect(gone).to.be.above(0);
      expect((await t.admin.send("DELETE", "/accounts/gone")).status).to.be.oneOf([200, 204]);
      await until(
        "the deleted account's bytes left the gauge (at the next round)",
        async () => (await gauge(platform, "tessera_usage_stored_bytes")) === withGone - gone,
      );
    });
  });

  describe("with a sweep of one account a round", () => {
    let platform: Platform;
    before(async () => {
      platform = await startPlatform({
        USAGE_SAMPLE_SECONDS: "1",
        USAGE_FLUSH_MS: "100",
        USAGE_SWEEP_ACCOUNTS: "1",
      });
    });
    after(() => platform?.close());

    it("accounts that do not write are measured again in turn", async () => {
      const t = tenants(platform);
      const names = ["s1", "s2", "s3"];
      for (const name of names) await t.create(name, 1);
      await until("all measured", async () => {
        for (const name of names) if ((await t.snapshot(name))?.rows !== 1) return false;
        return true;
      });
      const first = new Map<string, number>();
      for (const name of names) first.set(name, (await t.snapshot(name))!.at);
      await until("each measured again without a write", async () => {
        for (const name of names) if (!((await t.snapshot(name))!.at > first.get(name)!)) return false;
        return true;
      });
    });
  });

  it("the totals follow each account's latest measurement: bytes replaced, states moved, a dropped account gone", async () => {
    const redis = await testRedisClient();
    const prefix = `tessera-test:${isolationPrefix()}`;
    try {
      const totals = new UsageTotals(redis, prefix);
      await totals.record("a", 100, ["storedBytes|warning", "rowsPerTable|full"]);
      await totals.record("b", 50, ["rowsPerTable|full"]);
      expect(await totals.read()).to.deep.equal({
        bytes: 150,
        states: new Map([
          ["rowsPerTable|full", 2],
          ["storedBytes|warning", 1],
        ]),
      });
      await totals.record("a", 300, ["storedBytes|full"]);
      await totals.record("a", 300, ["storedBytes|full"]);
      const after = await totals.read();
      expect(after.bytes).to.equal(350);
      expect(Object.fromEntries(after.states)).to.deep.equal({
        "rowsPerTable|full": 1,
        "storedBytes|warning": 0,
        "storedBytes|full": 1,
      });
      await totals.drop("b");
      await totals.drop("b");
      const dropped = await totals.read();
      expect(dropped.bytes).to.equal(300);
      expect(dropped.states.get("rowsPerTable|full")).to.equal(0);
    } finally {
      await deleteKeys(redis, await keysMatching(redis, `${prefix}*`));
      await redis.quit();
    }
  });
});
