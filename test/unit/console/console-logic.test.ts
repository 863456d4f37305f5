/**
 * The console's pure logic: where a definition problem's JSON path is in the text,
 * where a 4002 error points, what an edited text is sent as, and how key
 * expirations (UTC without a zone) are read.
 */
import { expect } from "chai";
import { expirationTime } from "../../../services/console/ui/src/api.ts";
import { queryErrorPlace } from "../../../services/console/ui/src/explorer/query-error.ts";
import { editableText, editedValue } from "../../../services/console/ui/src/explorer/values.ts";
import { locate, parseJsonPath } from "../../../services/console/ui/src/json-location.ts";

describe("console: JSON paths of definition problems", () => {
  it("reads dotted names, indexes and quoted names", () => {
    expect(parseJsonPath("$.tables.customer.key[0]")).to.deep.equal(["tables", "customer", "key", 0]);
    expect(parseJsonPath('$.roles["Region reader"].tables.customer.rowFilter')).to.deep.equal([
      "roles",
      "Region reader",
      "tables",
      "customer",
      "rowFilter",
    ]);
    expect(parseJsonPath('$.roles["say \\"hi\\""]')).to.deep.equal(["roles", 'say "hi"']);
    expect(parseJsonPath("$")).to.deep.equal([]);
    expect(parseJsonPath("tables.customer")).to.equal(undefined);
    expect(parseJsonPath("$.a[x]")).to.equal(undefined);
  });

  it("finds the value's span and line, or the deepest part of the path that exists", () => {
    const text = JSON.stringify({ tables: { customer: { key: ["nope"] } }, roles: { "a b": {} } }, null, 2);
    const key = locate(text, "$.tables.customer.key[0]")!;
    expect(text.slice(key.offset, key.offset + key.length)).to.equal('"nope"');
    expect(key.line).to.equal(5);
    const role = locate(text, '$.roles["a b"].tables')!;
    expect(text.slice(role.offset, role.offset + role.length)).to.equal('"a b": {}');
    expect(() => locate("{ broken", "$.x")).to.not.throw();
    expect(locate(text, "no path")).to.equal(undefined);
  });
});

describe("console: 4002 positions", () => {
  it("names the parameter and the 0-based offset", () => {
    expect(queryErrorPlace("Invalid filter at position 11: expected a value")).to.deep.equal({
      parameter: "filter",
      offset: 10,
    });
    expect(queryErrorPlace("Invalid sysorder at position 2: nope")).to.deep.equal({
      parameter: "sysorder",
      offset: 1,
    });
    expect(queryErrorPlace("Invalid order: too many keys")).to.deep.equal({
      parameter: "order",
      offset: undefined,
    });
    expect(queryErrorPlace("The API key has expired")).to.equal(undefined);
  });
});

describe("console: edited values", () => {
  it("keeps text as text, numbers and booleans typed, and an emptied non-text value null", () => {
    expect(editedValue("Jones", "")).to.equal("");
    expect(editedValue("Jones", "42")).to.equal("42");
    expect(editedValue(10, "12.5")).to.equal(12.5);
    expect(editedValue(10, "lots")).to.equal("lots");
    expect(editedValue(10, " ")).to.equal(null);
    expect(editedValue(false, "true")).to.equal(true);
    expect(editedValue(null, "false")).to.equal(false);
    expect(editedValue(null, "7")).to.equal("7");
    expect(editedValue({ a: 1 }, '{"a":2}')).to.deep.equal({ a: 2 });
    expect(editedValue({ a: 1 }, "{broken")).to.equal("{broken");
  });

  it("shows values as editable text", () => {
    expect(editableText(null)).to.equal("");
    expect(editableText({ a: 1 })).to.equal('{"a":1}');
    expect(editableText(3)).to.equal("3");
  });
});

describe("console: key expirations", () => {
  it("reads UTC times without a zone as UTC, and null as never", () => {
    expect(expirationTime("2025-03-01T12:00:00.000")).to.equal(Date.UTC(2025, 2, 1, 12));
    expect(expirationTime("2025-03-01T12:00:00.000Z")).to.equal(Date.UTC(2025, 2, 1, 12));
    expect(expirationTime("2025-03-01T13:00:00+01:00")).to.equal(Date.UTC(2025, 2, 1, 12));
    expect(expirationTime(null)).to.equal(undefined);
    expect(expirationTime("soon")).to.equal(undefined);
  });
});
