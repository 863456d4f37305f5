/**
 * The sandbox program of a version's JavaScript, on an in-process IsolatePool:
 * libraries load first, each script is compiled on its own (its text cannot
 * reach the dispatcher or other scripts), and events report changes made in
 * place while an unchanged answer does not travel back.
 */
import { expect } from "chai";
import type { VersionScripts } from "../../../services/data/src/domain/model/script-model.ts";
import { IsolatePool } from "../../../services/data/src/sandbox/index.ts";
import { ENTRY, scriptProgramSources } from "../../../services/data/src/scripts/script-program.ts";

function scripts(parts: Partial<VersionScripts>): VersionScripts {
  return { resources: new Map(), requestEvents: [], responseEvents: [], libraries: [], ...parts };
}

const resource = (name: string, code: string) => [name, { name, code, roles: undefined }] as const;
const event = (type: "request" | "response", index: number, code: string) => ({
  type,
  index,
  label: `#${index + 1}`,
  code,
});

describe("script program", () => {
  let pool: IsolatePool;
  let seq = 0;

  beforeEach(() => {
    pool = new IsolatePool({ allowLoopbackFetch: false, timeoutMs: 1000 });
  });

  afterEach(async () => {
    await pool.close();
  });

  function program(version: VersionScripts, libraries: Record<string, { code: string }> = {}) {
    return pool.program(`t/p${++seq}/v1/scripts`, scriptProgramSources(version, libraries));
  }

  it("runs a resource with its request and principal, after the version's libraries", async () => {
    const p = program(
      scripts({
        resources: new Map([
          resource("Hello", "return { text: greet(request.key) + ' as ' + principal.roles[0] };"),
        ]),
        libraries: ["greetings"],
      }),
      {
        greetings: { code: "function greet(name) { return 'Hello, ' + name; }" },
        unused: { code: "throw 1" },
      },
    );
    const answer = await p.call(ENTRY, [
      "resource",
      "Hello",
      { request: { key: "you" }, principal: { roles: ["Reader"] } },
    ]);
    expect(answer).to.deep.equal({ value: { text: "Hello, you as Reader" } });
  });

  it("compiles each script on its own: its text cannot close the function or reach the dispatcher", async () => {
    const p = program(
      scripts({
        resources: new Map([
          resource("Breakout", "return 1; }); globalThis.pwned = true; (function () {"),
          resource("Peek", "return { code: typeof code, compiled: typeof compiled, pwned: typeof pwned };"),
        ]),
      }),
    );
    const breakout = await p.call(ENTRY, ["resource", "Breakout", { request: {} }]).catch((e) => e);
    expect((breakout as Error).message).to.match(/SyntaxError/);
    expect(await p.call(ENTRY, ["resource", "Peek", { request: {} }])).to.deep.equal({
      value: { code: "undefined", compiled: "undefined", pwned: "undefined" },
    });
    const unknown = await p.call(ENTRY, ["resource", "__proto__", { request: {} }]).catch((e) => e);
    expect((unknown as Error).message).to.match(/No resource script __proto__/);
  });

  it("request events: nothing, a body changed in place, or their own answer", async () => {
    const p = program(
      scripts({
        requestEvents: [
          event("request", 0, "if (request.body) request.body.seen = true;"),
          event("request", 1, "return { reject: { statusCode: 403 } };"),
        ],
      }),
    );
    expect(await p.call(ENTRY, ["request", "0", { request: { method: "GET" } }])).to.deep.equal({});
    expect(await p.call(ENTRY, ["request", "0", { request: { body: { a: 1 } } }])).to.deep.equal({
      value: { body: { a: 1, seen: true } },
    });
    expect(await p.call(ENTRY, ["request", "1", { request: {} }])).to.deep.equal({
      value: { reject: { statusCode: 403 } },
    });
  });

  it("response events: the body they return, the body changed in place, or nothing when unchanged", async () => {
    const p = program(
      scripts({
        responseEvents: [
          event("response", 0, "return { wrapped: response.body };"),
          event("response", 1, "response.body.push(response.statusCode);"),
          event("response", 2, "const copy = response.body.map((x) => x); copy.push(0);"),
        ],
      }),
    );
    const input = { response: { statusCode: 200, body: [1] }, request: {} };
    expect(await p.call(ENTRY, ["response", "0", input])).to.deep.equal({ value: { wrapped: [1] } });
    expect(await p.call(ENTRY, ["response", "1", input])).to.deep.equal({ value: [1, 200] });
    expect(await p.call(ENTRY, ["response", "2", input])).to.deep.equal({});
  });
});
