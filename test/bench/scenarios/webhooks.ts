/**
 * Webhook deliveries per second to a local receiver (docs/webhooks.md): a
 * backlog of row changes is waiting in a subscription's consumer group when a
 * delivering data service starts; it is timed from the first delivery to the
 * last. The baseline, measured in the same run against the same receiver: plain
 * POSTs of bodies of the same size from this process, as many at once as the
 * service's WEBHOOK_CONCURRENCY, each on a new connection as deliveries are.
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

interface Receiver {
  url: string;
  ids: Set<string>;
  bodyBytes: number;
  first: number;
  last: number;
  reset(): void;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const state = { ids: new Set<string>(), bodyBytes: 0, first: 0, last: 0 };
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
    });
    req.on("end", () => {
      const now = performance.now();
      if (state.ids.size === 0) state.first = now;
      state.last = now;
      state.ids.add(String(req.headers["webhook-id"]));
      state.bodyBytes = size;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
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
    `(${CONCURRENCY} at once, a new connection each); goal: ratio >= ${GOAL}.`,
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

      // The backlog: the events wait in the subscription's group while no process delivers.
      const root = projectClient(stack.dataUrl, ACCOUNT, PROJECT).root;
      let written = 0;
      await Promise.all(
        Array.from({ length: WRITERS }, async () => {
          while (written < EVENTS) {
            const n = ++written;
            const r = await call(stack.dataUrl, "POST", `${root}/entry?txsummary=false`, {
              body: { id: `e${n}`, name: `entry ${n}`, qty: n % 7 },
              headers: keyHeader(key),
            });
            expectStatus(r, 201, "POST entry");
          }
        }),
      );

      const deliverer = await stack.startServer("data service, webhooks", "services/data/src/main.ts", env, [
        "--no-node-snapshot",
      ]);
      const deadline = Date.now() + 300_000;
      while (receiver.ids.size < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await deliverer.stop();
      const delivered = receiver.ids.size;
      const perSecond = (delivered - 1) / ((receiver.last - receiver.first) / 1000);
      const bodyBytes = receiver.bodyBytes;

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
    } finally {
      await receiver.close();
    }
  },
};
