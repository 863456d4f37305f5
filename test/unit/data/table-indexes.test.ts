/** The store indexes a table definition asks for (domain/model/table-indexes.ts). */
import { expect } from "chai";
import type { TableDefinition } from "../../../services/data/src/domain/definition/project-definition.ts";
import { tableIndexes } from "../../../services/data/src/domain/model/table-indexes.ts";

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
  it("indexes the key, each foreign key in key order, and the table's own indexes", () => {
    const t = table({
      parents: { product: { table: "product", columns: { product: "number" } } },
      indexes: [{ columns: ["region"] }, { columns: ["region", "product"], unique: true }],
    });
    expect(tableIndexes(t)).to.deep.equal([
      { name: "key", columns: ["order_number", "line"], unique: false, origin: "key" },
      { name: "ux_region_product", columns: ["region", "product"], unique: true, origin: "definition" },
      { name: "fk_product", columns: ["product"], unique: false, origin: "foreign key" },
    ]);
  });

  it("leaves out an index whose columns begin a longer one (the key serves a foreign key that begins it)", () => {
    const t = table({ parents: { order: { table: "order", columns: { order_number: "order_number" } } } });
    expect(names(t)).to.deep.equal(["key"]);
  });

  it("keeps a unique index even when a longer one begins with its columns", () => {
    const t = table({ indexes: [{ columns: ["order_number"], unique: true }, { columns: ["region"] }] });
    expect(names(t)).to.deep.equal(["key", "ux_order_number!", "ix_region"]);
  });

  it("makes an index asked for twice once", () => {
    const t = table({ indexes: [{ columns: ["region"] }, { columns: ["region"] }] });
    expect(names(t)).to.deep.equal(["key", "ix_region"]);
  });
});
