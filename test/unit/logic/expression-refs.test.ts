import { expect } from "chai";
import { rowRefs } from "../../../services/data/src/logic/expression-refs.ts";

const names = (src: string) => [...rowRefs(src).names].sort();
const nested = (src: string) =>
  Object.fromEntries([...rowRefs(src).nested].map(([k, v]) => [k, [...v].sort()]));

describe("logic: what a rule reads from row", () => {
  it("finds attributes read with dots, brackets and optional chaining", () => {
    expect(names("row.qty * row['price'] + row?.discount")).to.deep.equal(["discount", "price", "qty"]);
    expect(names('row["a b"]')).to.deep.equal(["a b"]);
  });

  it("finds parent attributes", () => {
    expect(nested("row.qty * row.product.price + row.product['weight']")).to.deep.equal({
      product: ["price", "weight"],
    });
    expect(rowRefs("row.product.price").whole.has("product")).to.equal(false);
    expect(rowRefs("f(row.product)").whole.has("product")).to.equal(true);
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
    expect(rowRefs(src).dynamic).to.equal(false);
  });

  it("marks dynamic use of row", () => {
    expect(rowRefs("Object.keys(row).length").dynamic).to.equal(true);
    expect(rowRefs("row[name]").dynamic).to.equal(true);
    expect(rowRefs("row.a").dynamic).to.equal(false);
  });

  it("does not mistake division for a regular expression", () => {
    expect(names("row.a / 2 + row.b / row.c")).to.deep.equal(["a", "b", "c"]);
    expect(names("(row.a) / 2 / row.b")).to.deep.equal(["a", "b"]);
  });

  it("reads oldRow separately", () => {
    expect(names("row.a - oldRow.b")).to.deep.equal(["a"]);
    expect([...rowRefs("row.a - oldRow.b", "oldRow").names]).to.deep.equal(["b"]);
  });
});
