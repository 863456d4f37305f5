/**
 * Moving a Live API Creator project over: the Northwind and banking projects
 * (test/fixtures/lac: exports in the admin CLI's sample shapes, their DDL and rows)
 * imported through the admin API — dry run, then the confirmed import — and then
 * driven as LAC's clients drive them: the original Node SDK (caliveapicreator,
 * unchanged) logging in with the users' LAC passwords, and plain HTTP with the
 * exported API keys. The rules behave as they did in LAC.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { expect } from "chai";
import { adminClient, call } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { type Connection, type Row, rejection, SdkProcess } from "./sdk-process.ts";

const FIXTURES = path.resolve(import.meta.dirname, "../../fixtures/lac");

function northwindBody() {
  const dir = path.join(FIXTURES, "northwind");
  const csv: Record<string, string> = {};
  for (const file of readdirSync(path.join(dir, "data"))) {
    csv[file.replace(/\.csv$/, "")] = readFileSync(path.join(dir, "data", file), "utf8");
  }
  return {
    export: JSON.parse(readFileSync(path.join(dir, "export.json"), "utf8")),
    ddl: readFileSync(path.join(dir, "schema.sql"), "utf8"),
    dialect: "mysql",
    data: { csv },
  };
}

function bankingBody() {
  const dir = path.join(FIXTURES, "banking");
  return {
    export: JSON.parse(readFileSync(path.join(dir, "export.json"), "utf8")),
    ddl: readFileSync(path.join(dir, "schema.sql"), "utf8"),
    dialect: "postgresql",
    data: { sql: readFileSync(path.join(dir, "data.sql"), "utf8") },
  };
}

interface Unmapped {
  path: string;
  reason: string;
}

describe("compat: a Live API Creator project imported (lac-import), driven by LAC's clients", () => {
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let sdk: SdkProcess;
  const importPath = (project: string, dryRun = false) =>
    `/accounts/acme/projects/${project}/import/lac${dryRun ? "?dryRun=true" : ""}`;

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    expect((await admin.putAccount("acme")).status).to.equal(201);
    sdk = new SdkProcess();
  });
  after(async () => {
    sdk?.close();
    await platform?.close();
  });

  describe("Northwind", () => {
    const url = () => `${platform.baseUrl}/rest/acme/northwind/v1`;
    let keys: { name: string; apikey: string; kept: boolean }[];
    let demo: Connection;

    it("the dry run answers the definition, users, keys and everything that did not map, and stores nothing", async () => {
      const dry = await admin.send("POST", importPath("northwind", true), northwindBody());
      expect(dry.status, JSON.stringify(dry.body)).to.equal(200);
      expect(Object.keys(dry.body.definition.tables)).to.include.members([
        "Customers",
        "Orders",
        "Order_Details",
        "Products",
      ]);
      expect(dry.body.definition.tables.Orders.parents.FK_Orders_Customers).to.deep.include({
        table: "Customers",
        children: "OrdersList",
      });
      expect(
        dry.body.users.map((u: { username: string; password: string }) => [u.username, u.password]),
      ).to.deep.equal([
        ["demo", "imported"],
        ["guest", "imported"],
        ["region", "imported"],
      ]);
      expect(dry.body.keys.map((k: { name: string; value: string }) => [k.name, k.value])).to.deep.equal([
        ["Admin key", "kept"],
        ["Region Customers", "kept"],
        ["short", "new"],
      ]);
      const paths = (dry.body.unmapped as Unmapped[]).map((u) => u.path);
      expect(paths).to.include.members([
        "$.Rules[1].rule_text2",
        "$.ApiVersions[0].Resources[4]",
        "$.ApiKeys[2].apikey",
      ]);
      expect(dry.body.data.rows).to.deep.include({ Customers: 4, Orders: 4, Order_Details: 3 });
      expect(dry.body.confirm).to.be.a("string");
      expect((await admin.send("GET", "/accounts/acme/projects/northwind")).status).to.equal(404);
    });

    it("applies only with the dry run's confirm code: one revision, then users, keys and the rows (rules off)", async () => {
      const body = northwindBody();
      const missing = await admin.send("POST", importPath("northwind"), body);
      expect(missing.status).to.equal(400);
      const stale = await admin.send("POST", importPath("northwind"), { ...body, confirm: "0".repeat(32) });
      expect(stale.status).to.equal(412);
      expect((await admin.send("GET", "/accounts/acme/projects/northwind")).status).to.equal(404);

      const { confirm } = (await admin.send("POST", importPath("northwind", true), body)).body;
      const applied = await admin.send("POST", importPath("northwind"), { ...body, confirm });
      expect(applied.status, JSON.stringify(applied.body)).to.equal(201);
      expect(applied.body.revision).to.equal(1);
      keys = applied.body.keys;
      expect(keys.find((k) => k.name === "Region Customers")).to.include({
        apikey: "nwRegionOR-key",
        kept: true,
      });
      expect(keys.find((k) => k.name === "short")?.apikey).to.match(/^tsk_/);
      expect(applied.body.data.loaded).to.deep.equal({
        Customers: 4,
        Employees: 2,
        Products: 3,
        Orders: 3,
        Order_Details: 3,
      });
      expect(applied.body.data.refused).to.have.length(1);
      expect(applied.body.data.refused[0].path).to.equal("data.Orders[4]");
      const revisions = await admin.send("GET", "/accounts/acme/projects/northwind/revisions");
      expect(revisions.body).to.have.length(1);
      expect(revisions.body[0].summary).to.match(/^import from Live API Creator/);

      const again = await admin.send("POST", importPath("northwind"), { ...body, confirm });
      expect(again.status).to.equal(409);
    });

    it("the rows keep the values LAC's rules had derived (history is not recomputed)", async () => {
      const admKey = keys.find((k) => k.name === "Admin key")!.apikey;
      const lines = await call(
        platform.baseUrl,
        "GET",
        "/rest/acme/northwind/v1/Order_Details?filter=OrderID%20%3D%2010001",
        {
          headers: { authorization: `CALiveAPICreator ${admKey}:1` },
        },
      );
      expect(lines.body[0]).to.include({ UnitPrice: 15, Amount: 150 });
    });

    it("users log in with their LAC passwords through the SDK (verified once, argon2id from then on)", async () => {
      demo = await sdk.connect(url(), "demo", "nw-demo-pass1");
      expect(demo.apiKey).to.match(/^tsk_/);
      const again = await sdk.connect(url(), "demo", "nw-demo-pass1");
      expect(again.apiKey).to.match(/^tsk_/);
      const wrong = await sdk.connect(url(), "demo", "Password1");
      expect(wrong.apiKey).to.equal(null);
    });

    it("a line's UnitPrice is copied from its product, its Amount computed, the order's AmountTotal and the customer's Balance adjusted", async () => {
      const posted = await demo.endpoint("Order_Details").post({ OrderID: 10001, ProductID: 2, Quantity: 5 });
      expect(posted.statusCode).to.equal(201);
      const byResource = (resource: string) =>
        posted.txsummary.filter((r: Row) => r["@metadata"].resource === resource);
      expect(byResource("Order_Details")[0]).to.include({ UnitPrice: 19, Amount: 95 });
      expect(byResource("Orders")[0]).to.include({ OrderID: 10001, AmountTotal: 245 });
      expect(byResource("Customers")[0]).to.include({ CustomerID: "ALPHA", Balance: 245 });

      const [line] = await demo.endpoint("Order_Details/10001,2").get();
      line!.Quantity = 6;
      const put = await demo.endpoint(line!["@metadata"].href).put(line);
      expect(put.txsummary.find((r: Row) => r["@metadata"].resource === "Orders")).to.include({
        AmountTotal: 264,
      });
      const [alpha] = await demo.endpoint("Customers/ALPHA").get();
      expect(alpha).to.include({ Balance: 264 });
    });

    it("the Balance sums unshipped orders only", async () => {
      const shipped = await demo
        .endpoint("Order_Details")
        .post({ OrderID: 10002, ProductID: 1, Quantity: 1 });
      expect(shipped.txsummary.find((r: Row) => r["@metadata"].resource === "Orders")).to.include({
        AmountTotal: 54,
      });
      expect(shipped.txsummary.find((r: Row) => r["@metadata"].resource === "Customers")).to.equal(undefined);
      const [alpha] = await demo.endpoint("Customers/ALPHA").get();
      expect(alpha).to.include({ Balance: 264 });
    });

    it("a balance over the CreditLimit is refused with the rule's message, and nothing is written", async () => {
      const refused = await rejection(
        demo.endpoint("Order_Details").post({ OrderID: 10001, ProductID: 1, Quantity: 100 }),
      );
      expect(refused).to.include({ statusCode: 400, errorCode: 4004 });
      expect(refused.errorMessage).to.equal("Balance 2064 would exceed the credit limit 1000");
      const [alpha] = await demo.endpoint("Customers/ALPHA").get();
      expect(alpha).to.include({ Balance: 264 });
    });

    it("the 'Authorized per region' key, and the user with its global, see only their region's customers", async () => {
      const regionKey = await sdk.connect(url(), "nwRegionOR-key");
      const rows = await regionKey.endpoint("Customers").get();
      expect(rows.map((r) => r.CustomerID)).to.deep.equal(["ALPHA", "BRAVO"]);
      const regionUser = await sdk.connect(url(), "region", "nw-region-pass1");
      const theirs = await regionUser.endpoint("Customers").get();
      expect(theirs.map((r) => r.CustomerID)).to.deep.equal(["ALPHA", "BRAVO"]);
      const plain = await call(platform.baseUrl, "GET", "/rest/acme/northwind/v1/Customers/CASCA", {
        headers: { authorization: "CALiveAPICreator nwRegionOR-key:1" },
      });
      expect(plain.body).to.deep.equal([]);
    });

    it("resources answer their nested shape, with LAC's attribute names and order", async () => {
      const admKey = keys.find((k) => k.name === "Admin key")!.apikey;
      const answer = await call(platform.baseUrl, "GET", "/rest/acme/northwind/v1/CustomersBusObject/ALPHA", {
        headers: { authorization: `CALiveAPICreator ${admKey}:1` },
      });
      expect(answer.status).to.equal(200);
      const alpha = answer.body[0];
      expect(alpha).to.include({ ID: "ALPHA", Name: "Alpha Outfitters", Balance: 264, CreditLimit: 1000 });
      expect(alpha.Orders.map((o: { OrderID: number }) => o.OrderID)).to.deep.equal([10002, 10001]);
      const open = alpha.Orders.find((o: { OrderID: number }) => o.OrderID === 10001);
      expect(open).to.include({ Total: 264, Shipped: null });
      expect(open.Lines.map((l: { ProductID: number }) => l.ProductID)).to.deep.equal([1, 2]);
      const all = await call(platform.baseUrl, "GET", "/rest/acme/northwind/v1/CustomersBusObject", {
        headers: { authorization: `CALiveAPICreator ${admKey}:1` },
      });
      expect(all.body.map((c: { Name: string }) => c.Name)).to.deep.equal([
        "Alpha Outfitters",
        "Bravo Grocers",
        "Cascade Foods",
        "Delta Deli",
      ]);
      const oregon = await call(platform.baseUrl, "GET", "/rest/acme/northwind/v1/OregonCustomers", {
        headers: { authorization: `CALiveAPICreator ${admKey}:1` },
      });
      expect(oregon.body.map((c: { CustomerID: string }) => c.CustomerID)).to.deep.equal(["BRAVO", "ALPHA"]);
    });

    it("the read-only user reads and may not write; a key whose value could not be kept works with its new one", async () => {
      const guest = await sdk.connect(url(), "guest", "nw-guest-pass1");
      expect((await guest.endpoint("Products").get()).length).to.equal(3);
      const denied = await rejection(guest.endpoint("Products").post({ ProductName: "Nope" }));
      expect(denied).to.include({ statusCode: 403 });
      const short = keys.find((k) => k.name === "short")!.apikey;
      const viaNew = await call(platform.baseUrl, "GET", "/rest/acme/northwind/v1/Products", {
        headers: { authorization: `CALiveAPICreator ${short}:1` },
      });
      expect(viaNew.status).to.equal(200);
    });
  });

  describe("banking", () => {
    const url = () => `${platform.baseUrl}/rest/acme/banking/v1`;
    let teller: Connection;

    it("imports (PostgreSQL DDL, rows as INSERTs), leaving out the event that used LAC's beans", async () => {
      const body = bankingBody();
      const dry = await admin.send("POST", importPath("banking", true), body);
      expect(dry.status, JSON.stringify(dry.body)).to.equal(200);
      const unmapped = dry.body.unmapped as Unmapped[];
      expect(unmapped.find((u) => u.path === "$.Rules[16]")?.reason).to.contain(
        "logicContext.createPersistentBean",
      );
      expect(unmapped.find((u) => u.path === "$.Users[1]")?.reason).to.contain("no password hash");
      expect(unmapped.map((u) => u.path)).to.include.members([
        "$.Handlers[0]",
        "$.NamedFilters[0]",
        "$.NamedSorts[0]",
      ]);
      const applied = await admin.send("POST", importPath("banking"), { ...body, confirm: dry.body.confirm });
      expect(applied.status, JSON.stringify(applied.body)).to.equal(201);
      expect(applied.body.data.refused).to.deep.equal([]);
      expect(applied.body.users).to.deep.include({ username: "guest", password: "none" });
    });

    it("a deposit adjusts the account's totals and the customer's balances, as the sums and formulas say", async () => {
      teller = await sdk.connect(url(), "Teller1", "bank-teller-pass1");
      expect(teller.apiKey).to.match(/^tsk_/);
      const deposit = await teller
        .endpoint("CHECKING_TRANS")
        .post({ AcctNum: 100, CustNum: 1, DepositAmt: 50 });
      const of = (resource: string) =>
        deposit.txsummary.find((r: Row) => r["@metadata"].resource === resource);
      expect(of("CHECKING_TRANS")).to.include({ Total: 50 });
      expect(of("CHECKING_TRANS")!.TransDate).to.be.a("string");
      expect(of("CHECKING")).to.include({ Deposits: 750, AvailableBalance: 550, ItemCount: 3 });
      expect(of("CUSTOMER")).to.include({ CheckingAcctBal: 550, TotalBalance: 1550 });
    });

    it("a withdrawal past the balance is refused with the validation's message", async () => {
      const refused = await rejection(
        teller.endpoint("CHECKING_TRANS").post({ AcctNum: 100, CustNum: 1, WithdrawlAmt: 600 }),
      );
      expect(refused).to.include({ statusCode: 400, errorCode: 4004 });
      expect(refused.errorMessage).to.equal("Checking balance of Harbor Supply cannot go below zero");
      const refusedTransfer = await rejection(
        teller
          .endpoint("TRANSFER_FUNDS")
          .post({ FromAcct: 100, FromCustNum: 1, ToAcct: 100, ToCustNum: 1, TransferAmt: 1 }),
      );
      expect(refusedTransfer.errorMessage).to.equal("A transfer needs two different accounts");
    });

    it("the customer resource answers its children and its parent object; the user without a hash cannot log in", async () => {
      const [customer] = await teller.endpoint("CUSTOMERObject/1").get();
      expect(customer).to.include({ CustNum: 1, Name: "Harbor Supply", CheckingAcctBal: 550 });
      expect(customer!.valid_stateParent).to.include({ stateCode: "OR", stateName: "Oregon" });
      expect((customer!.TRANSFER_FUNDSChild as Row[]).map((t) => t.TransId)).to.deep.equal([1]);
      expect((customer!.Checking as Row[]).map((c) => c.AcctNum)).to.deep.equal([100]);
      const guest = await sdk.connect(url(), "guest", "Password1");
      expect(guest.apiKey).to.equal(null);
    });
  });

  describe("the account's plan", () => {
    const importInto = (account: string, dryRun = false) =>
      `/accounts/${account}/projects/northwind/import/lac${dryRun ? "?dryRun=true" : ""}`;
    /** A new account on a new plan of these limits; new key values (acme's import kept Northwind's). */
    async function onPlan(account: string, limits: Record<string, number>) {
      expect((await admin.send("PUT", `/plans/${account}-plan`, limits)).status).to.equal(201);
      expect((await admin.putAccount(account)).status).to.equal(201);
      expect(
        (await admin.send("PUT", `/accounts/${account}/plan`, { plan: `${account}-plan` })).status,
      ).to.equal(200);
      return { ...northwindBody(), keepKeyValues: false };
    }
    /** The dry run, then the import with its code: refused whole, nothing of it stored. */
    async function refusedWhole(account: string, body: object) {
      const dry = await admin.send("POST", importInto(account, true), body);
      expect(dry.status, JSON.stringify(dry.body)).to.equal(200);
      const refused = await admin.send("POST", importInto(account), { ...body, confirm: dry.body.confirm });
      expect(refused.status, JSON.stringify(refused.body)).to.equal(403);
      expect(refused.body.errorCode).to.equal(4032);
      expect(refused.body.exceeds).to.deep.equal(dry.body.quota.exceeds);
      expect((await admin.send("GET", `/accounts/${account}/projects/northwind`)).status).to.equal(404);
      expect((await admin.send("GET", `/accounts/${account}/projects/northwind/apikeys`)).status).to.equal(
        404,
      );
      return { dry: dry.body, refused: refused.body };
    }

    it("the dry run lists every limit the import would pass; the import is refused whole, naming the first", async () => {
      const body = await onPlan("tight", { usersPerProject: 2, apiKeysPerProject: 2, rowsPerTable: 3 });
      const { dry, refused } = await refusedWhole("tight", body);
      expect(dry.quota.plan).to.equal("tight-plan");
      expect(dry.quota.exceeds).to.deep.include.members([
        { limit: "usersPerProject", value: 2, used: 0, adding: 3 },
        { limit: "apiKeysPerProject", value: 2, used: 0, adding: 3 },
        { limit: "rowsPerTable", value: 3, used: 0, adding: 4, table: "Customers" },
        { limit: "rowsPerTable", value: 3, used: 0, adding: 4, table: "Orders" },
      ]);
      expect(refused.quota).to.deep.equal({
        limit: "usersPerProject",
        value: 2,
        used: 0,
        plan: "tight-plan",
      });
      expect(refused.errorMessage).to.contain("Nothing was imported");
      const usage = await admin.send("GET", "/accounts/tight/usage");
      expect(usage.body.current.projects).to.equal(0);
    });

    it("projects and stored bytes count too", async () => {
      const single = await onPlan("single", { projects: 1 });
      expect(
        (
          await admin.putProject("single", "other", {
            tables: { t: { key: ["id"], columns: { id: { type: "string", required: true } } } },
            apiVersions: { v1: {} },
          })
        ).status,
      ).to.equal(201);
      const { refused } = await refusedWhole("single", single);
      expect(refused.quota).to.deep.equal({ limit: "projects", value: 1, used: 1, plan: "single-plan" });
      const bytes = await onPlan("bytes", { storedBytes: 100 });
      const { dry } = await refusedWhole("bytes", bytes);
      expect(dry.quota.exceeds).to.have.length(1);
      expect(dry.quota.exceeds[0]).to.include({ limit: "storedBytes", value: 100, used: 0 });
      expect(dry.quota.exceeds[0].adding).to.be.greaterThan(100);
    });

    it("an import that fits the plan exactly is made; no row is refused for the plan", async () => {
      const probe = await admin.send("POST", importInto("tight", true), {
        ...northwindBody(),
        keepKeyValues: false,
      });
      const rows = Object.values(probe.body.data.rows as Record<string, number>);
      const body = await onPlan("fits", {
        projects: 1,
        tablesPerProject: Object.keys(probe.body.definition.tables).length,
        usersPerProject: 3,
        apiKeysPerProject: 3,
        rowsPerTable: Math.max(...rows),
        storedBytes: 10_000_000,
      });
      const dry = await admin.send("POST", importInto("fits", true), body);
      expect(dry.body.quota).to.deep.equal({ plan: "fits-plan", exceeds: [] });
      const applied = await admin.send("POST", importInto("fits"), { ...body, confirm: dry.body.confirm });
      expect(applied.status, JSON.stringify(applied.body)).to.equal(201);
      expect(applied.body.keys).to.have.length(3);
      // Only the rows the data itself refuses (a missing parent), none for the plan: all the others loaded.
      const refused = applied.body.data.refused as Unmapped[];
      for (const r of refused) expect(r.reason).to.not.contain("plan");
      const loaded = Object.values(applied.body.data.loaded as Record<string, number>);
      expect(loaded.reduce((a, b) => a + b, 0)).to.equal(rows.reduce((a, b) => a + b, 0) - refused.length);
    });
  });

  describe("make lac-import (the command)", () => {
    const cli = (...args: string[]) =>
      promisify(execFile)(process.execPath, [
        path.resolve(import.meta.dirname, "../../../services/dev-stack/src/lac-import.ts"),
        "--export",
        path.join(FIXTURES, "northwind/export.json"),
        "--ddl",
        path.join(FIXTURES, "northwind/schema.sql"),
        "--data-dir",
        path.join(FIXTURES, "northwind/data"),
        "--account",
        "acme",
        "--project",
        "cli-northwind",
        "--base",
        platform.baseUrl,
        "--token",
        platform.adminToken,
        ...args,
      ]);

    it("prints the dry run with its confirm code, then imports with it (new key values: Northwind's are taken)", async () => {
      const taken = await cli().catch((err: { stderr: string }) => err.stderr);
      expect(taken).to.contain("is in use by another key");
      const dry = await cli("--new-key-values");
      expect(dry.stdout).to.contain("Did not map (");
      expect(dry.stdout).to.contain("$.ApiKeys[2].apikey");
      const code = /CONFIRM=([0-9a-f]+)/.exec(dry.stdout)?.[1];
      expect(code).to.be.a("string");
      expect((await admin.send("GET", "/accounts/acme/projects/cli-northwind")).status).to.equal(404);
      const applied = await cli("--new-key-values", "--confirm", code as string);
      expect(applied.stdout).to.contain("Imported 'cli-northwind' (revision 1)");
      expect(applied.stdout).to.contain("refused data.Orders[4]");
      expect((await admin.send("GET", "/accounts/acme/projects/cli-northwind")).status).to.equal(200);
    });
  });
});
