import { expect } from "chai";
import {
  type CodeKind,
  parseRuleCode,
  type RowRefs,
} from "../../../services/data/src/domain/model/rule-code.ts";

function code(src: string, kind: CodeKind = "code") {
  const result = parseRuleCode(src, kind);
  if (!result.ok) throw new Error(result.error);
  return result.code;
}
const refs = (src: string): RowRefs => code(src).row;
const names = (src: string) => [...refs(src).names].sort();
const nested = (src: string) => Object.fromEntries([...refs(src).nested].map(([k, v]) => [k, [...v].sort()]));

describe("logic: what a rule reads from row", () => {
  it("finds attributes read with dots, brackets and optional chaining", () => {
    expect(names("row.qty * row['price'] + row?.discount")).to.deep.equal(["discount", "price", "qty"]);
    expect(names('row["a b"]')).to.deep.equal(["a b"]);
  });

  it("finds parent attributes", () => {
    expect(nested("row.qty * row.product.price + row.product['weight'] + row.order?.paid")).to.deep.equal({
      order: ["paid"],
      product: ["price", "weight"],
    });
    expect(refs("row.product.price").whole.has("product")).to.equal(false);
    expect(refs("f(row.product)").whole.has("product")).to.equal(true);
  });

  it("takes an assigned attribute's parent object as read whole", () => {
    expect(refs("row.product.price = 1").whole.has("product")).to.equal(true);
    expect(nested("row.product.price += 1")).to.deep.equal({ product: ["price"] });
    expect([...refs("row.label = row.name.toUpperCase();").whole]).to.deep.equal(["label"]);
  });

  it("ignores strings, comments, regular expressions and other objects' properties", () => {
    const src = `
      // row.a in a comment
      /* row.b */
      const s = "row.c" + 'row.d' + \`row.e \${row.f}\`;
      const r = /row.g/.test(x);
      other.row.h;
      return { row: 1 }.row;
    `;
    expect(names(src)).to.deep.equal(["f"]);
    expect(refs(src).dynamic).to.equal(false);
  });

  it("marks dynamic use of row", () => {
    for (const src of [
      "Object.keys(row).length",
      "row[name]",
      "row[0]",
      "f(row)",
      "const r = {row}",
      "list.map((row) => row.x)",
    ]) {
      expect(refs(src).dynamic, src).to.equal(true);
    }
    expect(refs("row.a").dynamic).to.equal(false);
  });

  it("does not mistake division for a regular expression", () => {
    expect(names("row.a / 2 + row.b / row.c")).to.deep.equal(["a", "b", "c"]);
    expect(names("(row.a) / 2 / row.b")).to.deep.equal(["a", "b"]);
  });

  it("reads oldRow separately", () => {
    const parsed = code("row.a - oldRow.b");
    expect([...parsed.row.names]).to.deep.equal(["a"]);
    expect([...parsed.oldRow.names]).to.deep.equal(["b"]);
  });
});

describe("logic: parsing rule code", () => {
  it("returns an expression, and takes code with statements as a function body", () => {
    expect(code("row.a * 2", "expression").body).to.equal("return (row.a * 2\n);");
    expect(code("row.a // double it", "expression").body).to.equal("return (row.a // double it\n);");
    expect(code("{total: row.a}", "expression").body).to.equal("return ({total: row.a}\n);");
    expect(code("const q = row.a; return q * 2;", "expression").body).to.equal(
      "const q = row.a; return q * 2;",
    );
    expect(code("row.b = 1;").body).to.equal("row.b = 1;");
  });

  it("reports the first syntax error with its line and column", () => {
    expect(parseRuleCode("row.qty_ordered * ", "expression")).to.deep.equal({
      ok: false,
      error: "Unexpected token at line 1, column 19",
    });
    expect(parseRuleCode("row.a row.b", "expression")).to.deep.equal({
      ok: false,
      error: "Unexpected token at line 1, column 7",
    });
    expect(parseRuleCode("if (x {", "code")).to.deep.equal({
      ok: false,
      error: "Unexpected token at line 1, column 7",
    });
    expect(parseRuleCode("const a = 1;\nreturn a +", "expression")).to.deep.equal({
      ok: false,
      error: "Unexpected token at line 2, column 11",
    });
  });

  it("never takes text that closes the expression's parenthesis as valid", () => {
    expect(parseRuleCode("1) + (2", "expression").ok).to.equal(false);
  });
});
