/**
 * Issue 5: every rule type on a small HR project (dept / emp / audit), the
 * failure modes of rule code, and definitions rejected when applied.
 */
import { expect } from "chai";
import { startPlatform } from "../../support/platform.ts";
import { hrProject } from "./hr-project.ts";
import {
  allRows,
  type CanonicalSetup,
  canonicalProject,
  type Row,
  RULE_TIME_LIMIT_MS,
  setupProject,
  summaryShape,
} from "./support.ts";

describe("logic: rule types and failures (HR project)", () => {
  let s: CanonicalSetup;
  const get = async (path: string) => (await s.api.get(s.key, path)).body[0];
  const snapshot = async () =>
    Object.fromEntries(
      await Promise.all(["dept", "emp", "audit"].map(async (t) => [t, await allRows(s.api, s.key, t)])),
    );

  before(async () => {
    s = await setupProject(hrProject(), {
      platform: await startPlatform({ SANDBOX_TIMEOUT_MS: RULE_TIME_LIMIT_MS }),
    });
  });
  after(async () => {
    await s.platform.close();
  });

  it("managedParent creates the missing parent; early events, copies, formulas and the aggregates run", async () => {
    const r = await s.api.post(s.key, "emp?rulesummary=true", { dept_name: "R&D", name: "ada", salary: 100 });
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
    expect(summaryShape(r.body.txsummary)).to.deep.equal([
      ["emp", "INSERT"],
      ["dept", "INSERT"],
      ["audit", "INSERT"],
    ]);
    const [emp, dept, audit] = r.body.txsummary;
    expect(emp).to.include({ label: "ADA", bonus: 0, total_comp: 100, dept_code: null });
    expect(dept).to.include({
      name: "R&D",
      headcount: 1,
      payroll: 100,
      max_salary: 100,
      min_salary: 100,
      audit_count: 1,
    });
    expect(audit).to.include({
      emp_id: emp.id,
      action: "INSERT/INSERT",
      summary: "INSERT/INSERT #" + emp.id,
    });
    const rules = Object.fromEntries(
      r.body.rulesummary.map((e: Row) => [e["@metadata"].resource, e.rules.map((x: Row) => x.name)]),
    );
    expect(rules.emp).to.have.members(["label", "parentCopy emp.dept_code", "bonus", "total", "audit emp"]);
    expect(rules.dept).to.include.members([
      "managedParent emp.dept",
      "count dept.headcount",
      "payroll within budget",
    ]);
    expect(rules.audit).to.include.members(["audit summary", "runaway"]);
  });

  it("a parent change cascades through children's formulas and back up into the parent's sum", async () => {
    await s.api.post(s.key, "emp", { dept_name: "R&D", name: "bob", salary: 300 });
    const d = await get("dept/R%26D");
    const r = await s.api.put(s.key, "dept/R%26D", {
      "@metadata": { checksum: d["@metadata"].checksum },
      bonus_rate: 0.1,
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const shape = summaryShape(r.body.txsummary);
    expect(shape[0]).to.deep.equal(["dept", "UPDATE"]);
    expect(shape.filter(([t]) => t === "emp")).to.have.length(2);
    expect(r.body.txsummary[0]).to.include({ bonus_rate: 0.1, payroll: 440 });
    const emps = await allRows(s.api, s.key, "emp");
    expect(emps.map((e) => [e.name, e.bonus, e.total_comp])).to.have.deep.members([
      ["ada", 10, 110],
      ["bob", 30, 330],
    ]);
  });

  it("parentCopy copies at insert and re-parent only; formulas re-read the new parent", async () => {
    await s.api.post(s.key, "dept", { name: "Ops", code: "OPS" });
    const emp = (await allRows(s.api, s.key, "emp")).find((e) => e.name === "bob")!;
    const before = await get(`emp/${emp.id}`);
    const r = await s.api.put(s.key, `emp/${emp.id}`, {
      "@metadata": { checksum: before["@metadata"].checksum },
      dept_name: "Ops",
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.txsummary[0]).to.include({ dept_code: "OPS", bonus: 0, total_comp: 300 });
    const depts = Object.fromEntries((await allRows(s.api, s.key, "dept")).map((d) => [d.name, d]));
    expect(depts["R&D"]).to.include({ headcount: 1, payroll: 110, max_salary: 100, min_salary: 100 });
    expect(depts.Ops).to.include({ headcount: 1, payroll: 300, max_salary: 300, min_salary: 300 });
    const ops = await get("dept/Ops");
    await s.api.put(s.key, "dept/Ops", {
      "@metadata": { checksum: ops["@metadata"].checksum },
      code: "OPS2",
    });
    expect((await get(`emp/${emp.id}`)).dept_code).to.equal("OPS");
  });

  it("min and max are rescanned only when the extreme leaves", async () => {
    const add = async (name: string, salary: number) =>
      (await s.api.post(s.key, "emp", { dept_name: "Sales", name, salary })).body.txsummary[0];
    const a = await add("a", 100);
    await add("b", 200);
    const c = await add("c", 300);
    await add("z", 0);
    expect(await get("dept/Sales")).to.include({ max_salary: 300, min_salary: 100, headcount: 4 });
    const del = await s.api.delete(
      s.key,
      `emp/${c.id}?checksum=${encodeURIComponent(c["@metadata"].checksum)}`,
    );
    expect(del.status).to.equal(200);
    expect(await get("dept/Sales")).to.include({ max_salary: 200, min_salary: 100, headcount: 3 });
    const up = await s.api.put(s.key, `emp/${a.id}`, { "@metadata": { checksum: "override" }, salary: 150 });
    expect(up.status).to.equal(200);
    expect(await get("dept/Sales")).to.include({ max_salary: 200, min_salary: 150 });
  });

  it("a validation failure names the rule's message and changes nothing", async () => {
    const before = await snapshot();
    const r = await s.api.post(s.key, "emp", { dept_name: "Sales", name: "rich", salary: 1_000_000 });
    expect(r.status).to.equal(400);
    expect(r.body).to.deep.include({
      statusCode: 400,
      errorCode: 4004,
      errorMessage: "payroll 1000350 of Sales exceeds budget 100000",
    });
    expect(await snapshot()).to.deep.equal(before);
  });

  it("a rule that throws fails the request with a clear error and changes nothing", async () => {
    const before = await snapshot();
    const r = await s.api.post(s.key, "emp", { dept_name: "Sales", name: "boom", salary: 1 });
    expect(r.status).to.equal(500);
    expect(r.body.errorCode).to.equal(5001);
    expect(r.body.errorMessage).to.equal("Rule 'audit emp' failed: Error: boom goes the rule");
    expect(await snapshot()).to.deep.equal(before);
  });

  it("a rule that runs too long is stopped; nothing changes", async () => {
    const before = await snapshot();
    const r = await s.api.post(s.key, "emp", { dept_name: "Sales", name: "spin", salary: 1 });
    expect(r.status).to.equal(500);
    expect(r.body.errorMessage).to.include(
      `ran longer than the limit of ${RULE_TIME_LIMIT_MS} ms (rules of 'emp'`,
    );
    expect(await snapshot()).to.deep.equal(before);
    // The sandbox recovers: the next request runs normally.
    expect(
      (await s.api.post(s.key, "emp", { dept_name: "Sales", name: "after", salary: 1 })).status,
    ).to.equal(201);
  });

  it("events cannot change their row, commit events cannot insert, runaway chains are stopped", async () => {
    const mutate = await s.api.post(s.key, "emp", { dept_name: "Sales", name: "mutate", salary: 5 });
    expect(mutate.status).to.equal(500);
    expect(mutate.body.errorMessage).to.match(/^Rule 'audit emp' failed: RuleError: changed its row/);
    const commit = await s.api.post(s.key, "dept", { name: "C", code: "commit-insert" });
    expect(commit.status).to.equal(500);
    expect(commit.body.errorMessage).to.match(
      /^Rule 'no commit inserts' failed: RuleError: logicContext.insert is not available/,
    );
    const before = await snapshot();
    const loop = await s.api.post(s.key, "audit", { dept_name: "Sales", action: "loop" });
    expect(loop.status).to.equal(500);
    expect(loop.body.errorMessage).to.match(/did not settle/);
    expect(await snapshot()).to.deep.equal(before);
  });

  it("verb and initialVerb tell an update from an insert", async () => {
    const emp = (await allRows(s.api, s.key, "emp")).find((e) => e.name === "ada")!;
    const r = await s.api.put(s.key, `emp/${emp.id}`, {
      "@metadata": { checksum: "override" },
      name: "ada2",
    });
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    expect(r.body.txsummary[0]).to.include({ label: "ADA2" });
    const audit = r.body.txsummary.find((e: Row) => e["@metadata"].resource === "audit");
    expect(audit).to.include({ action: "UPDATE/UPDATE" });
  });
});

describe("logic: definitions are checked when applied", () => {
  let platform: Awaited<ReturnType<typeof startPlatform>>;
  before(async () => {
    platform = await startPlatform();
  });
  after(() => platform.close());

  it("rejects a cycle in the rule graph with the path of the rule", async () => {
    const { adminClient } = await import("../../support/http.ts");
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    const def = canonicalProject();
    def.tables.purchaseorder.columns.discount = { type: "number" };
    def.rules = def.rules.filter((r: Row) => r.type !== "parentCopy");
    def.rules.push(
      {
        table: "purchaseorder",
        type: "formula",
        column: "discount",
        expression: "row.amount_total > 100 ? 0.1 : 0",
      },
      {
        table: "lineitem",
        type: "formula",
        column: "product_price",
        expression: "row.product.price * (1 - row.order.discount)",
      },
    );
    const r = await admin.putProject("acme", "cyclic", def);
    expect(r.status).to.equal(400);
    expect(r.body.errorCode).to.equal(4001);
    expect(r.body.problems[0].path).to.match(/^\$\.rules\[\d+\]$/);
    expect(r.body.problems[0].message).to.match(/^rules form a cycle: /);
  });

  it("rejects rules that do not parse", async () => {
    const { adminClient } = await import("../../support/http.ts");
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    const def = canonicalProject();
    def.rules.push({ table: "customer", type: "validation", expression: "row.balance <=" });
    const r = await admin.putProject("acme", "broken", def);
    expect(r.status).to.equal(400);
    expect(r.body.problems).to.have.length(1);
    expect(r.body.problems[0].path).to.equal(`$.rules[${def.rules.length - 1}].expression`);
  });
});
