/**
 * Hostile request bodies and paths through the edge (docs/errors.md, "Request
 * bodies"): every one is refused with 400 or 413 in the documented shape, no
 * service answers 500 or 503, and nothing of a refused request is written.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const DEEP = 10_000;

function nested(depth: number, leaf: unknown = 1): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/** JSON text nested `depth` levels (built as text: JSON.stringify itself would overflow the stack). */
function nestedText(depth: number): string {
  return `${"[".repeat(depth)}1${"]".repeat(depth)}`;
}

function expectRefused(r: Reply, status = 400): void {
  expect(r.status, JSON.stringify(r.body)).to.equal(status);
  expect(r.body).to.include.keys("statusCode", "errorCode", "errorMessage", "requestId");
  expect(r.body.statusCode).to.equal(status);
}

describe("request input: sizes, nesting, encodings, numbers", function () {
  this.timeout(120_000);
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let demo: ReturnType<typeof projectClient>;
  let key: string;

  const definition = demoProject({
    tables: {
      ...demoProject().tables,
      doc: {
        key: ["name"],
        columns: {
          name: { type: "string", required: true },
          body: { type: "json" },
          count: { type: "integer" },
          amount: { type: "number" },
        },
      },
    },
  });

  const send = (method: string, path: string, rawBody: BodyInit) =>
    fetch(`${platform.baseUrl}${demo.root}/${path}`, {
      method,
      headers: { ...keyHeader(key), "content-type": "application/json" },
      body: rawBody,
    }).then(async (r) => ({ status: r.status, body: await r.json(), headers: r.headers }) as Reply);

  const storedDocs = async () => {
    const r = await demo.get(key, "doc");
    expect(r.status).to.equal(200);
    return (r.body as { name: string }[]).map((d) => d.name);
  };

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    expect((await admin.putAccount("acme")).status).to.equal(201);
    expect((await admin.putProject("acme", "demo", definition)).status).to.equal(201);
    await admin.putUser("acme", "demo", "alice", { password: "alice-password", roles: ["Full access"] });
    demo = projectClient(platform.baseUrl, "acme", "demo");
    key = await admin.keyWith("acme", "demo", ["Full access"]);
  });
  after(async () => platform.close());

  it("stores a JSON column nested 10 levels", async () => {
    const r = await demo.post(key, "doc", { name: "ten", body: nested(10) });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect((await demo.get(key, "doc/ten")).body[0].body).to.deep.equal(nested(10));
  });

  it("refuses a JSON column nested 10,000 levels with 400, storing nothing", async () => {
    expectRefused(await send("POST", "doc", `{"name":"deep","body":${nestedText(DEEP)}}`));
    expect(await storedDocs()).not.to.include("deep");
  });

  it("refuses a JSON column nested 100,000 levels with 400, storing nothing", async () => {
    expectRefused(await send("POST", "doc", `{"name":"deeper","body":${nestedText(100_000)}}`));
    expect(await storedDocs()).not.to.include("deeper");
  });

  it("refuses a login body nested 10,000 levels with 400", async () => {
    const r = await fetch(`${platform.baseUrl}${demo.root}/@authentication`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: `{"username":"alice","password":"alice-password","x":${nestedText(DEEP)}}`,
    });
    expectRefused({ status: r.status, body: await r.json(), headers: r.headers });
  });

  it("refuses a definition with a provider config nested 10,000 levels with 400, changing nothing", async () => {
    const text = JSON.stringify(demoProject()).replace(
      '"authentication":{',
      `"authentication":{"config":{"deep":${nestedText(DEEP)}},`,
    );
    const r = await fetch(`${platform.baseUrl}/admin/v1/accounts/acme/projects/demo`, {
      method: "PUT",
      headers: { authorization: `Bearer ${platform.adminToken}`, "content-type": "application/json" },
      body: text,
    });
    expectRefused({ status: r.status, body: await r.json(), headers: r.headers });
    expect((await admin.send("GET", "/accounts/acme/projects/demo")).body.revision).to.equal(1);
  });

  it("refuses a key with a lone surrogate with 400 and stores nothing (a retry answers the same)", async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      expectRefused(await send("POST", "doc", '{"name":"lone\\ud800"}'));
    }
    expect((await storedDocs()).filter((n) => n.startsWith("lone"))).to.deep.equal([]);
  });

  it("refuses a lone surrogate in a value with 400, storing nothing", async () => {
    expectRefused(await send("POST", "customer", '{"name":"surrogate-value","region":"x\\udc00"}'));
    expect((await demo.get(key, "customer/surrogate-value")).body).to.deep.equal([]);
  });

  it("refuses a lone surrogate in a property name with 400, storing nothing", async () => {
    expectRefused(await send("POST", "doc", '{"name":"surrogate-key","body":{"\\ud800":1}}'));
    expect(await storedDocs()).not.to.include("surrogate-key");
  });

  it("refuses invalid UTF-8 bytes with 400 instead of storing U+FFFD", async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"name":"bad-utf8","region":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}'),
    ]);
    expectRefused(await send("POST", "customer", bytes));
    expect((await demo.get(key, "customer/bad-utf8")).body).to.deep.equal([]);
  });

  it("answers 400 to a malformed percent-encoding in @tables/{table}", async () => {
    expectRefused(await demo.get(key, "@tables/%ZZ"));
  });

  /** Sends 10 bodies of `bytes` in parallel to `baseUrl` + `path`, ROUNDS times: every answer's status. */
  async function parallelStatuses(baseUrl: string, path: string, bytes: number, rounds: number) {
    const body = JSON.stringify({ name: "big", notes: "x".repeat(bytes) });
    const statuses: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          call(baseUrl, "POST", path, {
            rawBody: body,
            headers: { ...keyHeader(key), "content-type": "application/json" },
          }),
        ),
      );
      for (const a of answers) {
        expect(a.body.errorCode, JSON.stringify(a.body)).to.equal(4131);
        statuses.push(a.status);
      }
    }
    return statuses;
  }

  it("answers 413 to each of 10 parallel 5 MB POSTs through the edge", async () => {
    const statuses = await parallelStatuses(platform.baseUrl, `${demo.root}/purchaseorder`, 5 << 20, 1);
    expect(statuses).to.deep.equal(Array(10).fill(413));
  });

  it("answers 413 to each of 10 parallel 5 MB POSTs sent to the data service itself (5 rounds)", async () => {
    const statuses = await parallelStatuses(platform.dataUrl, `${demo.root}/purchaseorder`, 5 << 20, 5);
    expect(statuses).to.deep.equal(Array(50).fill(413));
  });

  // The auth service's limit (64 KiB) is below the edge's: the service answers before the body is in.
  it("answers 413 to each of 10 parallel oversized login bodies through the edge (50 rounds)", async () => {
    const statuses = await parallelStatuses(platform.baseUrl, `${demo.root}/@authentication`, 256 << 10, 50);
    expect(statuses).to.deep.equal(Array(500).fill(413));
  });

  it("answers 413 to each of 10 parallel oversized login bodies sent to the auth service itself (50 rounds)", async () => {
    const statuses = await parallelStatuses(platform.authUrl, `${demo.root}/@authentication`, 256 << 10, 50);
    expect(statuses).to.deep.equal(Array(500).fill(413));
  });

  /** POSTs 5 MB of undeclared length (chunked) to `path` through the edge. */
  async function postChunked(path: string): Promise<Reply> {
    const chunk = new TextEncoder().encode("x".repeat(1 << 20));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent++ < 5) controller.enqueue(chunk);
        else controller.close();
      },
    });
    const r = await fetch(`${platform.baseUrl}${demo.root}/${path}`, {
      method: "POST",
      headers: { ...keyHeader(key), "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    return { status: r.status, body: await r.json(), headers: r.headers };
  }

  it("answers 413 to a 5 MB body of undeclared length (chunked) through the edge", async () => {
    expectRefused(await postChunked("purchaseorder"), 413);
  });

  // The auth service answers at its 64 KiB; the edge drops the rest, past its own limit too.
  it("answers 413 to a 5 MB login body of undeclared length (chunked) through the edge", async () => {
    expectRefused(await postChunked("@authentication"), 413);
  });

  for (const text of ["0x10", "0b101", "0o7", "1e1x", " 12 "]) {
    it(`refuses the string "${text}" for an integer column with 400, storing nothing`, async () => {
      const name = `int-${text.trim()}`;
      expectRefused(await demo.post(key, "doc", { name, count: text }));
      expect(await storedDocs()).not.to.include(name);
    });
  }

  it('refuses the string "0x10" for a number column with 400', async () => {
    expectRefused(await demo.post(key, "doc", { name: "hex-number", amount: "0x10" }));
    expect(await storedDocs()).not.to.include("hex-number");
  });

  it("takes plain decimal strings for integer and number columns", async () => {
    const r = await demo.post(key, "doc", { name: "decimal", count: "-16", amount: "2.5" });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    const row = (await demo.get(key, "doc/decimal")).body[0];
    expect([row.count, row.amount]).to.deep.equal([-16, 2.5]);
  });
});
