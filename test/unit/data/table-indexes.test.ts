/** The store indexes a table definition asks for (domain/model/table-indexes.ts). */
import { expect } from "chai";
import type { TableDefinition } from "../../../services/data/src/domain/definition/project-definition.ts";
import { indexServes, tableIndexes } from "../../../services/data/src/domain/model/table-indexes.ts";

const columns = { type: "string" } as const;

function table(parts: Partial<TableDefinition>): TableDefinition {
  return {
    key: ["order_number", "line"],
    columns: { order_number: columns, line: columns, product: columns, region: columns },
    ...parts,
  };
}

const names = (t: TableDefinition) => tableIndexes(t).map((i) => `${i.name}${i.unique ? "!" : ""}`);

describe("table indexes", () => {
  it("indexes the key, each foreign key then the key, and the table's own indexes then the key", () => {
    const t = table({
      parents: { product: { table: "product", columns: { product: "number" } } },
      indexes: [{ columns: ["region"] }, { columns: ["region", "product"], unique: true }],
    });
    expect(tableIndexes(t)).to.deep.equal([
      { name: "key", columns: ["order_number", "line"], unique: false, origin: "key" },
      {
        name: "ix_region_order_number_line",
        columns: ["region", "order_number", "line"],
        unique: false,
        origin: "definition",
      },
      { name: "ux_region_product", columns: ["region", "product"], unique: true, origin: "definition" },
      {
        name: "fk_product_order_number_line",
        columns: ["product", "order_number", "line"],
        unique: false,
        origin: "foreign key",
      },
    ]);
  });

  it("leaves out an index whose columns begin a longer one (the key serves a foreign key that begins it)", () => {
    const t = table({ parents: { order: { table: "order", columns: { order_number: "order_number" } } } });
    expect(names(t)).to.deep.equal(["key"]);
  });

  it("keeps a unique index even when a longer one begins with its columns", () => {
    const t = table({ indexes: [{ columns: ["order_number"], unique: true }, { columns: ["region"] }] });
    expect(names(t)).to.deep.equal(["key", "ux_order_number!", "ix_region_order_number_line"]);
  });

  it("makes an index asked for twice once", () => {
    const t = table({ indexes: [{ columns: ["region"] }, { columns: ["region"] }] });
    expect(names(t)).to.deep.equal(["key", "ix_region_order_number_line"]);
  });

  it("adds only the key columns an index does not name already", () => {
    const t = table({
      indexes: [{ columns: ["line", "region"] }],
      parents: { order: { table: "order", columns: { line: "n" } } },
    });
    expect(tableIndexes(t).map((i) => i.columns)).to.deep.equal([
      ["order_number", "line"],
      ["line", "region", "order_number"],
      ["line", "order_number"],
    ]);
  });

  it("leaves out a foreign key's index that a declared index then the key begins with", () => {
    const t = table({
      indexes: [{ columns: ["product", "order_number", "line", "region"] }],
      parents: { product: { table: "product", columns: { product: "number" } } },
    });
    expect(names(t)).to.deep.equal(["key", "ix_product_order_number_line_region"]);
  });
});

describe("what an index serves", () => {
  const key = ["order_number", "line"];
  const [, region] = tableIndexes(table({ indexes: [{ columns: ["region"] }] }));

  it("an index that ends with the key: equality then the key's order, a range, its order", () => {
    expect(indexServes(region!, key)).to.deep.equal({
      filters: ["region = ?", "region < ? (or <=, >, >=, a range)"],
      orders: ["region", "the key's order (the default) where region = ?, with next_batch pages"],
    });
  });

  it("the key's index: equality on each run of its columns, its order", () => {
    const [keyIndex] = tableIndexes(table({}));
    expect(indexServes(keyIndex!, key)).to.deep.equal({
      filters: [
        "order_number = ?",
        "order_number = ? and line = ?",
        "order_number < ? (or <=, >, >=, a range)",
      ],
      orders: ["order_number, line"],
    });
  });
});
