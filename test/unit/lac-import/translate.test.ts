/**
 * A LAC export translated (domain/lac-import/lac-import.ts), section by section: each
 * mapping, and each case that does not map with its path and reason. The definition
 * check is the one every PUT makes.
 */
import { expect } from "chai";
import { examineDefinition } from "../../../services/data/src/domain/admin/project-changes.ts";
import {
  type LacImport,
  translateLacProject,
} from "../../../services/data/src/domain/lac-import/lac-import.ts";
import { checkFilterText } from "../../../services/data/src/domain/model/filter-check.ts";
import { ApiError } from "../../../shared/errors.ts";

const DDL = `
CREATE TABLE customer (name VARCHAR(20) NOT NULL PRIMARY KEY, balance DECIMAL(10,2) DEFAULT 0, credit_limit DECIMAL(10,2) DEFAULT 0,
  region VARCHAR(5), paid_count INT DEFAULT 0, biggest DECIMAL(10,2), smallest DECIMAL(10,2), note VARCHAR(50));
CREATE TABLE orders (id INT AUTO_INCREMENT PRIMARY KEY, customer_name VARCHAR(20) NOT NULL, total DECIMAL(10,2) DEFAULT 0, paid BOOLEAN DEFAULT FALSE,
  stamp VARCHAR(20), CONSTRAINT cust__orders FOREIGN KEY (customer_name) REFERENCES customer (name));`;

const check = (definition: unknown) => {
  const e = examineDefinition(definition, { account: "a", project: "p" }, { checkFilter: checkFilterText });
  return e.ok ? [] : e.problems;
};

function translate(
  project: Record<string, unknown>,
  options: { keepKeyValues?: boolean; ddl?: string } = {},
): LacImport {
  return translateLacProject(
    {
      export: [project],
      ddl: options.ddl ?? DDL,
      dialect: "mysql",
      keepKeyValues: options.keepKeyValues ?? true,
      now: Date.parse("2020-01-01T00:00:00Z"),
    },
    check,
  );
}

const rule = (
  ruletype_ident: number,
  entity: string,
  attribute: string | null,
  texts: (string | null)[],
  extra: Record<string, unknown> = {},
) => ({
  entity_name: `db:${entity}`,
  attribute_name: attribute,
  rule_text1: texts[0] ?? null,
  rule_text2: texts[1] ?? null,
  rule_text3: texts[2] ?? null,
  prop4: null,
  active: true,
  ruletype_ident,
  ...extra,
});

const reasonAt = (imported: LacImport, path: string) =>
  imported.unmapped
    .filter((u) => u.path === path)
    .map((u) => u.reason)
    .join(" | ");

describe("LAC import: translating an export", () => {
  it("maps every rule type LAC had to Tessera's", () => {
    const imported = translate({
      Rules: [
        rule(1, "customer", "balance", ["ordersList", "paid = false", "total"], { name: "balance" }),
        rule(2, "customer", "paid_count", ["ordersList", "paid"]),
        rule(11, "customer", "smallest", ["ordersList", null, "total"]),
        rule(12, "customer", "biggest", ["ordersList", null, "total"]),
        rule(3, "orders", "stamp", ["return 'x' + row.id;"], { prop4: "javascript" }),
        rule(4, "orders", "stamp", ["cust__orders", "region"]),
        rule(5, "customer", null, ["return row.balance <= row.credit_limit;", "over {credit_limit|0.00}"]),
        rule(6, "orders", null, ["return row.total >= 0;", null]),
        rule(7, "orders", null, ["log.info(row.id);"], { verbs: "INSERT,UPDATE," }),
        rule(8, "orders", null, ["row.stamp = 'early';"]),
        rule(9, "orders", null, ["log.debug('done');"]),
        rule(13, "orders", null, ["cust__orders"]),
      ],
    });
    const types = imported.definition.rules.map((r) => r.type);
    expect(types).to.deep.equal([
      "sum",
      "count",
      "min",
      "max",
      "formula",
      "validation",
      "commitValidation",
      "event",
      "earlyEvent",
      "commitEvent",
      "managedParent",
    ]);
    expect(imported.definition.rules[0]).to.deep.equal({
      table: "customer",
      type: "sum",
      column: "balance",
      children: "ordersList",
      of: "total",
      where: "row.paid == false",
      name: "balance",
    });
    expect(imported.definition.rules[5]).to.include({ message: "over {credit_limit}" });
    expect(imported.definition.rules[7])
      .to.have.property("code")
      .that.matches(/^if \(\["INSERT","UPDATE"\]/);
    expect(imported.definition.libraries).to.have.property("lac_log");
    // the parent copy into 'stamp' collided with the formula deriving it: the check refuses it, it is set aside
    expect(reasonAt(imported, "$.Rules[5]")).to.contain("is left out");
    expect(reasonAt(imported, "$.Rules[6].rule_text2")).to.contain("number formats");
  });

  it("leaves out rules that do not map, saying why", () => {
    const imported = translate({
      Rules: [
        rule(3, "customer", "note", ["return 1;"], { active: false }),
        rule(10, "customer", "note", ["x"]),
        rule(3, "nowhere", "note", ["return 1;"]),
        rule(1, "customer", "balance", ["missingList", null, "total"]),
        rule(3, "customer", "nope", ["return 1;"]),
        rule(3, "customer", "note", ["1"], { prop4: "sql" }),
        rule(3, "customer", "note", ["return SysUtility.getResource('x');"]),
        rule(4, "orders", "stamp", ["no_role", "region"]),
        rule(1, "customer", "balance", ["ordersList", "status = 1", "total"]),
        rule(3, "customer", "note", ["return row.regio;"]),
      ],
    });
    expect(imported.definition.rules).to.deep.equal([]);
    expect(reasonAt(imported, "$.Rules[0]")).to.contain("inactive");
    expect(reasonAt(imported, "$.Rules[1]")).to.contain("rule type 10 has no counterpart");
    expect(reasonAt(imported, "$.Rules[2]")).to.contain("table 'db:nowhere' is not in the schema");
    expect(reasonAt(imported, "$.Rules[3]")).to.contain("no list of children 'missingList'");
    expect(reasonAt(imported, "$.Rules[4]")).to.contain("no column 'nope'");
    expect(reasonAt(imported, "$.Rules[5]")).to.contain("is sql, not JavaScript");
    expect(reasonAt(imported, "$.Rules[6]")).to.contain("'SysUtility'");
    expect(reasonAt(imported, "$.Rules[7]")).to.contain("no relationship 'no_role'");
    expect(reasonAt(imported, "$.Rules[8]")).to.contain("'status'");
    expect(reasonAt(imported, "$.Rules[9]")).to.contain("'regio' is not an attribute");
  });

  it("maps resources: aliases, the key shown, filters, sorts, sub-resources by their join; and says what it leaves out", () => {
    const res = (ident: number, name: string, table: string, extra: Record<string, unknown> = {}) => ({
      ident,
      name,
      table_name: table,
      resource_type_ident: 1,
      container_ident: null,
      ResourceAttributes: [],
      ...extra,
    });
    const imported = translate({
      ApiVersions: [
        {
          name: "v1",
          Resources: [
            res(1, "Customers", "customer", {
              sorting: '"name" desc',
              filter: "region = 'OR'",
              ResourceAttributes: [
                { name: "Region", column_name: "region" },
                { name: "Calc", column_name: null, formula: "1+1" },
              ],
            }),
            res(2, "Orders", "orders", { container_ident: 1, join_condition: '"customer_name" = [name]' }),
            res(3, "Owner", "customer", {
              container_ident: 2,
              join_condition: "name = [customer_name]",
              is_collection: "N",
            }),
            res(4, "Lost", "orders", { container_ident: 1, join_condition: "stamp = [note]" }),
            res(5, "Script", "", { resource_type_ident: 3, code_text: "return [{a: 1}];" }),
            res(6, "OldScript", "", {
              resource_type_ident: 3,
              code_text: "return SysUtility.getResource('x');",
            }),
            res(7, "customer", "customer"),
            res(8, "Nothing", "gone"),
          ],
        },
      ],
    });
    const resources = imported.definition.apiVersions.v1?.resources ?? {};
    expect(resources.Customers).to.deep.equal({
      table: "customer",
      attributes: { Region: "region", name: "name" },
      filter: "Region = 'OR'",
      order: "name desc",
      subresources: {
        Orders: {
          table: "orders",
          via: "cust__orders",
          subresources: { Owner: { table: "customer", via: "cust__orders" } },
        },
      },
    });
    expect(resources.Script).to.deep.equal({ type: "javascript", code: "return [{a: 1}];" });
    expect(resources.customer2).to.deep.equal({ table: "customer" });
    expect(reasonAt(imported, "$.ApiVersions[0].Resources[0].ResourceAttributes[1]")).to.contain("computed");
    expect(reasonAt(imported, "$.ApiVersions[0].Resources[0]")).to.contain("shows key column 'name'");
    expect(reasonAt(imported, "$.ApiVersions[0].Resources[3]")).to.contain(
      "no relationship of the schema joins",
    );
    expect(reasonAt(imported, "$.ApiVersions[0].Resources[5]")).to.contain("'SysUtility'");
    expect(reasonAt(imported, "$.ApiVersions[0].Resources[6]")).to.contain("is named 'customer2'");
    expect(reasonAt(imported, "$.ApiVersions[0].Resources[7]")).to.contain("'gone' is not in the schema");
  });

  it("maps roles with their table grants, row filters and columns", () => {
    const imported = translate({
      Roles: [
        {
          name: "Region",
          default_permission: "R",
          default_apivisibility: "TVRPM",
          TablePermissions: [
            {
              entity_name: "db:customer",
              access_type: "RU",
              predicate: `"region" = '@{UserRegion}'`,
              column_names: "region,balance",
            },
            { entity_name: "db:orders", access_type: "A", predicate: "upper(stamp) = 'X'" },
          ],
        },
        { name: "Teller", default_permission: "RIU", default_apivisibility: "TV" },
        { name: "Nobody", default_permission: "NZ" },
      ],
    });
    expect(imported.definition.roles.Region).to.deep.equal({
      tables: {
        "*": { access: ["read"] },
        customer: {
          access: ["read", "update"],
          rowFilter: "region = @{UserRegion}",
          columns: ["region", "balance", "name"],
        },
      },
    });
    expect(imported.definition.roles.Teller).to.deep.equal({
      tables: { "*": { access: ["read", "insert", "update"] } },
    });
    expect(imported.definition.roles.Nobody).to.deep.equal({ tables: {} });
    expect(reasonAt(imported, "$.Roles[0].TablePermissions[1].predicate")).to.contain(
      "the grant is left out",
    );
    expect(reasonAt(imported, "$.Roles[0].TablePermissions[0].column_names")).to.contain("key column 'name'");
    expect(reasonAt(imported, "$.Roles[1].default_apivisibility")).to.contain(
      "hides kinds of endpoints (R, M)",
    );
    expect(reasonAt(imported, "$.Roles[2].default_permission")).to.contain("access letter 'Z'");
  });

  it("maps API keys with roles, globals and values where they may be kept; users with roles, globals and LAC's hash", () => {
    const project = {
      Roles: [
        {
          name: "Full access",
          default_permission: "A",
          ApiKeyRoles: [{ apikey_ident: 1 }, { apikey_ident: 2 }],
        },
      ],
      ApiKeys: [
        {
          ident: 1,
          name: "kept",
          apikey: "abcdefgh12",
          data: "UserRegion=OR\nTier=2",
          user_identifier: "svc",
          expiration: "2030-01-01T00:00:00",
        },
        { ident: 2, name: "too short", apikey: "abc", data: "not a global" },
        { ident: 3, name: "off", apikey: "abcdefgh34", status: "I" },
        { ident: 4, name: "old", apikey: "abcdefgh56", expiration: "2019-01-01T00:00:00" },
      ],
      Users: [
        {
          name: "ann",
          roles: "Full access, Gone,",
          data: "UserRegion=WA",
          password_hash: "h",
          password_salt: "s",
          apikey_lifespan: 600,
          email: "a@x",
        },
        { name: "bob", roles: "Full access" },
        { name: "not valid!", roles: "Full access" },
        { name: "cy", roles: "Full access", status: "I" },
      ],
    };
    const imported = translate(project);
    expect(imported.keys).to.deep.equal([
      {
        source: "$.ApiKeys[0]",
        name: "kept",
        roles: ["Full access"],
        globals: { UserRegion: "OR", Tier: "2" },
        userIdentifier: "svc",
        expiration: "2030-01-01T00:00:00.000Z",
        keepValue: "abcdefgh12",
      },
      { source: "$.ApiKeys[1]", name: "too short", roles: ["Full access"], globals: {} },
    ]);
    expect(reasonAt(imported, "$.ApiKeys[1].apikey")).to.contain("gets a new value");
    expect(reasonAt(imported, "$.ApiKeys[1].data")).to.contain("'not a global'");
    expect(reasonAt(imported, "$.ApiKeys[2].status")).to.contain("not active");
    expect(reasonAt(imported, "$.ApiKeys[3].expiration")).to.contain("expired");
    expect(translate(project, { keepKeyValues: false }).keys[0]).to.not.have.property("keepValue");
    expect(imported.users).to.deep.equal([
      {
        source: "$.Users[0]",
        username: "ann",
        roles: ["Full access"],
        globals: { UserRegion: "WA" },
        keyLifetimeSeconds: 600,
        lacPassword: { hash: "h", salt: "s" },
      },
      { source: "$.Users[1]", username: "bob", roles: ["Full access"], globals: {} },
    ]);
    expect(reasonAt(imported, "$.Users[0].roles")).to.contain("role 'Gone' is not imported");
    expect(reasonAt(imported, "$.Users[1]")).to.contain("without a usable password");
    expect(reasonAt(imported, "$.Users[2]")).to.contain("not a Tessera user name");
    expect(reasonAt(imported, "$.Users[3].status")).to.contain("not active");
    expect(reasonAt(imported, "$.Users")).to.contain("email");
  });

  it("maps the options Tessera has, and reports sections and options it has not", () => {
    const imported = translate({
      ProjectOptions: [
        { projectoptiontype_ident: 12, option_value: "false" },
        { projectoptiontype_ident: 15, option_value: "xml" },
        { projectoptiontype_ident: 7, option_value: "20" },
        { projectoptiontype_ident: 8, option_value: "100" },
      ],
      ApiVersions: [{ name: "v1", Resources: [] }],
      Handlers: [{ name: "hook" }],
      NamedSorts: [{ name: "s" }],
      Timers: [{ name: "t" }],
      EventHandlers: [{ name: "cors", eventtype_ident: 3, code: "x" }],
      exportVersion: "v5",
    });
    expect(imported.definition.authentication).to.deep.equal({
      provider: "builtin",
      permitAuthParameter: false,
    });
    expect(imported.definition.apiVersions.v1).to.deep.include({ defaultResponseFormat: "xml" });
    expect(reasonAt(imported, "$.ProjectOptions[3]")).to.contain("'Maximum Page Size' = \"100\"");
    expect(reasonAt(imported, "$.Handlers[0]")).to.contain("custom endpoint 'hook'");
    expect(reasonAt(imported, "$.NamedSorts[0]")).to.contain("named sort");
    expect(reasonAt(imported, "$.Timers")).to.contain("not read by the importer");
    expect(reasonAt(imported, "$.EventHandlers[0]")).to.contain("event type 3");
    expect(reasonAt(imported, "$.exportVersion")).to.contain("read as v4");
  });

  it("refuses what is not a project export, naming where", () => {
    expect(() => translate({ Rules: [{ entity_name: 3 }] }))
      .to.throw(ApiError)
      .with.property("errorCode", 4001);
    expect(() =>
      translateLacProject(
        { export: [{}, {}], ddl: DDL, dialect: "mysql", keepKeyValues: true, now: 0 },
        check,
      ),
    ).to.throw(/one project/);
  });
});
