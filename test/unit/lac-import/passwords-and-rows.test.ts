/** LAC's password hashes (credentials/lac-passwords.ts, passwords.ts) and the rows of the old database (data-rows.ts). */
import { createHash } from "node:crypto";
import { expect } from "chai";
import {
  lacPasswordRecord,
  NO_PASSWORD,
  verifyLacPassword,
} from "../../../services/data/src/credentials/lac-passwords.ts";
import { createPasswordHasher } from "../../../services/data/src/credentials/passwords.ts";
import { readDataRows, typed } from "../../../services/data/src/domain/lac-import/data-rows.ts";
import { ImportReport } from "../../../services/data/src/domain/lac-import/import-report.ts";
import { mapSchema } from "../../../services/data/src/domain/lac-import/schema-mapping.ts";
import { readSchema } from "../../../services/data/src/domain/lac-import/sql-schema.ts";

/** A hash as LAC made it: base64(SHA-512(salt ‖ password)). */
function lacHash(password: string, salt: Buffer) {
  return createHash("sha512")
    .update(Buffer.concat([salt, Buffer.from(password)]))
    .digest("base64");
}

describe("LAC import: passwords", () => {
  const salt = Buffer.from("a salt of thirty bytes, fixed.");
  const record = lacPasswordRecord(lacHash("Secret-1ü", salt), salt.toString("base64")) as string;

  it("verifies LAC's SHA-512 hash of salt and password, and nothing else", () => {
    expect(record).to.match(/^\$lac-sha512\$/);
    expect(verifyLacPassword(record, "Secret-1ü")).to.equal(true);
    expect(verifyLacPassword(record, "Secret-1u")).to.equal(false);
    expect(verifyLacPassword("$lac-sha512$broken", "x")).to.equal(false);
    expect(lacPasswordRecord("c2hvcnQ=", salt.toString("base64"))).to.equal(undefined);
    expect(lacPasswordRecord("not base64!", "x")).to.equal(undefined);
  });

  it("the hasher accepts an imported hash once and asks for it to be replaced; no password matches NO_PASSWORD", async () => {
    const hasher = createPasswordHasher(1024);
    expect(await hasher.verify(record, "Secret-1ü")).to.equal(true);
    expect(await hasher.verify(record, "wrong")).to.equal(false);
    expect(hasher.needsRehash(record)).to.equal(true);
    const fresh = await hasher.hash("Secret-1ü");
    expect(hasher.needsRehash(fresh)).to.equal(false);
    expect(await hasher.verify(NO_PASSWORD, "")).to.equal(false);
    expect(await hasher.verify(NO_PASSWORD, NO_PASSWORD)).to.equal(false);
  });
});

describe("LAC import: rows", () => {
  const ddl = `CREATE TABLE kid (id INT PRIMARY KEY, boss INT, dad VARCHAR(5), born DATE, seen DATETIME, ok BIT, n DECIMAL(5,2),
      CONSTRAINT k_boss FOREIGN KEY (boss) REFERENCES kid (id), CONSTRAINT k_dad FOREIGN KEY (dad) REFERENCES dad (name));
    CREATE TABLE dad (name VARCHAR(5) PRIMARY KEY);`;
  const read = (input: Parameters<typeof readDataRows>[0]) => {
    const report = new ImportReport();
    const schema = mapSchema(readSchema(ddl, "mysql", new ImportReport()), [], new ImportReport());
    return { rows: readDataRows(input, schema, "mysql", report), unmapped: report.unmapped };
  };

  it("turns texts into the columns' types", () => {
    expect(typed("12.50", "number")).to.equal(12.5);
    expect(typed("x12", "number")).to.equal("x12");
    expect(typed("1", "boolean")).to.equal(true);
    expect(typed("No", "boolean")).to.equal(false);
    expect(typed("1996-07-04 00:00:00.000", "date")).to.equal("1996-07-04");
    expect(typed("1996-07-04 10:30:00", "datetime")).to.equal("1996-07-04T10:30:00Z");
    expect(typed("1996-07-04T10:30:00+02:00", "datetime")).to.equal("1996-07-04T10:30:00+02:00");
    expect(typed('{"a":1}', "json")).to.deep.equal({ a: 1 });
  });

  it("reads CSV and INSERTs, parents first and each row after the row it refers to; reports what it cannot place", () => {
    const { rows, unmapped } = read({
      csv: { kid: "id,boss,dad,born,ok,extra\n2,1,ann,2001-02-03,1,x\n1,,ann,,0,y\n", nobody: "a\n1\n" },
      sql: "INSERT INTO dad (name) VALUES ('ann'), ('bo');\nINSERT INTO kid (id, dad, n) VALUES (3, 'bo', -1.25);\nDELETE FROM kid;",
    });
    expect(rows.map((t) => t.table)).to.deep.equal(["dad", "kid"]);
    expect(rows[1]?.rows.map((r) => [r.source, r.values])).to.deep.equal([
      ["data.kid[2]", { id: 1, dad: "ann", ok: false }],
      ["data.kid[1]", { id: 2, boss: 1, dad: "ann", born: "2001-02-03", ok: true }],
      ["data.kid[3]", { id: 3, dad: "bo", n: -1.25 }],
    ]);
    expect(unmapped.map((u) => u.path)).to.deep.equal(["data.kid", "data.nobody", "data.sql:3"]);
  });
});
