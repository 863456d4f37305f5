/** LAC's JavaScript and SQL fragments as Tessera's (lac-code.ts, sql-predicates.ts): what maps, and why what does not. */
import { expect } from "chai";
import {
  judgeCode,
  qualification,
  validationMessage,
  verbGuard,
} from "../../../services/data/src/domain/lac-import/lac-code.ts";
import { sqlFilter, sqlOrder } from "../../../services/data/src/domain/lac-import/sql-predicates.ts";

const columns =
  (...names: string[]) =>
  (name: string) =>
    names.find((n) => n.toLowerCase() === name.toLowerCase());

describe("LAC import: code", () => {
  it("keeps code that uses what the sandbox offers, noting LAC's log object", () => {
    expect(judgeCode("return row.a * 2;")).to.deep.equal({ ok: true, usesLog: false });
    expect(
      judgeCode("log.debug('x'); if (logicContext.verb === 'INSERT') logicContext.insert('t', {a: 1});"),
    ).to.deep.equal({ ok: true, usesLog: true });
    expect(
      judgeCode("var out = 1; function f(req) { return req + out; } return f(2);", ["req"]),
    ).to.deep.equal({ ok: true, usesLog: false });
  });

  it("refuses code using what LAC offered and the sandbox does not, naming it", () => {
    const beans = judgeCode(
      "var b = logicContext.createPersistentBean('t'); b.x = 1; logicContext.insert(b);",
    );
    expect(beans.ok).to.equal(false);
    expect(!beans.ok && beans.reason).to.contain(
      "'logicContext.createPersistentBean', 'logicContext.insert(bean)'",
    );
    const util = judgeCode("return SysUtility.getResource('x');");
    expect(!util.ok && util.reason).to.contain("'SysUtility'");
    const java = judgeCode("var d = new java.util.Date(); return d;");
    expect(!java.ok && java.reason).to.contain("'java'");
    const request = judgeCode("return json.length;", ["json"]);
    expect(!request.ok && request.reason).to.contain("'json'");
    const broken = judgeCode("return (;");
    expect(!broken.ok && broken.reason).to.contain("does not parse");
  });

  it("guards an event to the verbs LAC ran it for", () => {
    expect(verbGuard("INSERT,")).to.equal(
      'if (["INSERT"].indexOf(logicContext.verb) === -1) return; // LAC verbs: INSERT\n',
    );
    expect(verbGuard("INSERT,UPDATE,DELETE")).to.equal(undefined);
    expect(verbGuard(null)).to.equal(undefined);
  });

  it("reads an aggregate's qualification from `row`; a lone = compares; a name that is no column is refused", () => {
    const child = columns("ShippedDate", "paid", "amount");
    expect(qualification("null === ShippedDate", child)).to.deep.equal({
      ok: true,
      where: "null === row.ShippedDate",
    });
    expect(qualification("paid = false", child)).to.deep.equal({ ok: true, where: "row.paid == false" });
    expect(qualification("amount > 10 && !paid", child)).to.deep.equal({
      ok: true,
      where: "row.amount > 10 && !row.paid",
    });
    const unknown = qualification("status === 'open'", child);
    expect(!unknown.ok && unknown.reason).to.contain("'status'");
    const sql = qualification("paid <> 0", child);
    expect(!sql.ok && sql.reason).to.contain("does not parse");
  });

  it("makes a validation message's insertions Tessera's, reporting formats and unknown names", () => {
    expect(
      validationMessage("Balance ({Balance|#,##0.00}) over {limit} for {Who}", columns("Balance", "Limit")),
    ).to.deep.equal({
      text: "Balance ({Balance}) over {Limit} for Who",
      formats: ["Balance|#,##0.00"],
      unknown: ["Who"],
    });
  });
});

describe("LAC import: SQL filters and sorts", () => {
  const customer = columns("Region", "Balance", "Name", "Tier", "in");
  it("translates conditions, with globals bound as whole values", () => {
    expect(sqlFilter(`"Region" = '@{UserRegion}'`, customer)).to.deep.equal({
      ok: true,
      text: "Region = @{UserRegion}",
    });
    expect(sqlFilter("Region = @{UserRegion} and Balance > 10", customer)).to.deep.equal({
      ok: true,
      text: "Region = @{UserRegion} and Balance > 10",
    });
    expect(
      sqlFilter("(Balance >= 1 OR Name LIKE 'A%') AND NOT Tier IN (1, 2) AND Region IS NOT NULL", customer),
    ).to.deep.equal({
      ok: true,
      text: "(Balance >= 1 or Name like 'A%') and (not Tier in (1, 2) and Region is not null)",
    });
    expect(sqlFilter("Balance BETWEEN 1 AND 5 AND Name = 'O''Hara' AND \"in\" = 1", customer)).to.deep.equal({
      ok: true,
      text: "((Balance >= 1 and Balance <= 5) and Name = 'O''Hara') and \"in\" = 1",
    });
  });

  it("says why a condition cannot be translated", () => {
    const reasons = [
      "Balance > Tier",
      "upper(Name) = 'X'",
      "Name = 'x@{UserRegion}'",
      "Nope = 1",
      "Balance >",
    ].map((p) => {
      const t = sqlFilter(p, customer);
      return t.ok ? "" : t.reason;
    });
    expect(reasons[0]).to.contain("not with other attributes");
    expect(reasons[1]).to.contain("left side of a comparison must be an attribute");
    expect(reasons[2]).to.contain("a global inside a longer text");
    expect(reasons[3]).to.contain("'Nope' is not an attribute");
    expect(reasons[4]).to.contain("does not read as an SQL condition");
  });

  it("translates sorts, and refuses one on a name that is not an attribute", () => {
    expect(sqlOrder(`"Name" asc, Balance DESC`, customer)).to.deep.equal({
      ok: true,
      text: "Name, Balance desc",
    });
    const refused = sqlOrder("CompanyName", customer);
    expect(!refused.ok && refused.reason).to.contain("'CompanyName' is not an attribute");
  });
});
