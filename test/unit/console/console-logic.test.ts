/**
 * The console's pure logic: where a definition problem's JSON path is in the text,
 * where a 4002 error points, what an edited text is sent as, and how key
 * expirations (UTC without a zone) are read.
 */
import { expect } from "chai";
import { expirationTime } from "../../../services/console/ui/src/api.ts";
import { csvRecords } from "../../../services/console/ui/src/explorer/csv-records.ts";
import { parseView, viewRoute } from "../../../services/console/ui/src/explorer/explorer-url.ts";
import {
  andCondition,
  conditionText,
  nextOrder,
  sortOf,
} from "../../../services/console/ui/src/explorer/filter-text.ts";
import { queryErrorPlace } from "../../../services/console/ui/src/explorer/query-error.ts";
import { childNamesOf, columnsOf } from "../../../services/console/ui/src/explorer/rows.ts";
import { draftChanged, draftOf, typedValue } from "../../../services/console/ui/src/explorer/typed-values.ts";
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

describe("console: typed values", () => {
  it("sends each column type as its type, null when asked, and says what does not fit", () => {
    const v = (type: string, text: string, isNull = false) => typedValue(type, { text, isNull });
    expect(v("string", "")).to.deep.equal({ ok: true, value: "" });
    expect(v("string", "x", true)).to.deep.equal({ ok: true, value: null });
    expect(v("number", "12.5")).to.deep.equal({ ok: true, value: 12.5 });
    expect(v("number", "lots").ok).to.equal(false);
    expect(v("integer", "1.5").ok).to.equal(false);
    expect(v("boolean", "false")).to.deep.equal({ ok: true, value: false });
    expect(v("datetime", "2026-01-31T17:05:09")).to.deep.equal({ ok: true, value: "2026-01-31T17:05:09Z" });
    expect(v("json", '{"a":[1]}')).to.deep.equal({ ok: true, value: { a: [1] } });
    expect(v("json", "{broken").ok).to.equal(false);
  });

  it("shows values in the editors' forms: UTC date-times without the zone, JSON indented, null apart", () => {
    expect(draftOf("datetime", "2026-01-31T17:05:09.000Z")).to.deep.equal({
      text: "2026-01-31T17:05:09",
      isNull: false,
    });
    expect(draftOf("json", { a: 1 }).text).to.equal('{\n  "a": 1\n}');
    expect(draftOf("string", null)).to.deep.equal({ text: "", isNull: true });
    expect(draftChanged("string", null, { text: "", isNull: false }), "null to empty text").to.equal(true);
    expect(draftChanged("string", "a", { text: "a", isNull: false })).to.equal(false);
  });
});

describe("console: rows and their child lists", () => {
  it("never takes a child list for an attribute because one row's list is empty", () => {
    const rows = [
      { Name: "A", Orders: [], "@metadata": {} },
      { Name: "B", Orders: [{ amount: 1, "@metadata": { href: "x" } }], "@metadata": {} },
    ];
    const children = childNamesOf(rows);
    expect([...children]).to.deep.equal(["Orders"]);
    expect(columnsOf(rows, children)).to.deep.equal(["Name"]);
    expect([...childNamesOf([{ Name: "A", Orders: [] }])], "every list empty").to.deep.equal(["Orders"]);
    expect([...childNamesOf([{ tags: ["a"] }])], "a json column's list").to.deep.equal([]);
  });
});

describe("console: the filter language, written", () => {
  it("quotes names and values as the language wants", () => {
    expect(conditionText("name", "string", "=", "O'Brien")).to.equal("name = 'O''Brien'");
    expect(conditionText("first name", "string", "like", "A%")).to.equal(`"first name" like 'A%'`);
    expect(conditionText("in", "integer", ">", "5")).to.equal(`"in" > 5`);
    expect(conditionText("n", "integer", ">", "5 or 1=1")).to.equal("n > '5 or 1=1'");
    expect(conditionText("ok", "boolean", "=", "TRUE")).to.equal("ok = true");
    expect(conditionText("notes", "json", "is not null", "")).to.equal("notes is not null");
    expect(andCondition("", "a = 1")).to.equal("a = 1");
    expect(andCondition("a = 1 or b = 2", "c = 3")).to.equal("(a = 1 or b = 2) and c = 3");
  });

  it("sorts by a header: ascending, descending, then the default order", () => {
    expect(nextOrder("", "name")).to.equal("name asc");
    expect(nextOrder("name asc", "name")).to.equal("name desc");
    expect(nextOrder("name desc", "name")).to.equal("");
    expect(nextOrder("name desc", "balance")).to.equal("balance asc");
    expect(sortOf(`"first name" DESC, x`, "first name")).to.equal("descending");
    expect(sortOf("name", "name")).to.equal("ascending");
  });
});

describe("console: the explorer in the URL", () => {
  it("reads and writes table, filter, order, page size, page and open row", () => {
    const view = parseView(
      ["explorer", "customer"],
      "filter=a+%3D+1&order=a+desc&pagesize=50&page=3&row=customer%2FA4",
    );
    expect(view).to.deep.equal({
      place: undefined,
      table: "customer",
      filter: "a = 1",
      order: "a desc",
      pagesize: 50,
      page: 3,
      row: "customer/A4",
    });
    expect(viewRoute(view)[1]).to.deep.equal({
      filter: "a = 1",
      order: "a desc",
      pagesize: "50",
      page: "3",
      row: "customer/A4",
    });
    const odd = parseView(["explorer"], "pagesize=-4&page=abc");
    expect([odd.table, odd.pagesize, odd.page]).to.deep.equal([undefined, 100, 1]);
    expect(parseView([], "pagesize=999999").pagesize).to.equal(5000);
  });

  it("keeps the whole place in the address: account, project and version before the table", () => {
    const place = { account: "acme", project: "shop floor", version: "v1" };
    const view = parseView(["explorer", "acme", "shop floor", "v1", "Owners.Pets"], "row=Owners%2FA");
    expect([view.place, view.table, view.row]).to.deep.equal([place, "Owners.Pets", "Owners/A"]);
    expect(viewRoute(view)[0]).to.deep.equal(["explorer", "acme", "shop floor", "v1", "Owners.Pets"]);
    const projectOnly = parseView(["explorer", "acme", "shop floor", "v1"], "");
    expect([projectOnly.place, projectOnly.table]).to.deep.equal([place, undefined]);
    expect(viewRoute(projectOnly)[0]).to.deep.equal(["explorer", "acme", "shop floor", "v1"]);
  });
});

describe("console: CSV records", () => {
  it("reads quoted fields with commas, quotes and line breaks, and tells empty from quoted empty", () => {
    const records = csvRecords('name,notes\r\nA,"x, ""y""\r\nz"\r\nB,\r\nC,""\n');
    expect(records.map((r) => r.line)).to.deep.equal([1, 2, 4, 5]);
    expect(records[1]!.fields).to.deep.equal([
      { text: "A", quoted: false },
      { text: 'x, "y"\r\nz', quoted: true },
    ]);
    expect(records[2]!.fields[1]).to.deep.equal({ text: "", quoted: false });
    expect(records[3]!.fields[1]).to.deep.equal({ text: "", quoted: true });
    expect(() => csvRecords('a\n"open')).to.throw(/Line 2/);
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
