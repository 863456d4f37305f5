/**
 * Store indexes from the definition: the key's, every relationship's foreign
 * key and the tables' own `indexes`, made in the background when a definition
 * is applied, dropped when it no longer asks for them, shown in the dry-run
 * diff, in `@tables` and (with their state) in the admin API; a unique index
 * refuses a second row with the same values at commit (400, nothing written).
 * The metadata collections get their indexes from the service.
 */
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, keyHeader, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { until } from "../../support/until.ts";

type Definition = ReturnType<typeof demoProject>;

/** The demo project with indexes of its own on customer. */
function withIndexes(indexes: { columns: string[]; unique?: boolean }[]): Definition {
  const definition = demoProject();
  const customer = definition.tables.customer as Record<string, unknown>;
  customer.columns = { ...(customer.columns as object), email: { type: "string" } };
  customer.indexes = indexes;
  return definition;
}

interface IndexStatus {
  table: string;
  name: string;
  columns: string[];
  unique: boolean;
  origin: string;
  state: string;
  error?: string;
}

describe("table indexes from the definition", function () {
  this.timeout(120_000);
  let platform: Platform;
  let admin: ReturnType<typeof adminClient>;
  let api: ReturnType<typeof projectClient>;
  let key: string;

  const statuses = async (): Promise<IndexStatus[]> =>
    (await admin.send("GET", "/accounts/acme/projects/demo/indexes")).body.indexes;
  const storeIndexes = async (table: string): Promise<string[]> => {
    const stored = await platform.data.deps.meta.getProjectWithStorage("acme", "demo");
    const db = platform.data.mongo.db(stored!.storage.database);
    const indexes = await db
      .collection(`${stored!.storage.collectionPrefix}${table}`)
      .listIndexes()
      .toArray();
    return indexes.map((i) => String(i.name)).sort();
  };
  const allReady = async () => (await statuses()).every((s) => s.state === "ready");

  before(async () => {
    platform = await startPlatform();
    admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    const put = await admin.putProject("acme", "demo", withIndexes([{ columns: ["email"], unique: true }]));
    expect(put.status).to.equal(201);
    key = await admin.keyWith("acme", "demo", ["Full access"]);
    api = projectClient(platform.baseUrl, "acme", "demo");
    await until("every index ready", allReady);
  });

  after(async () => {
    await platform?.close();
  });

  it("makes the key's, the foreign keys' and the definition's indexes, each ready", async () => {
    const list = (await statuses()).map(({ table, name, columns, unique, origin, state }) => ({
      table,
      name,
      columns,
      unique,
      origin,
      state,
    }));
    expect(list).to.deep.equal([
      { table: "customer", name: "key", columns: ["name"], unique: false, origin: "key", state: "ready" },
      {
        table: "customer",
        name: "ux_email",
        columns: ["email"],
        unique: true,
        origin: "definition",
        state: "ready",
      },
      {
        table: "purchaseorder",
        name: "key",
        columns: ["order_number"],
        unique: false,
        origin: "key",
        state: "ready",
      },
      {
        table: "purchaseorder",
        name: "fk_customer_name_order_number",
        columns: ["customer_name", "order_number"],
        unique: false,
        origin: "foreign key",
        state: "ready",
      },
    ]);
    expect(await storeIndexes("customer")).to.deep.equal(["_id_", "tessera_key", "tessera_ux_email"]);
    expect(await storeIndexes("purchaseorder")).to.deep.equal([
      "_id_",
      "tessera_fk_customer_name_order_number",
      "tessera_key",
    ]);
  });

  it("shows the table's indexes in @tables", async () => {
    const reply = await api.get(key, "@tables/customer");
    expect(reply.body.indexes).to.deep.equal([
      {
        name: "key",
        columns: ["name"],
        unique: false,
        origin: "key",
        serves: { filters: ["name = ?", "name < ? (or <=, >, >=, a range)"], orders: ["name"] },
      },
      {
        name: "ux_email",
        columns: ["email"],
        unique: true,
        origin: "definition",
        serves: { filters: ["email = ?", "email < ? (or <=, >, >=, a range)"], orders: ["email"] },
      },
    ]);
  });

  it("names the index a filter would need in the answer of a read no index serves", async () => {
    const scan = await api.get(key, "customer?filter=balance%20%3E%201");
    expect(scan.status).to.equal(200);
    expect(scan.headers.get("tessera-missing-index")).to.equal("customer(balance)");
    const served = await api.get(key, "customer?filter=email%20%3D%20'x'");
    expect(served.status).to.equal(200);
    expect(served.headers.get("tessera-missing-index")).to.equal(null);
  });

  it("shows the indexes a change adds and removes in the dry-run diff", async () => {
    const reply = await admin.send(
      "PUT",
      "/accounts/acme/projects/demo?dryRun=true",
      withIndexes([{ columns: ["region", "balance"] }]),
    );
    expect(reply.status).to.equal(200);
    expect(reply.body.tables.changed.customer.indexes).to.deep.equal({
      added: ["ix_region_balance_name"],
      removed: ["ux_email"],
    });
  });

  it("refuses an insert that repeats a unique index's values: 400, nothing of the request written", async () => {
    expect((await api.post(key, "customer", { name: "Ann", email: "ann@example.com" })).status).to.equal(201);
    const reply = await api.post(key, "customer", [
      { name: "Bob", email: "bob@example.com" },
      { name: "Ann2", email: "ann@example.com" },
    ]);
    expect(reply.status).to.equal(400);
    expect(reply.body.errorCode).to.equal(4003);
    expect(reply.body.errorMessage).to.match(/same values/);
    const names = (await api.get(key, "customer")).body.map((c: { name: string }) => c.name);
    expect(names).to.deep.equal(["Ann"]);
  });

  it("refuses an update that repeats a unique index's values: 400, the row unchanged", async () => {
    const created = await api.post(key, "customer", { name: "Cy", email: "cy@example.com" });
    expect(created.status).to.equal(201);
    const row = (await api.get(key, "customer/Cy")).body[0];
    const reply = await api.put(key, "customer/Cy", {
      email: "ann@example.com",
      "@metadata": { checksum: row["@metadata"].checksum },
    });
    expect(reply.status).to.equal(400);
    expect(reply.body.errorCode).to.equal(4003);
    expect((await api.get(key, "customer/Cy")).body[0].email).to.equal("cy@example.com");
  });

  it("still answers a repeated key as the key already existing", async () => {
    const reply = await api.post(key, "customer", { name: "Ann", email: "other@example.com" });
    expect(reply.status).to.equal(400);
    expect(reply.body.errorMessage).to.match(/already exists/);
  });

  it("reports a unique index the rows do not fit as failed, and drops indexes no longer asked for", async () => {
    expect((await api.post(key, "customer", { name: "Di", region: "west" })).status).to.equal(201);
    expect((await api.post(key, "customer", { name: "Ed", region: "west" })).status).to.equal(201);
    const put = await admin.putProject("acme", "demo", withIndexes([{ columns: ["region"], unique: true }]));
    expect(put.status).to.equal(200);
    await until("the unique region index failed", async () =>
      (await statuses()).some((s) => s.name === "ux_region" && s.state === "failed"),
    );
    const failed = (await statuses()).find((s) => s.name === "ux_region")!;
    expect(failed.error).to.match(/share values of \(region\)/);
    await until(
      "ux_email dropped",
      async () => !(await storeIndexes("customer")).includes("tessera_ux_email"),
    );
  });

  it("replaces an index of the shape before the key was appended, the new one made first", async () => {
    const stored = await platform.data.deps.meta.getProjectWithStorage("acme", "demo");
    const customer = platform.data.mongo
      .db(stored!.storage.database)
      .collection(`${stored!.storage.collectionPrefix}customer`);
    await customer.createIndex({ region: 1 }, { name: "tessera_ix_region" });
    const put = await admin.putProject("acme", "demo", withIndexes([{ columns: ["region"] }]));
    expect(put.status).to.equal(200);
    await until("ix_region replaced by ix_region_name", async () => {
      const names = await storeIndexes("customer");
      return names.includes("tessera_ix_region_name") && !names.includes("tessera_ix_region");
    });
    const page = await api.get(key, "customer?filter=region%20%3D%20'west'&pagesize=1");
    expect(page.body.map((c: { name?: string }) => c.name)).to.deep.equal(["Di", undefined]);
    const next = await fetch(page.body[1]["@metadata"].next_batch, { headers: keyHeader(key) });
    expect((await next.json()).map((c: { name: string }) => c.name)).to.deep.equal(["Ed"]);
  });

  it("makes the metadata collections' indexes itself", async () => {
    const meta = platform.data.mongo.db(platform.dataConfig.META_DB);
    const has = async (collection: string, key: Record<string, 1>) => {
      const indexes = await meta
        .collection(collection)
        .listIndexes()
        .toArray()
        .catch(() => []);
      return indexes.some((i) => JSON.stringify(i.key) === JSON.stringify(key));
    };
    await until("metadata indexes", async () =>
      (
        await Promise.all([
          has("audit", { accountUid: 1, _id: 1 }),
          has("audit", { account: 1, _id: 1 }),
          has("project_revisions", { projectUid: 1, revision: 1 }),
          has("admins", { accountUid: 1 }),
          has("users", { account: 1 }),
          has("projects", { account: 1 }),
          has("projects", { accountUid: 1 }),
        ])
      ).every(Boolean),
    );
  });
});
