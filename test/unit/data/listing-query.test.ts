/** The audit and revision listings' query parameters: order, by, kind, refused, and the next page's query. */
import { expect } from "chai";
import { parseQueryString } from "../../../services/data/src/domain/read/query-params.ts";
import {
  byParam,
  kindParam,
  nextPageQuery,
  orderParam,
  refusedParam,
} from "../../../services/data/src/http/admin/listing-query.ts";

const PATHS = {
  account: "/admin/v1/accounts/acme",
  admin: "/admin/v1/accounts/acme/admins/ann",
  password: "/admin/v1/accounts/acme/@authentication",
  project: "/admin/v1/accounts/acme/projects/shop",
  rollback: "/admin/v1/accounts/acme/projects/shop/rollback",
  user: "/admin/v1/accounts/acme/projects/shop/users/alice",
  key: "/admin/v1/accounts/acme/projects/shop/apikeys/k1",
};

describe("listing query parameters", () => {
  it("reads order, by and refused, and refuses anything else with 400/4001", () => {
    expect(orderParam(undefined)).to.equal("oldest");
    expect(orderParam("newest")).to.equal("newest");
    expect(byParam("operator")).to.deep.equal({ kind: "operator" });
    expect(byParam("admin:ann")).to.deep.equal({ kind: "admin", login: "ann" });
    expect(byParam(undefined)).to.equal(undefined);
    expect(refusedParam("true")).to.equal(true);
    expect(refusedParam("false")).to.equal(false);
    expect(refusedParam(undefined)).to.equal(undefined);
    for (const bad of [
      () => orderParam("desc"),
      () => byParam("ann"),
      () => byParam("admin:"),
      () => refusedParam("1"),
    ]) {
      expect(bad).to.throw().with.property("errorCode", 4001);
    }
  });

  it("matches each kind of change by its path, letter case aside", () => {
    const kinds = ["account", "admin", "project", "user", "apikey"];
    const matching = (kind: string) => {
      const pattern = new RegExp(kindParam(kind)!, "i");
      return Object.entries(PATHS)
        .filter(([, path]) => pattern.test(path))
        .map(([name]) => name);
    };
    expect(kinds.map(matching)).to.deep.equal([
      ["account"],
      ["admin", "password"],
      ["project", "rollback"],
      ["user"],
      ["key"],
    ]);
    expect(
      new RegExp(kindParam("user")!, "i").test("/ADMIN/v1/accounts/acme/projects/shop/USERS/x"),
    ).to.equal(true);
    expect(() => kindParam("table"))
      .to.throw()
      .with.property("errorCode", 4001);
  });

  it("carries the filters into the next page: after the last entry oldest first, below it newest first", () => {
    const params = parseQueryString("order=newest&by=operator&kind=user&pagesize=5&since=e1&before=e9");
    const filters = ["order", "by", "kind", "refused"];
    expect(nextPageQuery(params, filters, true, "e1", "e7")).to.deep.equal([
      ["order", "newest"],
      ["by", "operator"],
      ["kind", "user"],
      ["since", "e1"],
      ["before", "e7"],
    ]);
    expect(nextPageQuery(parseQueryString("kind=user"), filters, false, "e1", "e7")).to.deep.equal([
      ["kind", "user"],
      ["since", "e7"],
    ]);
  });
});
