/**
 * Queries for the children of parent rows through a relationship: one parent, or
 * many at once (one `$in` for a one-column foreign key, one `$or` branch per
 * parent for a composite one, each parent asked for once).
 */
import { expect } from "chai";
import type { Relationship } from "../../../services/data/src/domain/model/project-model.ts";
import { childrenOfAnyQuery, childrenQuery } from "../../../services/data/src/domain/read/query-builder.ts";

const orders: Relationship = {
  role: "customer",
  childrenName: "orders",
  childTable: "purchaseorder",
  parentTable: "customer",
  childColumns: ["customer_name"],
  parentColumns: ["name"],
};

const shipments: Relationship = {
  role: "line",
  childrenName: "shipments",
  childTable: "shipment",
  parentTable: "lineitem",
  childColumns: ["order_no", "line_no"],
  parentColumns: ["order_number", "number"],
};

describe("children queries", () => {
  it("one parent: each foreign-key column equal to its parent column", () => {
    expect(childrenQuery(orders, { name: "Acme", balance: 3 })).to.deep.equal({
      customer_name: { $eq: "Acme" },
    });
    expect(childrenQuery(shipments, { order_number: 7, number: 2 })).to.deep.equal({
      order_no: { $eq: 7 },
      line_no: { $eq: 2 },
    });
  });

  it("many parents, one-column key: one $in, each value once", () => {
    expect(childrenOfAnyQuery(orders, [["Acme"], ["Globex"], ["Acme"]])).to.deep.equal({
      customer_name: { $in: ["Acme", "Globex"] },
    });
  });

  it("many parents, composite key: one branch per parent, each once; 1 and '1' are different keys", () => {
    expect(
      childrenOfAnyQuery(shipments, [
        [7, 1],
        [7, 2],
        [7, 1],
        ["7", 1],
      ]),
    ).to.deep.equal({
      $or: [
        { order_no: { $eq: 7 }, line_no: { $eq: 1 } },
        { order_no: { $eq: 7 }, line_no: { $eq: 2 } },
        { order_no: { $eq: "7" }, line_no: { $eq: 1 } },
      ],
    });
  });
});
