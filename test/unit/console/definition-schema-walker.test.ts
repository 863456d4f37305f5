/**
 * The definition editor's schema walker (console/ui/src/definition/json-schema.ts),
 * its inline problems and its completion, against the schema the server generates
 * from its own definition schema (the one GET /admin/v1/definition-schema serves).
 */
import { expect } from "chai";
import { offersAt } from "../../../services/console/ui/src/definition/completion.ts";
import {
  type JsonSchema,
  KNOWN_KEYWORDS,
  propertiesAt,
  schemaProblems,
  valuesAt,
} from "../../../services/console/ui/src/definition/json-schema.ts";
import { textProblems } from "../../../services/console/ui/src/definition/text-problems.ts";
import { formatJsonPath, parseJsonPath } from "../../../services/console/ui/src/json-location.ts";
import { definitionJsonSchema } from "../../../services/data/src/domain/definition/definition-json-schema.ts";
import { parseProjectDefinition } from "../../../services/data/src/domain/model/definition-check.ts";
import { demoProject } from "../../fixtures/demo-project.ts";

const schema = definitionJsonSchema() as JsonSchema;
/** A definition to break freely. */
const copy = (value: unknown) => JSON.parse(JSON.stringify(value));

/** Every keyword used anywhere in a schema (not the names under `properties` or `$defs`). */
function keywords(node: unknown, found = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) keywords(item, found);
  else if (node && typeof node === "object") {
    for (const [key, value] of Object.entries(node)) {
      found.add(key);
      if (key === "properties" || key === "$defs")
        for (const s of Object.values(value as object)) keywords(s, found);
      else if (!["enum", "const", "default", "required"].includes(key)) keywords(value, found);
    }
  }
  return found;
}

describe("console: the definition schema walker", () => {
  it("knows every keyword the server's generated schema uses", () => {
    const unknown = [...keywords(schema)].filter((k) => !KNOWN_KEYWORDS.has(k));
    expect(unknown, "keywords the walker would ignore").to.deep.equal([]);
  });

  it("finds nothing wrong with a definition the server accepts", () => {
    const demo = demoProject();
    expect(parseProjectDefinition(demo).ok).to.equal(true);
    expect(schemaProblems(schema, demo)).to.deep.equal([]);
  });

  it("names each structural mistake at its path, as the server does", () => {
    const demo = copy(demoProject());
    demo.tables.customer.columns.name.type = "text";
    demo.tables.customer.colums = {};
    delete demo.apiVersions;
    demo.rules = [
      { type: "sum", table: "customer", column: "balance", children: "orders" },
      { type: "summ" },
    ];
    const problems = schemaProblems(schema, demo).map((p) => [p.path.join("/"), p.message]);
    expect(problems).to.deep.include.members([
      ["", "needs 'apiVersions'"],
      ["tables/customer/colums", "unknown field 'colums'"],
      ["rules/0", "needs 'of'"],
    ]);
    const typeProblem = problems.find(([path]) => path === "tables/customer/columns/name/type")!;
    expect(typeProblem[1]).to.match(/^must be one of "string", "number", "integer"/);
    const ruleType = problems.find(([path]) => path === "rules/1/type")!;
    expect(ruleType[1]).to.match(/^must be one of "sum", "count", "min", "max", "formula"/);
    // The server refuses the same definition at the same places.
    const server = parseProjectDefinition(demo);
    expect(server.ok).to.equal(false);
    const serverPaths = (server as { problems: { path: string }[] }).problems.map((p) => p.path);
    expect(serverPaths).to.include.members([
      "$.apiVersions",
      "$.tables.customer.colums",
      "$.tables.customer.columns.name.type",
    ]);
  });

  it("checks names, lengths, numbers and list sizes", () => {
    const demo = copy(demoProject());
    demo.tables["1st"] = { key: [], columns: {} };
    demo.authentication = { keyLifetimeSeconds: -1 };
    const problems = schemaProblems(schema, demo).map((p) => `${p.path.join("/")}: ${p.message}`);
    expect(problems).to.include("tables/1st: the name must match ^[A-Za-z][A-Za-z0-9_-]{0,62}$");
    expect(problems).to.include("tables/1st/key: must have at least 1 item(s)");
    expect(problems).to.include("authentication/keyLifetimeSeconds: must be greater than 0");
  });

  it("follows references (subresources within subresources)", () => {
    const demo = copy(demoProject());
    demo.apiVersions.v1.resources.Deep = {
      table: "customer",
      subresources: {
        A: {
          table: "purchaseorder",
          via: "customer",
          subresources: { B: { table: "x", via: "y", bogus: 1 } },
        },
      },
    };
    expect(schemaProblems(schema, demo).map((p) => p.path.join("/"))).to.deep.equal([
      "apiVersions/v1/resources/Deep/subresources/A/subresources/B/bogus",
    ]);
  });

  it("offers the properties of the object at a path, and the values of a field", () => {
    const column = propertiesAt(schema, {}, ["tables", "t", "columns", "c"]).map((p) => p.name);
    expect(column).to.deep.equal(["type", "required", "generated", "default", "maxLength"]);
    const table = propertiesAt(schema, {}, ["tables", "t"]);
    expect(table.find((p) => p.name === "key")).to.include({ required: true, detail: "list of string" });
    expect(valuesAt(schema, {}, ["tables", "t", "columns", "c", "type"])).to.include.members([
      "date",
      "json",
    ]);
    expect(valuesAt(schema, {}, ["tables", "t", "columns", "c", "required"])).to.deep.equal([true, false]);
    // A rule's fields depend on its type; its type may be any of them while it is typed.
    const doc = { rules: [{ type: "formula" }] };
    expect(propertiesAt(schema, doc, ["rules", 0]).map((p) => p.name)).to.have.members([
      "table",
      "name",
      "type",
      "column",
      "expression",
    ]);
    expect(valuesAt(schema, doc, ["rules", 0, "type"])).to.include.members([
      "sum",
      "formula",
      "managedParent",
    ]);
  });
});

describe("console: problems in the definition's text", () => {
  it("writes paths as the server does, and reads them back", () => {
    const segments = ["roles", "Region reader", "tables", "customer", "columns", 0, 'say "hi"'];
    const written = formatJsonPath(segments);
    expect(written).to.equal('$.roles["Region reader"].tables.customer.columns[0]["say \\"hi\\""]');
    expect(parseJsonPath(written)).to.deep.equal(segments);
    expect(formatJsonPath([])).to.equal("$");
  });

  it("reports JSON syntax errors at their place", () => {
    const text = '{\n  "tables": {,\n}';
    const problems = textProblems(schema, text);
    expect(problems).to.have.length(1);
    expect(problems[0]).to.include({ kind: "syntax", line: 2, path: "$" });
    expect(problems[0]!.message).to.match(/^JSON: /);
    expect(textProblems(schema, '{"a": 1, // no\n}')[0]!.message).to.equal("JSON: JSON has no comments");
    expect(textProblems(schema, '{"a": [1,]}').length).to.be.greaterThan(0);
  });

  it("marks an unknown field's name and a wrong value, with their paths and lines", () => {
    const text = JSON.stringify(
      { tables: { t: { key: ["a"], columns: { a: { type: "txt" } }, extra: 1 } }, apiVersions: {} },
      null,
      2,
    );
    const problems = textProblems(schema, text);
    const unknown = problems.find((p) => p.path === "$.tables.t.extra")!;
    expect(text.slice(unknown.from, unknown.to)).to.equal('"extra"');
    const type = problems.find((p) => p.path === "$.tables.t.columns.a.type")!;
    expect(text.slice(type.from, type.to)).to.equal('"txt"');
    expect(type.line).to.equal(9);
  });

  it("marks a missing field at the name of the object that lacks it (the document's brace at the top)", () => {
    const text = '{\n  "tables": {"t": {"columns": {}}}\n}';
    const problems = textProblems(schema, text);
    const key = problems.find((p) => p.path === "$.tables.t")!;
    expect(text.slice(key.from, key.to)).to.equal('"t"');
    expect(key.message).to.equal("needs 'key'");
    const top = problems.find((p) => p.path === "$")!;
    expect([top.from, top.to]).to.deep.equal([0, 1]);
  });
});

describe("console: completion in the definition editor", () => {
  it("offers the property names an object may still have, replacing what was typed", () => {
    const start = '{"tables": {"t": {"key": ["a"], "';
    const all = offersAt(schema, start, start.length)!;
    expect(all.options.map((o) => o.label)).to.have.members(["columns", "parents", "indexes"]);
    const text = `${start}COL`;
    const offers = offersAt(schema, text, text.length)!;
    expect(offers.from).to.equal(start.length - 1);
    expect(offers.options.map((o) => o.label)).to.deep.equal(["columns"]);
    expect(offers.options[0]!.apply).to.equal('"columns": ');
    expect(offersAt(schema, `${start}zz`, start.length + 2)).to.equal(undefined);
  });

  it("replaces a closing quote inserted with the opening one", () => {
    const text = '{"tables": {}, "api"}';
    const at = text.indexOf('api"') + 3;
    const offers = offersAt(schema, text, at)!;
    expect(text.slice(offers.from, offers.to)).to.equal('"api"');
    expect(offers.options.map((o) => o.label)).to.include("apiVersions");
  });

  it("offers enum values after a colon", () => {
    const text = '{"tables": {"t": {"columns": {"c": {"type": ';
    const offers = offersAt(schema, text, text.length)!;
    expect(offers.options.map((o) => o.apply)).to.include.members(['"string"', '"datetime"']);
    const typed = `${text}"da`;
    expect(offersAt(schema, typed, typed.length)!.options.map((o) => o.apply)).to.deep.equal([
      '"date"',
      '"datetime"',
    ]);
    expect(offersAt(schema, '{"description": ', 16)).to.equal(undefined);
  });
});
