/**
 * Paging of nested children: every parent of a page shows its children in
 * full (up to the page size) or with a next_batch of its own that, followed,
 * returns exactly the rest — whether or not the sub-resource shows its
 * foreign key — at one query per level unless parents have more children
 * than a page.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { createDataService, type DataService } from "../../../services/data/src/service.ts";
import { createLogger } from "../../../shared/logger.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, keyHeader, projectClient, type Reply } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const PAGESIZE = 6;
/** A key that needs escaping in a URL and quoting in a filter. */
const ODD = "O'Brien, Jr. & Sons/2";
/** Orders per customer, in key order: A, C and ODD have more than a page, the others fewer. */
const ORDERS: Record<string, number> = { A: 30, B: 3, C: 12, D: 0, E: 4, [ODD]: 8 };
const TRUNCATED = ["A", "C", ODD];

interface Batch {
  "@metadata"?: { next_batch?: string };
}
type Order = Batch & Record<string, unknown>;
type Customer = Batch & { Name: string; Orders: Order[] };

/** The objects of a list without its trailing next_batch element, and that element's URL. */
function split<T extends Batch>(list: T[]): { objects: T[]; next: string | undefined } {
  const next = list[list.length - 1]?.["@metadata"]?.next_batch;
  return { objects: next ? list.slice(0, -1) : list, next };
}

describe("nested children and their next_batch", () => {
  let platform: Platform;
  let api: ReturnType<typeof projectClient>;
  let key: string;
  let westKey: string;
  /** Order numbers of each customer, in key order. */
  const ordersOf = new Map<string, number[]>();

  before(async () => {
    platform = await startPlatform();
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    const definition = demoProject();
    // Customers.Orders shows every column of an order, its foreign key too; Clients.Orders does not.
    const resources = (definition.apiVersions as { v1: { resources: Record<string, unknown> } }).v1.resources;
    resources.Clients = {
      table: "customer",
      attributes: { Name: "name" },
      subresources: {
        Orders: {
          table: "purchaseorder",
          via: "customer",
          attributes: { Number: "order_number", Amount: "amount_total" },
        },
      },
    };
    const roles = definition.roles as Record<string, unknown>;
    roles["West orders"] = {
      tables: {
        customer: { access: ["read"], rowFilter: "region = 'west'" },
        purchaseorder: { access: ["read"] },
      },
    };
    expect((await admin.putProject("acme", "demo", definition)).status).to.equal(201);
    key = (await admin.createKey("acme", "demo", { name: "k", roles: ["Full access"] })).body.apikey;
    westKey = (await admin.createKey("acme", "demo", { name: "w", roles: ["West orders"] })).body.apikey;
    api = projectClient(platform.baseUrl, "acme", "demo");
    const customers = Object.keys(ORDERS).map((name) => ({ name, region: name === "B" ? "west" : "east" }));
    expect((await api.post(key, "customer", customers)).status).to.equal(201);
    // The big parents' orders first, so that they come first in key order too.
    for (const name of [...TRUNCATED, "B", "E"]) {
      const orders = Array.from({ length: ORDERS[name]! }, (_, i) => ({
        customer_name: name,
        amount_total: i,
      }));
      const r = await api.post(key, "purchaseorder", orders);
      expect(r.status).to.equal(201);
      const numbers = r.body.txsummary.map((o: { order_number: number }) => o.order_number);
      ordersOf.set(
        name,
        numbers.sort((a: number, b: number) => a - b),
      );
    }
    ordersOf.set("D", []);
  });
  after(() => platform.close());

  /** Follows next_batch URLs to the end; returns every object and the size of the largest page. */
  async function follow(url: string): Promise<{ objects: Order[]; largest: number }> {
    const objects: Order[] = [];
    let largest = 0;
    let next: string | undefined = url;
    for (let hops = 0; next; hops++) {
      expect(hops, "next_batch hops").to.be.below(50);
      const target: URL = new URL(next);
      const { pathname, search } = target;
      const r: Reply<Order[]> = await call<Order[]>(platform.baseUrl, "GET", pathname + search, {
        headers: keyHeader(key),
      });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      const page: { objects: Order[]; next: string | undefined } = split(r.body);
      objects.push(...page.objects);
      largest = Math.max(largest, page.objects.length);
      next = page.next;
    }
    return { objects, largest };
  }

  for (const [resource, numberAttr, fk] of [
    ["Customers", "order_number", "visible"],
    ["Clients", "Number", "hidden"],
  ] as const) {
    describe(`a sub-resource whose foreign key is ${fk} (${resource}.Orders)`, () => {
      it("shows every later parent's children in full after a parent with many", async () => {
        const r = await api.get(key, `${resource}?pagesize=${PAGESIZE}`);
        expect(r.status).to.equal(200);
        const { objects } = split<Customer>(r.body);
        expect(objects.map((c) => c.Name)).to.deep.equal(Object.keys(ORDERS));
        for (const customer of objects) {
          const all = ordersOf.get(customer.Name)!;
          const { objects: shown, next } = split(customer.Orders);
          expect(
            shown.map((o) => o[numberAttr]),
            `orders shown under ${customer.Name}`,
          ).to.deep.equal(all.slice(0, PAGESIZE));
          expect(next !== undefined, `next_batch under ${customer.Name}`).to.equal(all.length > PAGESIZE);
        }
      });

      it("each truncated parent's next_batch, followed to the end, yields exactly its other children", async () => {
        const r = await api.get(key, `${resource}?pagesize=${PAGESIZE}`);
        const customers = split<Customer>(r.body).objects;
        for (const name of TRUNCATED) {
          const next = split(customers.find((c) => c.Name === name)!.Orders).next;
          expect(next, `next_batch under ${name}`).to.be.a("string");
          const { objects, largest } = await follow(next!);
          const rest = ordersOf.get(name)!.slice(PAGESIZE);
          expect(
            objects.map((o) => o[numberAttr]),
            `orders of ${name} after the first page`,
          ).to.deep.equal(rest);
          expect(largest, "the level's page size is kept").to.equal(Math.min(PAGESIZE, rest.length));
        }
      });
    });
  }

  it("gives nested children their next_batch with nometa too", async () => {
    const r = await api.get(key, `Clients?pagesize=${PAGESIZE}&nometa=true`);
    const a = split<Customer>(r.body).objects[0]!;
    expect(a["@metadata"]).to.equal(undefined);
    const { objects } = await follow(split(a.Orders).next!);
    expect(objects.map((o) => o.Number)).to.deep.equal(ordersOf.get("A")!.slice(PAGESIZE));
    expect(objects.every((o) => o["@metadata"] === undefined)).to.equal(true);
  });

  describe("the parent parameter", () => {
    it("lists the children of one parent the key may read", async () => {
      const r = await api.get(westKey, "Customers.Orders?parent=B");
      expect(r.status).to.equal(200);
      expect(r.body.map((o: Order) => o.order_number)).to.deep.equal(ordersOf.get("B"));
    });
    it("lists nothing under a parent the key may not read, or one that does not exist", async () => {
      for (const parent of ["A", "Nobody"]) {
        const r = await api.get(westKey, `Customers.Orders?parent=${parent}`);
        expect(r.status).to.equal(200);
        expect(r.body, parent).to.deep.equal([]);
      }
    });
    it("is refused on a resource that is not a nested list of children", async () => {
      for (const path of ["purchaseorder?parent=A", "Customers?parent=A"]) {
        const r = await api.get(key, path);
        expect(r.status, path).to.equal(400);
        expect(r.body.errorCode).to.equal(4001);
        expect(r.body.errorMessage).to.contain("'parent'");
      }
      const twice = await api.get(key, "Customers.Orders?parent=A&parent=B");
      expect(twice.status).to.equal(400);
    });
  });

  describe("queries per level", () => {
    let counted: DataService;
    let server: http.Server;
    let finds: string[];

    before(async () => {
      // A second process of the deployment whose driver reports every command it sends.
      const url = new URL(platform.dataConfig.MONGO_URL);
      url.searchParams.set("monitorCommands", "true");
      counted = await createDataService(
        { ...platform.dataConfig, MONGO_URL: url.toString() },
        createLogger("data-counted", "silent"),
      );
      const storage = (await counted.deps.projects.get("acme", "demo"))!.storage;
      counted.mongo.on("commandStarted", (event) => {
        if (event.commandName === "find" && event.databaseName === storage.database)
          finds.push(event.command.find as string);
      });
      server = http.createServer(counted.app.callback());
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    });
    after(async () => {
      await new Promise((resolve) => server.close(resolve));
      await counted.close();
    });

    async function findsOf(path: string): Promise<string[]> {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      finds = [];
      const r = await call(base, "GET", `/rest/acme/demo/v1/${path}`, { headers: keyHeader(key) });
      expect(r.status).to.equal(200);
      return finds.map((collection) => collection.slice(collection.lastIndexOf(".") + 1));
    }

    it("is one when no parent has more children than a page", async () => {
      const filter = encodeURIComponent("Name in ('B', 'D', 'E')");
      expect(await findsOf(`Customers?pagesize=${PAGESIZE}&filter=${filter}`)).to.deep.equal([
        "customer",
        "purchaseorder",
      ]);
    });

    it("grows by one round for the parents a parent with many children crowded out", async () => {
      expect(await findsOf(`Customers?pagesize=${PAGESIZE}`)).to.deep.equal([
        "customer",
        "purchaseorder",
        "purchaseorder",
      ]);
    });
  });
});
