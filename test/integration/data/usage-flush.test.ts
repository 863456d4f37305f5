/**
 * The meter's flush against the real Redis (usage/usage-meter.ts, usage-series.ts): every account's
 * counts go out in one batch and land in each account's own series; an account whose commands
 * fail keeps its counts for the next flush while the others are written; the accounts that wrote
 * are marked for the next storage round (usage/changed-accounts.ts).
 */
import { expect } from "chai";
import { ChangedAccounts } from "../../../services/data/src/usage/changed-accounts.ts";
import { UsageMeter } from "../../../services/data/src/usage/usage-meter.ts";
import { UsageSeries } from "../../../services/data/src/usage/usage-series.ts";
import { createLogger } from "../../../shared/logger.ts";
import type { RedisClient } from "../../../shared/redis/clients.ts";
import { usageSeriesKey } from "../../../shared/redis/key-layout.ts";
import { deleteKeys, isolationPrefix, keysMatching, testRedisClient } from "../../support/stores.ts";

const T0 = Date.UTC(2026, 2, 1, 10, 30);
const HOUR = 3_600_000;

describe("usage flush", () => {
  let redis: RedisClient;
  let prefix: string;
  before(async () => {
    redis = await testRedisClient();
  });
  beforeEach(() => {
    prefix = `tessera-test:${isolationPrefix()}`;
  });
  afterEach(async () => {
    await deleteKeys(redis, await keysMatching(redis, `${prefix}*`));
  });
  after(() => redis.quit());

  it("every account's counts land in its own series; a failing account keeps its counts, the others are written", async () => {
    const series = new UsageSeries(redis, prefix, { minuteMs: 48 * HOUR, hourMs: 400 * 24 * HOUR });
    const changes = new ChangedAccounts(redis, prefix);
    const meter = new UsageMeter({
      series,
      flushMs: 60_000,
      logger: createLogger("test", "silent"),
      now: () => T0,
      onWritten: (accounts) => changes.mark(accounts),
    });
    const accounts = Array.from({ length: 40 }, (_, i) => `acct${i}`);
    for (const [i, account] of accounts.entries())
      for (let n = 0; n <= i; n++) meter.request(account, "app", n % 2 === 0 ? "read" : "write", 200);
    // One account's minute hash is not a hash: its commands fail.
    const broken = usageSeriesKey(prefix, "acct7", "m", "2026030110");
    await redis.set(broken, "not a hash");
    await meter.flush();
    const requests = async (account: string) => {
      const [point] = await series.read(account, T0 - (T0 % HOUR), T0 - (T0 % HOUR) + HOUR, HOUR);
      const v = point?.values ?? {};
      return (v["req.read.2xx"] ?? 0) + (v["req.write.2xx"] ?? 0);
    };
    for (const [i, account] of accounts.entries())
      if (account !== "acct7") expect(await requests(account), account).to.equal(i + 1);
    expect((await changes.take()).sort(), "those that wrote are marked").to.deep.equal(
      accounts.filter((_, i) => i >= 1).sort(),
    );
    await redis.del(broken);
    await meter.flush();
    expect(await requests("acct7"), "kept and written at the next flush").to.be.at.least(8);
    for (const [i, account] of accounts.entries())
      if (account !== "acct7")
        expect(await requests(account), `${account} not written twice`).to.equal(i + 1);
  });
});
