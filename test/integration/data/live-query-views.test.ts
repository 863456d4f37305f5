/**
 * What an open live query sends as the project changes around it (docs/realtime.md): role row
 * filters with `like` hold; a row that stops matching is a `leave` (its key and `@metadata`); a
 * definition change applies to open streams before their next event; a stream belongs to one
 * incarnation of its project; HTTP semantics (content negotiation, parameters checked before the
 * stream opens); the hold bound of a stream that catches up; a feed listener that throws.
 * Real HTTP clients on loopback, through the gateway.
 */
import { Writable } from "node:stream";
import { expect } from "chai";
import { FeedHub } from "../../../services/data/src/feed/feed-hub.ts";
import { createLogger } from "../../../shared/logger.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { adminClient, call, keyHeader, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { openSse, type SseEvent, type SseStream } from "../../support/sse.ts";
import { isolationPrefix, testRedisClient } from "../../support/stores.ts";
import { until } from "../../support/until.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON read freely by tests
type Row = Record<string, any>;

function definition(narrow: { columns?: string[]; doc?: boolean } = {}): Row {
  return {
    tables: {
      doc: {
        key: ["name"],
        columns: {
          name: { type: "string", required: true },
          owner: { type: "string" },
          secret: { type: "string" },
          paid: { type: "boolean", default: false },
        },
      },
      note: { key: ["id"], columns: { id: { type: "integer", required: true } } },
    },
    apiVersions: { v1: {} },
    roles: {
      "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } },
      Public: { tables: { doc: { access: ["read"], rowFilter: "name not like 'int%'" } } },
      Owner: { tables: { doc: { access: ["read"], rowFilter: "owner = @{me}" } } },
      Narrow: {
        tables: {
          note: { access: ["read"] },
          ...(narrow.doc === false
            ? {}
            : { doc: { access: ["read"], columns: narrow.columns ?? ["name", "owner", "secret"] } }),
        },
      },
    },
  };
}

const changed = (e: SseEvent) => e.event === "change";

describe("live queries as the project changes around them", function () {
  this.timeout(120_000);
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let api: ReturnType<typeof projectClient>;
  let full: string;
  const open: SseStream[] = [];
  const subscribe = async (key: string, path: string, headers: Record<string, string> = {}) => {
    const stream = await openSse(`${platform.baseUrl}${api.root}/${path}`, { ...keyHeader(key), ...headers });
    open.push(stream);
    return stream;
  };
  const started = async (key: string, path: string, headers: Record<string, string> = {}) => {
    const stream = await subscribe(key, path, headers);
    expect(stream.status, JSON.stringify(stream.body)).to.equal(200);
    await stream.next((e) => e.event === "snapshot");
    return stream;
  };
  const post = async (body: Row) => {
    const r = await api.post(full, "doc", body);
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
  };
  const put = async (name: string, changes: Row) => {
    const current = (await api.get(full, `doc/${name}`)).body[0];
    const r = await api.put(full, `doc/${name}`, { ...changes, "@metadata": current["@metadata"] });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
  };
  const remove = async (name: string) => {
    const current = (await api.get(full, `doc/${name}`)).body[0];
    const r = await api.delete(full, `doc/${name}?checksum=${current["@metadata"].checksum}`);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
  };
  const putDefinition = async (d: Row) => {
    const r = await admin.putProject("acme", "shop", d);
    expect(r.status, JSON.stringify(r.body)).to.be.oneOf([200, 201]);
  };

  before(async () => {
    platform = await startPlatform({ LIVE_KEY_CHECK_MS: "100", LIVE_MAX_HELD_EVENTS: "2" });
    admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await putDefinition(definition());
    api = projectClient(platform.baseUrl, "acme", "shop");
    full = await admin.keyWith("acme", "shop", ["Full access"]);
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });
  after(() => platform.close());

  it("a role's row filter `name not like 'int%'` holds on a live query: no hidden row, no hidden column", async () => {
    const publicKey = await admin.keyWith("acme", "shop", ["Public"]);
    await post({ name: "int-0", owner: "x" });
    const stream = await started(publicKey, "doc");
    const snapshot = stream.events.find((e) => e.event === "snapshot")!;
    expect(snapshot.data.map((d: Row) => d.name)).to.not.include("int-0");
    // The hidden row first: once the public one arrived, the hidden one would have.
    await post({ name: "int-1", owner: "x" });
    await post({ name: "pub-1", owner: "x" });
    await stream.next((e) => changed(e) && e.data.name === "pub-1");
    expect(stream.events.filter(changed).map((e) => e.data.name)).to.deep.equal(["pub-1"]);
  });

  it("an update that takes a row out of the filter is a leave (key and @metadata only); entering is a change; a delete of a row seen is announced", async () => {
    const stream = await started(full, `doc?filter=${encodeURIComponent("paid = false")}`);
    await post({ name: "o1", owner: "ann", secret: "s1" });
    await put("o1", { paid: true }); // leaves
    await put("o1", { secret: "s2" }); // outside: nothing
    await put("o1", { paid: false }); // enters again
    await remove("o1"); // a row it sees: announced
    await stream.next((e) => changed(e) && e.data["@metadata"].verb === "DELETE");
    const seen = stream.events.filter((e) => e.event === "change" || e.event === "leave");
    expect(seen.map((e) => `${e.event} ${e.data["@metadata"].verb}`)).to.deep.equal([
      "change INSERT",
      "leave UPDATE",
      "change UPDATE",
      "change DELETE",
    ]);
    const leave = seen[1]!.data;
    expect(Object.keys(leave).sort()).to.deep.equal(["@metadata", "name"]);
    expect(leave.name).to.equal("o1");
    expect(Object.keys(leave["@metadata"]).sort()).to.deep.equal(["href", "tx", "verb"]);
    expect(leave["@metadata"].href).to.match(/\/doc\/o1$/);
  });

  it("a row that leaves a key's row filter (its globals) is a leave for that key", async () => {
    const ann = await admin.keyWith("acme", "shop", ["Owner"], { me: "ann" });
    const stream = await started(ann, "doc");
    await post({ name: "o2", owner: "ann", secret: "s" });
    await put("o2", { owner: "bob" });
    await put("o2", { secret: "t" }); // bob's now: nothing for ann
    await remove("o2"); // bob's: nothing for ann
    await post({ name: "o3", owner: "ann" });
    await stream.next((e) => changed(e) && e.data.name === "o3");
    expect(
      stream.events
        .filter((e) => e.event === "change" || e.event === "leave")
        .map((e) => `${e.event} ${e.data.name}`),
    ).to.deep.equal(["change o2", "leave o2", "change o3"]);
    expect(stream.events.find((e) => e.event === "leave")!.data).to.not.have.property("owner");
  });

  it("a definition change applies to open streams before their next event: columns narrowed, then access lost ends the stream with closed 403", async () => {
    const narrow = await admin.keyWith("acme", "shop", ["Narrow"]);
    const stream = await started(narrow, "doc");
    await post({ name: "n1", owner: "x", secret: "hush" });
    expect((await stream.next((e) => changed(e) && e.data.name === "n1")).data).to.include({
      secret: "hush",
    });
    await putDefinition(definition({ columns: ["name", "owner"] }));
    await post({ name: "n2", owner: "x", secret: "hush" });
    const narrowed = await stream.next((e) => changed(e) && e.data.name === "n2");
    expect(narrowed.data).to.not.have.property("secret");
    expect(narrowed.data).to.include({ owner: "x" });
    await putDefinition(definition({ doc: false }));
    const closed = await stream.next((e) => e.event === "closed");
    expect([closed.data.statusCode, closed.data.errorCode]).to.deep.equal([403, 4031]);
    await stream.ended;
    await putDefinition(definition());
  });

  it("an administrator's stream ends when its project is deleted, and stays ended when the name is created again", async () => {
    await putAdmin(admin, "acme", "ann", "admin", "ann-secret-1");
    const annKey = await adminKey(platform.baseUrl, "acme", "ann", "ann-secret-1");
    const scratch = projectClient(platform.baseUrl, "acme", "scratch");
    expect((await admin.putProject("acme", "scratch", definition())).status).to.equal(201);
    const stream = await openSse(`${platform.baseUrl}${scratch.root}/doc`, keyHeader(annKey));
    open.push(stream);
    await stream.next((e) => e.event === "snapshot");
    expect((await admin.send("DELETE", "/accounts/acme/projects/scratch")).status).to.equal(200);
    const closed = await stream.next((e) => e.event === "closed");
    expect(closed.data.statusCode).to.equal(404);
    await stream.ended;
    expect((await admin.putProject("acme", "scratch", definition())).status).to.equal(201);
  });

  it("content negotiation by q-values: text/event-stream;q=0 is a page, so is JSON preferred; a stream only when preferred", async () => {
    const page = async (accept: string) => {
      const r = await openSse(`${platform.baseUrl}${api.root}/doc`, { ...keyHeader(full), accept });
      open.push(r);
      return r;
    };
    for (const accept of [
      "text/event-stream;q=0, application/json",
      "application/json, text/event-stream",
      "application/json;q=1, text/event-stream;q=0.5",
      "*/*",
    ]) {
      const r = await page(accept);
      expect([r.status, Array.isArray(r.body)], accept).to.deep.equal([200, true]);
    }
    const stream = await page("text/event-stream, application/json;q=0.9");
    expect(stream.status).to.equal(200);
    await stream.next((e) => e.event === "snapshot");
    const listed = await call(platform.baseUrl, "GET", `${api.root}/doc`, { headers: keyHeader(full) });
    expect(listed.headers.get("vary")).to.match(/accept/i);
  });

  it("a live query's parameters are checked before the stream opens: a plain 400", async () => {
    for (const query of [
      "pagesize=0",
      "pagesize=ten",
      "offset=-1",
      `order=${encodeURIComponent("nope desc")}`,
      `sysorder=${encodeURIComponent("(name:asc_uc)")}`,
      `filter=${encodeURIComponent("name = ")}`,
      "pagekey=xyz",
    ]) {
      const r = await subscribe(full, `doc?${query}`);
      expect([r.status, r.body?.statusCode], query).to.deep.equal([400, 400]);
      expect(r.body.errorCode, query).to.be.oneOf([4001, 4002]);
    }
  });

  it("a stream that falls behind while it catches up is cut where it stands, and resumes without loss", async () => {
    // A backlog of several history pages, then events arriving in bursts while the resume catches up:
    // more than LIVE_MAX_HELD_EVENTS (2) are held, so the stream is cut with the position it reached.
    const redis = await testRedisClient();
    const project = (await platform.data.deps.projects.get("acme", "shop"))!;
    const feed = platform.data.deps.live!.feed;
    const stream = feed.streamOf(project.storage);
    let n = 0;
    const burst = async (count: number) => {
      const batch = feed.batch(
        project.storage,
        Array.from({ length: count }, () => {
          n++;
          return { kind: "insert" as const, table: "note", after: { _id: n, _ck: `c${n}`, id: n } };
        }),
      );
      const pipeline = redis.pipeline();
      for (const fields of batch.entries) pipeline.xadd(stream, "*", ...fields);
      const replies = (await pipeline.exec()) ?? [];
      return replies.map(([, id]) => id as string);
    };
    const from = (await burst(1))[0]!;
    // Sixteen pages of history to catch up on: the hub hands out the bursts meanwhile.
    const written: string[] = [];
    for (let i = 0; i < 8; i++) written.push(...(await burst(1000)));
    const resumed = await subscribe(full, "note", { "last-event-id": from });
    for (let i = 0; i < 200 && !resumed.events.some((e) => e.event === "cut"); i++)
      written.push(...(await burst(50)));
    expect(
      resumed.events.map((e) => e.event),
      "cut while catching up",
    ).to.include("cut");
    const cut = await resumed.next((e) => e.event === "cut");
    await resumed.ended;
    const first = resumed.events.filter(changed).map((e) => e.id!);
    expect(first.at(-1) ?? from).to.equal(cut.data.last);
    const again = await subscribe(full, "note", { "last-event-id": cut.data.last });
    const lastWritten = written.at(-1)!;
    await again.next((e) => changed(e) && e.id === lastWritten);
    const second = again.events.filter(changed).map((e) => e.id!);
    expect([...first, ...second]).to.deep.equal(written);
    expect(again.events.map((e) => e.event)).to.not.include("snapshot");
    redis.disconnect();
  });

  it("a feed listener that throws is logged, and the other listeners of the stream still get the batch", async () => {
    const redis = await testRedisClient();
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const hub = new FeedHub(redis, () => redis.duplicate(), createLogger("data", "error", sink), 200);
    const key = `tessera-test:${isolationPrefix()}feed`;
    const heard: string[] = [];
    try {
      await hub.subscribe(key, () => {
        throw new Error("a listener's bug");
      });
      await hub.subscribe(key, (events) => heard.push(...events.map((e) => e.key as string)));
      for (const k of ["a", "b"])
        await redis.xadd(key, "*", "tx", "t", "table", "doc", "verb", "INSERT", "key", `"${k}"`);
      await until("the second listener heard both events", async () => heard.length >= 2);
      expect(heard).to.deep.equal(["a", "b"]);
      expect(lines.join("")).to.include("a change feed listener failed on a batch");
    } finally {
      hub.close();
      await redis.del(key);
      redis.disconnect();
    }
  });
});
