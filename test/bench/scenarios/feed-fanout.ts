/**
 * Issue: event-to-subscriber latency of live queries with 1,000 concurrent SSE subscribers on one
 * data process while 200 writes/s flow. One data process of the stack's deployment (its own, so the
 * live-query limits can admit 1,000 streams of one key) serves the subscribers and the writes; the
 * writer POSTs one row every 5 ms. Latency of an event: when a subscriber has read its frame
 * (Date.now() in the bench process) minus the time Redis gave it (the stream id's milliseconds,
 * same machine, same clock): from the append to the subscriber, 1 ms resolution. Baseline in the
 * same run: the same writes with 1 subscriber. Every subscriber must receive every event.
 */
import http from "node:http";
import { keyHeader } from "../../support/http.ts";
import { benchProject, oneTableProject } from "../lib/fixtures.ts";
import type { BenchContext, Scenario } from "../lib/types.ts";

const SUBSCRIBERS = 1000;
const WRITES_PER_SECOND = 200;
const OPEN_AT_ONCE = 50;

/** One subscriber: counts its change events and records their latencies into `sink`. */
interface Subscriber {
  received: number;
  lastId: string;
  ready: Promise<void>;
  close(): void;
}

function subscribe(url: string, headers: Record<string, string>, sink: number[], recording: () => boolean) {
  let resolveReady: () => void = () => {};
  let rejectReady: (e: Error) => void = () => {};
  const ready = new Promise<void>((resolve, reject) => {
    resolveReady = resolve;
    rejectReady = reject;
  });
  const sub: Subscriber = { received: 0, lastId: "", ready, close: () => req.destroy() };
  let carry = "";
  const req = http.get(url, { headers: { accept: "text/event-stream", ...headers }, agent: false }, (res) => {
    if (res.statusCode !== 200) {
      rejectReady(new Error(`subscriber answered ${res.statusCode}`));
      res.resume();
      return;
    }
    res.on("error", () => {}); // closed by the scenario at the end of a phase
    res.setEncoding("latin1");
    res.on("data", (chunk: string) => {
      const text = carry + chunk;
      let start = 0;
      for (;;) {
        const end = text.indexOf("\n\n", start);
        if (end < 0) break;
        // Frames: `id: <ms>-<seq>\nevent: <name>\ndata: …` (comments and heartbeats have no id).
        if (text.startsWith("id: ", start)) {
          const idEnd = text.indexOf("\n", start);
          const id = text.slice(start + 4, idEnd);
          if (text.startsWith("event: change", idEnd + 1)) {
            sub.received++;
            sub.lastId = id;
            if (recording()) sink.push(Date.now() - Number(id.slice(0, id.indexOf("-"))));
          } else if (text.startsWith("event: snapshot", idEnd + 1)) {
            resolveReady();
          }
        }
        start = end + 2;
      }
      carry = text.slice(start);
    });
  });
  req.on("error", (err) => rejectReady(err));
  return sub;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? Number.NaN
    : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

/** POSTs WRITES_PER_SECOND rows a second for `seconds`; resolves with the acknowledged count and the rate held. */
async function paced(post: (n: number) => Promise<number>, seconds: number, first: number) {
  const interval = 1000 / WRITES_PER_SECOND;
  const total = Math.round(seconds * WRITES_PER_SECOND);
  const started = performance.now();
  const inFlight: Promise<void>[] = [];
  let ok = 0;
  const failed: number[] = [];
  for (let i = 0; i < total; i++) {
    const due = started + i * interval;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inFlight.push(
      post(first + i).then((status) => {
        if (status === 201) ok++;
        else failed.push(status);
      }),
    );
  }
  await Promise.all(inFlight);
  const elapsed = (performance.now() - started) / 1000;
  return { ok, failed, rate: total / elapsed };
}

async function phase(
  ctx: BenchContext,
  label: string,
  count: number,
  options: { url: string; key: string; seconds: number; post: (n: number) => Promise<number>; first: number },
) {
  const latencies: number[] = [];
  let recording = false;
  const subscribers: Subscriber[] = [];
  try {
    for (let i = 0; i < count; i += OPEN_AT_ONCE) {
      const batch = Array.from({ length: Math.min(OPEN_AT_ONCE, count - i) }, () =>
        subscribe(options.url, keyHeader(options.key), latencies, () => recording),
      );
      subscribers.push(...batch);
      await Promise.all(batch.map((s) => s.ready));
    }
    recording = true;
    const writes = await paced(options.post, options.seconds, options.first);
    // Every event of the phase reaches every subscriber (bounded wait; a laggard is reported, not awaited forever).
    const deadline = Date.now() + 30_000;
    while (subscribers.some((s) => s.received < writes.ok) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    recording = false;
    const sorted = latencies.sort((a, b) => a - b);
    const missing = subscribers.reduce((sum, s) => sum + Math.max(0, writes.ok - s.received), 0);
    const result = {
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      max: sorted.at(-1) ?? Number.NaN,
      events: sorted.length,
      missing,
      writes,
    };
    ctx.log(
      `feed-fanout ${label}: ${count} subscriber(s), ${writes.ok} writes acknowledged at ${writes.rate.toFixed(0)}/s ` +
        `(${writes.failed.length} failed); ${result.events} events delivered: p50 ${result.p50} ms, p99 ${result.p99} ms, ` +
        `max ${result.max} ms; events missing: ${missing}`,
    );
    return result;
  } finally {
    for (const s of subscribers) s.close();
  }
}

export const feedFanout: Scenario = {
  id: "feed-fanout",
  title: "Live-query fan-out: event-to-subscriber latency with 1,000 subscribers",
  describe:
    `Event-to-subscriber latency (the stream id's time to the frame read by the subscriber) while ${WRITES_PER_SECOND} ` +
    `writes/s flow into one table, with ${SUBSCRIBERS} concurrent SSE subscribers of that table on one data process, ` +
    "against the same writes with 1 subscriber (baseline, same run); p50/p99 and their ratios. Check: every " +
    "subscriber receives every event.",
  async run(ctx) {
    const { stack } = ctx;
    const seconds = Math.max(6, Number(process.env.BENCH_DURATION ?? 6));
    const { key, client } = await benchProject(stack, "fanout", oneTableProject("entry"));
    // One data process of the deployment, admitting 1,000 streams of one key.
    const data = await ctx.once("data-fanout", () =>
      stack.startServer(
        "data service, live fan-out",
        "services/data/src/main.ts",
        { ...stack.dataEnv, LIVE_MAX_STREAMS_PER_KEY: "2000", LIVE_MAX_STREAMS_PER_ACCOUNT: "2000" },
        ["--no-node-snapshot"],
      ),
    );
    const url = `${data.url}${client.root}/entry`;
    const post = async (n: number) => {
      const r = await fetch(`${url}?txsummary=false`, {
        method: "POST",
        headers: { ...keyHeader(key), "content-type": "application/json" },
        body: JSON.stringify({ id: `f${n}`, name: `entry ${n}`, qty: n % 7 }),
      });
      await r.arrayBuffer();
      return r.status;
    };
    const one = await phase(ctx, "baseline", 1, { url, key, seconds, post, first: 0 });
    const many = await phase(ctx, "fan-out", SUBSCRIBERS, { url, key, seconds, post, first: 1_000_000 });
    ctx.log(
      `feed-fanout: ${SUBSCRIBERS} subscribers vs 1 — p50 ${many.p50} vs ${one.p50} ms (×${(many.p50 / Math.max(1, one.p50)).toFixed(1)}), ` +
        `p99 ${many.p99} vs ${one.p99} ms (×${(many.p99 / Math.max(1, one.p99)).toFixed(1)})`,
    );
    ctx.check(
      "every subscriber received every event",
      one.missing === 0 && many.missing === 0,
      `missing: ${one.missing} (1 subscriber), ${many.missing} (${SUBSCRIBERS} subscribers)`,
    );
    ctx.check(
      `the writer held ${WRITES_PER_SECOND} writes/s with every write acknowledged`,
      [one, many].every((p) => p.writes.failed.length === 0 && p.writes.rate >= WRITES_PER_SECOND * 0.95),
      `${one.writes.rate.toFixed(0)}/s and ${many.writes.rate.toFixed(0)}/s; failed: ${one.writes.failed.length + many.writes.failed.length}`,
    );
  },
};
