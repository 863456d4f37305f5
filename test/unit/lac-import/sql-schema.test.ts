/** Reading a database schema's DDL (domain/lac-import/sql-schema.ts) and mapping it to Tessera tables (schema-mapping.ts). */
import { expect } from "chai";
import { ImportReport } from "../../../services/data/src/domain/lac-import/import-report.ts";
import { mapSchema } from "../../../services/data/src/domain/lac-import/schema-mapping.ts";
import { readSchema } from "../../../services/data/src/domain/lac-import/sql-schema.ts";
import { splitStatements } from "../../../services/data/src/domain/lac-import/sql-statements.ts";

function mapped(ddl: string, dialect: "mysql" | "postgresql" = "mysql") {
  const report = new ImportReport();
  const schema = mapSchema(readSchema(ddl, dialect, report), [], report);
  return { schema, unmapped: report.unmapped, table: (name: string) => schema.tables.get(name)?.definition };
}

describe("LAC import: the database schema", () => {
  it("cuts a script into statements, past quotes, comments and GO lines, with each one's line", () => {
    const script =
      "-- a; comment\nCREATE TABLE a (x VARCHAR(3) DEFAULT ';');\n/* b; */ CREATE TABLE `b;c` (y INT);\nSELECT 1\nGO\nSELECT 2";
    expect(splitStatements(script).map((s) => [s.line, s.text.split("\n").pop()])).to.deep.equal([
      [1, "CREATE TABLE a (x VARCHAR(3) DEFAULT ';')"],
      [3, "/* b; */ CREATE TABLE `b;c` (y INT)"],
      [4, "SELECT 1"],
      [6, "SELECT 2"],
    ]);
  });

  it("maps each SQL type to a column type, with lengths, NOT NULL, literal defaults and generated keys", () => {
    const { table } = mapped(`CREATE TABLE t (
      id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL, code CHAR(2) DEFAULT 'OR', note TEXT,
      price DECIMAL(10,2) DEFAULT 1.5, qty SMALLINT DEFAULT 3, ratio DOUBLE, flag BIT DEFAULT 1, ok TINYINT(1), yes BOOLEAN DEFAULT TRUE,
      born DATE, seen DATETIME, doc JSON)`);
    expect(table("t")).to.deep.equal({
      key: ["id"],
      columns: {
        id: { type: "integer", generated: true },
        name: { type: "string", maxLength: 40, required: true },
        code: { type: "string", maxLength: 2, default: "OR" },
        note: { type: "string" },
        price: { type: "number", default: 1.5 },
        qty: { type: "integer", default: 3 },
        ratio: { type: "number" },
        flag: { type: "boolean", default: true },
        ok: { type: "boolean" },
        yes: { type: "boolean", default: true },
        born: { type: "date" },
        seen: { type: "datetime" },
        doc: { type: "json" },
      },
    });
  });

  it("turns foreign keys into parent relationships: the constraint's name, `<child>List`, the parent key's order", () => {
    const { table } = mapped(`
      CREATE TABLE p (a INT NOT NULL, b INT NOT NULL, PRIMARY KEY (a, b));
      CREATE TABLE c (id INT PRIMARY KEY, pb INT, pa INT, CONSTRAINT FK_c_p FOREIGN KEY (pb, pa) REFERENCES p (b, a));
      CREATE TABLE d (id INT PRIMARY KEY, c_id INT REFERENCES c (id));
      CREATE TABLE \`Order Lines\` (id INT PRIMARY KEY, c_id INT);
      ALTER TABLE \`Order Lines\` ADD CONSTRAINT FK_lines_c FOREIGN KEY (c_id) REFERENCES c (id);
      CREATE UNIQUE INDEX ux ON d (c_id);`);
    expect(table("c")?.parents).to.deep.equal({
      FK_c_p: { table: "p", columns: { pa: "a", pb: "b" }, children: "cList" },
    });
    expect(table("d")?.parents).to.deep.equal({
      c: { table: "c", columns: { c_id: "id" }, children: "dList" },
    });
    expect(table("d")?.indexes).to.deep.equal([{ columns: ["c_id"], unique: true }]);
    expect(table("Order_Lines")?.parents).to.deep.equal({
      FK_lines_c: { table: "c", columns: { c_id: "id" }, children: "Order_LinesList" },
    });
  });

  it("reports what it cannot map, each with the statement's line", () => {
    const { schema, unmapped } = mapped(
      [
        "CREATE TABLE nokey (x INT);",
        "CREATE TABLE t (id INT PRIMARY KEY, big DECIMAL(19,4), pic BLOB, made DATETIME DEFAULT CURRENT_TIMESTAMP,",
        "  r INT, CONSTRAINT fk_gone FOREIGN KEY (r) REFERENCES gone (id));",
        "CREATE TABLE u (id INT PRIMARY KEY, t_id INT, CONSTRAINT fk_t FOREIGN KEY (t_id) REFERENCES t (id) ON DELETE CASCADE,",
        "  w INT, CONSTRAINT fk_w FOREIGN KEY (w) REFERENCES t (r));",
        "CREATE TABLE v (a REAL);",
      ].join("\n"),
    );
    expect(schema.tables.has("nokey")).to.equal(false);
    const reasons = unmapped.map((u) => `${u.path} ${u.reason}`);
    expect(reasons).to.satisfy((r: string[]) =>
      r.some((x) => x.startsWith("ddl:1 table 'nokey' has no primary key")),
    );
    expect(
      reasons.some((x) => x.startsWith("ddl:2 't.big'") && x.includes("15 significant digits")),
    ).to.equal(true);
    expect(reasons.some((x) => x.startsWith("ddl:2 't.pic'") && x.includes("no binary type"))).to.equal(true);
    expect(reasons.some((x) => x.includes("CURRENT_TIMESTAMP") && x.includes("constants"))).to.equal(true);
    expect(
      reasons.some((x) => x.includes("'fk_gone'") && x.includes("'gone' is not in the schema")),
    ).to.equal(true);
    expect(reasons.some((x) => x.includes("'fk_t'") && x.includes("ON DELETE CASCADE"))).to.equal(true);
    expect(reasons.some((x) => x.includes("'fk_w'") && x.includes("not to the primary key"))).to.equal(true);
    expect(reasons.some((x) => x.startsWith("ddl:6 the mysql parser cannot read this statement"))).to.equal(
      true,
    );
  });

  it("reads PostgreSQL's quoted names and SERIAL keys", () => {
    const { table } = mapped(
      `CREATE TABLE "A B" ("Id" serial PRIMARY KEY, "x-y" varchar(5) NOT NULL DEFAULT 'q')`,
      "postgresql",
    );
    expect(table("A_B")).to.deep.equal({
      key: ["Id"],
      columns: {
        Id: { type: "integer", generated: true },
        x_y: { type: "string", maxLength: 5, default: "q" },
      },
    });
  });
});
