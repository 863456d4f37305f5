/**
 * Issue: one account's webhook receiver that accepts connections and never answers moved another
 * account's delivery latency p50 from 0.25 s to 19.7 s (every subscription of every account shared
 * the process's sending slots, each held up to WEBHOOK_TIMEOUT_MS, and retries took them again).
 * With each subscription's own limit, each account's share of the process and the circuit
 * (docs/webhooks.md#isolation-and-the-circuit), the other account's p50 stays ≤ 2× its quiet p50.
 *
 * One delivering data service with the production defaults (only loopback receivers allowed).
 * The quiet account writes one row every WRITE_EVERY_MS to its project; its receiver answers at
 * once; latency: from the write's answer to the delivery's arrival. First QUIET_SECONDS with
 * nothing else, then HANG_SECONDS after the hanging account wrote HANGING_EVENTS rows whose
 * receiver never answers — in one run.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { loadavg } from "node:os";
import { adminClient, call, keyHeader } from "../../support/http.ts";
import { expectStatus, oneTableProject } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const QUIET = "hooks-quiet";
const HANGING = "hooks-hanging";
const PROJECT = "hooks";
const HANGING_EVENTS = 40;
const WRITE_EVERY_MS = 100;
const QUIET_SECONDS = 10;
/** Longer than WEBHOOK_TIMEOUT_MS (10 s): the hanging attempts' time-outs and what follows them. */
const HANG_SECONDS = 25;
const GOAL = 2;

interface Receiver {
  url: string;
  /** Arrival time (performance.now()) by row key. */
  arrived: Map<string, number>;
  requests: number;
  close(): Promise<void>;
}

/** A receiver on loopback: answers 204 at once, or (`hang`) never answers. */
async function startReceiver(hang: boolean): Promise<Receiver> {
  const arrived = new Map<string, number>();
  const state = { requests: 0 };
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      state.requests++;
      if (hang) return;
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { data: { key: string } };
      if (!arrived.has(body.data.key)) arrived.set(body.data.key, performance.now());
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrived,
    get requests() {
      return state.requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor(sorted.length / 2)]!;
}

export const webhookIsolation: Scenario = {
  id: "webhook-isolation",
  title: "Another account's webhook latency while one account's receiver hangs",
  describe:
    `Delivery latency p50 (write answered → arrival) of one account writing a row every ${WRITE_EVERY_MS} ms, ` +
    `quiet (${QUIET_SECONDS} s) vs while another account's receiver hangs on ${HANGING_EVENTS} events ` +
    `(${HANG_SECONDS} s), one delivering data service with the production defaults. Goal: ≤ ${GOAL}×.`,
  async run(ctx) {
    const { stack } = ctx;
    const admin = adminClient(stack.baseUrl, stack.adminToken);
    const quietReceiver = await startReceiver(false);
    const hangingReceiver = await startReceiver(true);
    const env = { ...stack.dataEnv, WEBHOOK_DELIVERY: "true", SANDBOX_ALLOW_LOOPBACK_FETCH: "true" };
    const deliverer = await stack.startServer("data service, webhooks", "services/data/src/main.ts", env, [
      "--no-node-snapshot",
    ]);
    try {
      const keys: Record<string, string> = {};
      for (const [account, receiver] of [
        [QUIET, quietReceiver],
        [HANGING, hangingReceiver],
      ] as const) {
        expectStatus(await admin.putAccount(account), 201, `PUT account ${account}`);
        expectStatus(await admin.putProject(account, PROJECT, oneTableProject("entry")), 201, "PUT project");
        const key = await admin.createKey(account, PROJECT, { name: "bench", roles: ["Full access"] });
        expectStatus(key, 201, "POST apikeys");
        keys[account] = key.body.apikey as string;
        const subscription = await call(
          deliverer.url,
          "POST",
          `/admin/v1/accounts/${account}/projects/${PROJECT}/webhooks`,
          {
            body: { url: receiver.url, tables: ["entry"] },
            headers: { authorization: `Bearer ${stack.adminToken}` },
          },
        );
        expectStatus(subscription, 201, "POST webhooks");
      }
      const write = async (account: string, id: string) => {
        const r = await call(stack.dataUrl, "POST", `/rest/${account}/${PROJECT}/v1/entry?txsummary=false`, {
          body: { id, name: id, qty: 1 },
          headers: keyHeader(keys[account]!),
        });
        expectStatus(r, 201, `POST entry (${account})`);
        return performance.now();
      };
      /** The quiet account's writes for `seconds`, one every WRITE_EVERY_MS: when each was answered, by key. */
      const writeQuietly = async (phase: string, seconds: number) => {
        const answered = new Map<string, number>();
        const end = Date.now() + seconds * 1000;
        for (let n = 0; Date.now() < end; n++) {
          const id = `${phase}-${n}`;
          answered.set(id, await write(QUIET, id));
          await new Promise((r) => setTimeout(r, WRITE_EVERY_MS));
        }
        return answered;
      };
      /** Latencies (ms) of the writes once every one arrived (or a minute passed). */
      const latencies = async (answered: Map<string, number>) => {
        const deadline = Date.now() + 60_000;
        while ([...answered.keys()].some((k) => !quietReceiver.arrived.has(k)) && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 50));
        return [...answered]
          .filter(([k]) => quietReceiver.arrived.has(k))
          .map(([k, at]) => quietReceiver.arrived.get(k)! - at);
      };

      const quietWrites = await writeQuietly("quiet", QUIET_SECONDS);
      const quiet = await latencies(quietWrites);
      const loadQuiet = loadavg()[0]!;
      for (let n = 0; n < HANGING_EVENTS; n++) await write(HANGING, `hangs-${n}`);
      const hangWrites = await writeQuietly("hang", HANG_SECONDS);
      const loadHang = loadavg()[0]!;
      const underHang = await latencies(hangWrites);

      const ratio = median(underHang) / median(quiet);
      const ms = (values: number[]) => `${median(values).toFixed(0)} ms`;
      ctx.log(
        `webhook-isolation: quiet account's delivery p50 ${ms(quiet)} quiet (load ${loadQuiet.toFixed(2)}), ` +
          `${ms(underHang)} while the other's receiver hangs (load ${loadHang.toFixed(2)}): ×${ratio.toFixed(2)}; ` +
          `the hanging receiver got ${hangingReceiver.requests} requests for ${HANGING_EVENTS} events`,
      );
      const missing = quietWrites.size + hangWrites.size - quiet.length - underHang.length;
      ctx.check(
        "every event of the quiet account is delivered",
        missing === 0,
        `${quiet.length + underHang.length} of ${quietWrites.size + hangWrites.size}`,
      );
      ctx.check(
        `the quiet account's delivery p50 while the other's receiver hangs ≤ ${GOAL}× its quiet p50`,
        ratio <= GOAL,
        `${ms(quiet)} → ${ms(underHang)} (×${ratio.toFixed(2)}; load ${loadQuiet.toFixed(2)} / ${loadHang.toFixed(2)})`,
      );
    } finally {
      await deliverer.stop();
      await quietReceiver.close();
      await hangingReceiver.close();
    }
  },
};
