/**
 * The read API's argument checks and its page answer (pure parts; the reads
 * themselves are in test/integration/scripts): options become the parameters
 * of a GET, keys become a URL's key segment, nothing else gets through.
 */
import { expect } from "chai";
import { SandboxHostError } from "../../../services/data/src/sandbox/index.ts";
import { pageAnswer, parseReadCall } from "../../../services/data/src/scripts/read-api.ts";

function refusal(args: unknown[]): string {
  try {
    parseReadCall(args);
  } catch (e) {
    expect(e).to.be.instanceOf(SandboxHostError);
    return (e as Error).message;
  }
  throw new Error("expected a refusal");
}

describe("read API", () => {
  it("turns options into GET parameters", () => {
    const call = parseReadCall([
      "customer",
      {
        filter: ["a = 1", "b = 2"],
        order: "name desc",
        pagesize: 5,
        offset: 10,
        nometa: true,
        sysfilter: "x",
      },
    ]);
    expect(call.resource).to.equal("customer");
    expect(call.key).to.equal(undefined);
    expect([...call.params]).to.deep.equal([
      ["filter", ["a = 1", "b = 2"]],
      ["order", ["name desc"]],
      ["pagesize", ["5"]],
      ["offset", ["10"]],
      ["nometa", ["true"]],
      ["sysfilter", ["x"]],
    ]);
    expect(parseReadCall(["customer"]).params.size).to.equal(0);
    expect(parseReadCall(["customer", null]).params.size).to.equal(0);
    expect(parseReadCall(["customer", { filter: undefined, order: null }]).params.size).to.equal(0);
  });

  it("turns keys and parents into key segments (each value percent-encoded, joined by ',')", () => {
    expect(parseReadCall(["customer", { key: "O'Neil, Jr/2" }]).key).to.equal("O'Neil%2C%20Jr%2F2");
    expect(parseReadCall(["line", { key: [7, 3] }]).key).to.equal("7,3");
    expect(parseReadCall(["Customers.Orders", { parent: "Jones" }]).params.get("parent")).to.deep.equal([
      "Jones",
    ]);
  });

  it("refuses anything but a resource name and known options of plain values", () => {
    expect(refusal([])).to.equal("tessera.get: the first argument must be a resource name");
    expect(refusal([42])).to.equal("tessera.get: the first argument must be a resource name");
    expect(refusal(["c", {}, {}])).to.equal("tessera.get: takes a resource name and an options object");
    expect(refusal(["c", "filter"])).to.equal("tessera.get: the options must be an object");
    expect(refusal(["c", { account: "other" }])).to.match(
      /^tessera\.get: unknown option 'account' \(key, parent,/,
    );
    expect(refusal(["c", { auth: "k:1" }])).to.match(/^tessera\.get: unknown option 'auth'/);
    expect(refusal(["c", { pagesize: [1, 2] }])).to.equal(
      "tessera.get: option 'pagesize' must be a text, a number or a boolean",
    );
    expect(refusal(["c", { filter: { $gt: "" } }])).to.equal(
      "tessera.get: option 'filter' must be a text, a number or a boolean",
    );
    expect(refusal(["c", { key: [] }])).to.equal(
      "tessera.get: 'key' must be a value, or a list of values in key order",
    );
    expect(refusal(["c", { key: { name: "x" } }])).to.match(/'key' must be a value/);
  });

  it("answers a page as {rows, next}, next naming the parameters of the next page", () => {
    const rows = [{ name: "A" }, { name: "B" }];
    expect(pageAnswer(rows)).to.deep.equal({ rows, next: null });
    expect(
      pageAnswer([
        ...rows,
        { "@metadata": { next_batch: "http://h/rest/a/p/v1/customer?pagesize=2&offset=2&pagekey=WyJCIl0" } },
      ]),
    ).to.deep.equal({ rows, next: { offset: "2", pagekey: "WyJCIl0" } });
    expect(
      pageAnswer([{ "@metadata": { next_batch: "http://h/rest/a/p/v1/customer?order=x&offset=1" } }]),
    ).to.deep.equal({ rows: [], next: { offset: "1" } });
  });
});
