/**
 * Tailing the audit trail: a reader that pages with `since=<the last id it saw>`
 * while administrators write concurrently — through two data-service processes
 * of one deployment — never misses an entry, because an entry only becomes
 * visible after every entry with a smaller id (audit-store.ts).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import type { AuditEntryView } from "../../../services/data/src/http/admin/audit-routes.ts";
import { createDataService, type DataService } from "../../../services/data/src/service.ts";
import { createLogger } from "../../../shared/logger.ts";
import { adminClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const RUNS = 20;
const BURSTS = 6;
const WRITERS = 40;

describe("audit trail: tailing while administrators write", () => {
  let platform: Platform;
  let second: DataService;
  let server: http.Server;
  let viaGateway: ReturnType<typeof adminClient>;
  let viaSecond: ReturnType<typeof adminClient>;

  before(async () => {
    platform = await startPlatform();
    viaGateway = adminClient(platform.baseUrl, platform.adminToken);
    second = await createDataService(platform.dataConfig, createLogger("data2", "silent"));
    server = http.createServer(second.app.callback());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    viaSecond = adminClient(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      platform.adminToken,
    );
    expect((await viaGateway.putAccount("tail")).status).to.equal(201);
  });
  after(async () => {
    await new Promise((r) => server.close(r));
    await second.close();
    await platform.close();
  });

  /** One page after `since` (the whole rest when it fits), as the entries and whether more follow. */
  async function pageAfter(since: string): Promise<{ entries: AuditEntryView[]; more: boolean }> {
    const query = since === "" ? "" : `since=${encodeURIComponent(since)}&`;
    const r = await viaGateway.send("GET", `/accounts/tail/audit?${query}pagesize=1000`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const more = r.body.length > 0 && r.body[r.body.length - 1]["@metadata"] !== undefined;
    return { entries: more ? r.body.slice(0, -1) : r.body, more };
  }

  /** Every entry after `since`, following the pages to the end. */
  async function readAfter(since: string): Promise<AuditEntryView[]> {
    const all: AuditEntryView[] = [];
    let cursor = since;
    for (;;) {
      const { entries, more } = await pageAfter(cursor);
      all.push(...entries);
      if (entries.length > 0) cursor = entries[entries.length - 1]!.id;
      if (!more) return all;
    }
  }

  it(`a tailer misses nothing: ${RUNS} runs of ${BURSTS} bursts × ${WRITERS} concurrent writes`, async function () {
    this.timeout(600_000);
    const existing = await readAfter("");
    let cursor = existing.length > 0 ? existing[existing.length - 1]!.id : "";
    for (let run = 0; run < RUNS; run++) {
      const start = cursor;
      // Pruned as operations.md advises (all but the newest entry), so that the store's scans
      // stay short: FerretDB uses no index.
      await platform.data.deps.audit.entries.deleteMany({ _id: { $lt: start } });
      const seen: AuditEntryView[] = [];
      let writing = true;
      const tail = async () => {
        // Polls until the writers are done, then once more: every entry is seen by then.
        for (let last = false; !last; ) {
          last = !writing;
          const { entries } = await pageAfter(cursor);
          seen.push(...entries);
          if (entries.length > 0) cursor = entries[entries.length - 1]!.id;
        }
      };
      const write = async () => {
        for (let burst = 0; burst < BURSTS; burst++) {
          const answers = await Promise.all(
            Array.from({ length: WRITERS }, (_, w) =>
              (w % 2 === 0 ? viaGateway : viaSecond).send("PUT", "/accounts/tail", {
                displayName: `run ${run} burst ${burst} writer ${w}`,
              }),
            ),
          );
          for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
        }
        writing = false;
      };
      await Promise.all([tail(), write()]);
      const stored = await readAfter(start);
      expect(stored, `run ${run}: entries stored`).to.have.length(BURSTS * WRITERS);
      const missed = stored.filter((e) => !seen.some((s) => s.id === e.id)).map((e) => e.summary);
      expect(missed, `run ${run}: entries the tailer never saw`).to.deep.equal([]);
      expect(
        seen.map((e) => e.id),
        `run ${run}: in order, each once`,
      ).to.deep.equal(stored.map((e) => e.id));
    }
  });
});
