/**
 * Webhook deliveries per second to a local receiver (docs/webhooks.md): a
 * backlog of row changes is waiting in a subscription's consumer group when a
 * delivering data service starts; it is timed from the first delivery to the
 * last. The baseline, measured in the same run against the same receiver: plain
 * POSTs of bodies of the same size from this process, as many at once as the
 * service's WEBHOOK_CONCURRENCY, each on a new connection as deliveries are.
 * Then a second backlog to a receiver that holds one request in SLOW_EVERY for SLOW_MS (a slow
 * receiver): its rate against the first backlog's, so that one slow answer is seen to hold up
 * only itself (a worker that waited for a whole batch would run at a few batches per SLOW_MS).
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { adminClient, call, keyHeader, projectClient } from "../../support/http.ts";
import { ACCOUNT, expectStatus, oneTableProject } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

const PROJECT = "hooks";
const EVENTS = 3000;
const CONCURRENCY = 16;
const WRITERS = 10;
const GOAL = 0.25;
const SLOW_EVERY = 50;
const SLOW_MS = 1000;
/** Deliveries/s with the slow answers ÷ without: the slot time the slow answers take bounds it. */
const SLOW_GOAL = 0.1;

interface Receiver {
  url: string;
  /** From now on (`on`), or no longer, every SLOW_EVERY-th request is answered after SLOW_MS. */
  slow(on: boolean): void;
  ids: Set<string>;
  bodyBytes: number;
  first: number;
  last: number;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const state = { ids: new Set<string>(), bodyBytes: 0, first: 0, last: 0, slow: false, arrived: 0 };
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
    });
    req.on("end", () => {
      const answer = () => {
        const now = performance.now();
        if (state.ids.size === 0) state.first = now;
        state.last = now;
        state.ids.add(String(req.headers["webhook-id"]));
        state.bodyBytes = size;
        res.writeHead(204).end();
      };
      if (state.slow && ++state.arrived % SLOW_EVERY === 0) setTimeout(answer, SLOW_MS);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    slow(on: boolean) {
      state.slow = on;
    },
    get ids() {
      return state.ids;
    },
    get bodyBytes() {
      return state.bodyBytes;
    },
    get first() {
      return state.first;
    },
    get last() {
      return state.last;
    },
    reset() {
      state.ids = new Set();
      state.arrived = 0;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** `count` POSTs of `bytes`-long bodies, `concurrency` at once, each on a new connection: per second. */
async function plainPosts(url: string, count: number, concurrency: number, bytes: number): Promise<number> {
  const body = "x".repeat(bytes);
  let next = 0;
  const post = (n: number) =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, {
        method: "POST",
        agent: false,
        headers: { "content-type": "application/json", "webhook-id": `floor-${n}` },
      });
      req.on("response", (res) => {
        res.resume();
        res.on("end", () => resolve());
      });
      req.on("error", reject);
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await post(next++);
    }),
  );
  return count / ((performance.now() - started) / 1000);
}

export const webhooks: Scenario = {
  id: "webhooks",
  title: "Webhook deliveries per second to a local receiver",
  describe:
    `A backlog of ${EVENTS} row changes delivered by one data service (WEBHOOK_CONCURRENCY=${CONCURRENCY}) to a ` +
    "receiver on loopback, first to last delivery, against plain POSTs of the same bodies to the same receiver " +
    `(${CONCURRENCY} at once, a new connection each); goal: ratio >= ${GOAL}. Then a backlog to a receiver that ` +
    `answers one request in ${SLOW_EVERY} after ${SLOW_MS} ms; goal: its rate >= ${SLOW_GOAL} of the first's.`,
  async run(ctx) {
    const { stack } = ctx;
    const receiver = await startReceiver();
    const env = {
      ...stack.dataEnv,
      WEBHOOK_DELIVERY: "true",
      SANDBOX_ALLOW_LOOPBACK_FETCH: "true",
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      WEBHOOK_POLL_MS: "20",
    };
    try {
      const admin = adminClient(stack.baseUrl, stack.adminToken);
      expectStatus(
        await admin.putProject(ACCOUNT, PROJECT, oneTableProject("entry")),
        201,
        "PUT hooks project",
      );
      const created = await admin.createKey(ACCOUNT, PROJECT, { name: "bench", roles: ["Full access"] });
      expectStatus(created, 201, "POST apikeys (hooks project)");
      const key = created.body.apikey as string;
      // Made through a data service that may reach loopback (the stack's own does not deliver).
      const maker = await stack.startServer("data service, webhooks", "services/data/src/main.ts", env, [
        "--no-node-snapshot",
      ]);
      const subscription = await call(
        maker.url,
        "POST",
        `/admin/v1/accounts/${ACCOUNT}/projects/${PROJECT}/webhooks`,
        {
          body: { url: receiver.url, tables: ["entry"] },
          headers: { authorization: `Bearer ${stack.adminToken}` },
        },
      );
      expectStatus(subscription, 201, "POST webhooks");
      await maker.stop();

      // A backlog: the events wait in the subscription's group while no process delivers.
      const root = projectClient(stack.dataUrl, ACCOUNT, PROJECT).root;
      let written = 0;
      const backlog = async () => {
        const until = written + EVENTS;
        await Promise.all(
          Array.from({ length: WRITERS }, async () => {
            while (written < until) {
              const n = ++written;
              const r = await call(stack.dataUrl, "POST", `${root}/entry?txsummary=false`, {
                body: { id: `e${n}`, name: `entry ${n}`, qty: n % 7 },
                headers: keyHeader(key),
              });
              expectStatus(r, 201, "POST entry");
            }
          }),
        );
      };
      /** Starts a delivering process, waits for the backlog at the receiver: how many, how fast. */
      const deliver = async () => {
        receiver.reset();
        const deliverer = await stack.startServer(
          "data service, webhooks",
          "services/data/src/main.ts",
          env,
          ["--no-node-snapshot"],
        );
        const deadline = Date.now() + 300_000;
        while (receiver.ids.size < EVENTS && Date.now() < deadline)
          await new Promise((r) => setTimeout(r, 50));
        await deliverer.stop();
        const count = receiver.ids.size;
        return { count, perSecond: (count - 1) / ((receiver.last - receiver.first) / 1000) };
      };

      await backlog();
      const { count: delivered, perSecond } = await deliver();
      const bodyBytes = receiver.bodyBytes;
      await backlog();
      receiver.slow(true);
      const slow = await deliver();
      receiver.slow(false);

      receiver.reset();
      const floor = await plainPosts(receiver.url, EVENTS, CONCURRENCY, bodyBytes);
      const ratio = perSecond / floor;
      ctx.log(
        `webhooks: ${delivered} of ${EVENTS} events delivered at ${perSecond.toFixed(0)}/s; ` +
          `plain POSTs of ${bodyBytes}-byte bodies to the same receiver: ${floor.toFixed(0)}/s; ratio ${ratio.toFixed(2)}`,
      );
      ctx.check("every event of the backlog is delivered", delivered === EVENTS, `${delivered} of ${EVENTS}`);
      ctx.check(
        `deliveries/s ÷ plain POSTs/s >= ${GOAL}`,
        ratio >= GOAL,
        `${perSecond.toFixed(0)}/s ÷ ${floor.toFixed(0)}/s = ${ratio.toFixed(2)}`,
      );
      const slowRatio = slow.perSecond / perSecond;
      ctx.log(
        `webhooks, one answer in ${SLOW_EVERY} after ${SLOW_MS} ms: ${slow.count} of ${EVENTS} at ` +
          `${slow.perSecond.toFixed(0)}/s (${slowRatio.toFixed(2)} of the fast receiver's rate)`,
      );
      ctx.check(
        "every event of the slow receiver's backlog is delivered",
        slow.count === EVENTS,
        `${slow.count} of ${EVENTS}`,
      );
      ctx.check(
        `with one slow answer in ${SLOW_EVERY}: deliveries/s ÷ the fast receiver's >= ${SLOW_GOAL}`,
        slowRatio >= SLOW_GOAL,
        `${slow.perSecond.toFixed(0)}/s ÷ ${perSecond.toFixed(0)}/s = ${slowRatio.toFixed(2)}`,
      );
    } finally {
      await receiver.close();
    }
  },
};
