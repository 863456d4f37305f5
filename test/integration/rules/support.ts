/** Shared set-up of the logic tests: the canonical example project on a fresh platform, and a recount from scratch. */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const root = path.resolve(import.meta.dirname, "../../..");

/** A row or definition as JSON, read freely by the tests. */
// biome-ignore lint/suspicious/noExplicitAny: JSON read freely by tests
export type Row = Record<string, any>;

/**
 * The rules' wall-clock time limit (SANDBOX_TIMEOUT_MS) in the rule suites: the spinning rules end
 * at it, and every other rule (store reads included) must fit in it however loaded the machine is.
 */
export const RULE_TIME_LIMIT_MS = "3000";

/** The canonical example definition (examples/canonical/project.json), freshly parsed. */
export function canonicalProject(): Row {
  return JSON.parse(readFileSync(path.join(root, "examples/canonical/project.json"), "utf8"));
}

export interface CanonicalSetup {
  platform: Platform;
  admin: ReturnType<typeof adminClient>;
  api: ReturnType<typeof projectClient>;
  key: string;
  close(): Promise<void>;
}

/** Starts a platform (or uses `existing`), loads `definition` as acme/shop and logs in as a full-access user. */
export async function setupProject(
  definition: unknown = canonicalProject(),
  options: { platform?: Platform; account?: string; project?: string } = {},
): Promise<CanonicalSetup> {
  const platform = options.platform ?? (await startPlatform());
  const account = options.account ?? "acme";
  const project = options.project ?? "shop";
  const admin = adminClient(platform.baseUrl, platform.adminToken);
  await admin.putAccount(account);
  const put = await admin.putProject(account, project, definition);
  expect(put.status, JSON.stringify(put.body)).to.be.oneOf([200, 201]);
  const user = await admin.putUser(account, project, "alice", {
    password: "pw-alice-123",
    roles: ["Full access"],
  });
  expect(user.status).to.be.oneOf([200, 201]);
  const api = projectClient(platform.baseUrl, account, project);
  const login = await api.login({ username: "alice", password: "pw-alice-123" });
  expect(login.status).to.equal(200);
  return {
    platform,
    admin,
    api,
    key: login.body.apikey,
    close: () => (options.platform ? Promise.resolve() : platform.close()),
  };
}

/** Every row of a table (no @metadata), following next_batch links. */
export async function allRows(api: CanonicalSetup["api"], key: string, table: string): Promise<Row[]> {
  const rows: Row[] = [];
  let url = `${table}?pagesize=5000&nometa=true`;
  for (;;) {
    const r = await api.get(key, url);
    expect(r.status, JSON.stringify(r.body)).to.equal(200);
    const batch = r.body as Row[];
    const last = batch[batch.length - 1];
    if (last?.["@metadata"]?.next_batch) {
      rows.push(...batch.slice(0, -1));
      url = last["@metadata"].next_batch.replace(/^.*\/v1\//, "");
    } else {
      rows.push(...batch);
      return rows;
    }
  }
}

export interface CanonicalState {
  customer: Row[];
  product: Row[];
  purchaseorder: Row[];
  lineitem: Row[];
  payment: Row[];
}

export async function readState(api: CanonicalSetup["api"], key: string): Promise<CanonicalState> {
  const [customer, product, purchaseorder, lineitem, payment] = await Promise.all(
    ["customer", "product", "purchaseorder", "lineitem", "payment"].map((t) => allRows(api, key, t)),
  );
  return { customer, product, purchaseorder, lineitem, payment } as CanonicalState;
}

const close = (a: number | null, b: number | null) =>
  a === null || b === null ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/** Recomputes every derived column of the canonical project from the rows; lists every mismatch. */
export function recountProblems(s: CanonicalState): string[] {
  const problems: string[] = [];
  const check = (what: string, stored: unknown, expected: number | null) => {
    const v = stored === undefined ? null : (stored as number | null);
    if (!close(v, expected)) problems.push(`${what}: stored ${String(v)}, recomputed ${String(expected)}`);
  };
  const products = new Map(s.product.map((p) => [p.product_number, p]));
  for (const li of s.lineitem) {
    check(`lineitem ${li.lineitem_id} amount`, li.amount, li.qty_ordered * li.product_price);
    if (!products.has(li.product_number)) problems.push(`lineitem ${li.lineitem_id} has no product`);
  }
  for (const o of s.purchaseorder) {
    const items = s.lineitem.filter((li) => li.order_number === o.order_number);
    check(
      `order ${o.order_number} amount_total`,
      o.amount_total,
      items.reduce((a, li) => a + li.amount, 0),
    );
    check(`order ${o.order_number} item_count`, o.item_count, items.length);
    check(
      `order ${o.order_number} smallest_item`,
      o.smallest_item,
      items.length ? Math.min(...items.map((li) => li.amount)) : null,
    );
  }
  for (const c of s.customer) {
    const orders = s.purchaseorder.filter((o) => o.customer_name === c.name);
    const unpaid = orders.filter((o) => !o.paid);
    check(
      `customer ${c.name} balance`,
      c.balance,
      unpaid.reduce((a, o) => a + o.amount_total, 0),
    );
    check(`customer ${c.name} unpaid_orders`, c.unpaid_orders, unpaid.length);
    check(
      `customer ${c.name} biggest_order`,
      c.biggest_order,
      orders.length ? Math.max(...orders.map((o) => o.amount_total)) : null,
    );
    if (c.balance > c.credit_limit + 1e-9) problems.push(`customer ${c.name} is over its credit limit`);
  }
  for (const p of s.product) {
    const items = s.lineitem.filter((li) => li.product_number === p.product_number);
    check(
      `product ${p.product_number} quantity_ordered`,
      p.quantity_ordered,
      items.reduce((a, li) => a + li.qty_ordered, 0),
    );
  }
  return problems;
}

/** `@metadata`-free view of a txsummary: [resource, verb, key attribute] per entry. */
export function summaryShape(txsummary: Row[]): [string, string][] {
  return txsummary.map((e) => [e["@metadata"].resource, e["@metadata"].verb]);
}

/** The line-item fixture of the store-fault tests: a customer, a product, an order with one line. */
export interface LineFixture {
  order: number;
  product: number;
}

export async function loadLineFixture(s: CanonicalSetup): Promise<LineFixture> {
  await s.api.post(s.key, "customer", { name: "Alpha", credit_limit: 100000 });
  const product = (await s.api.post(s.key, "product", { name: "Widget", price: 10 })).body.txsummary[0]
    .product_number;
  const order = (await s.api.post(s.key, "purchaseorder", { customer_name: "Alpha" })).body.txsummary[0]
    .order_number;
  await postLine(s.api, s.key, { order, product }, 1);
  return { order, product };
}

/** POSTs a line item of `qty` to the fixture's order and product. */
export function postLine(api: CanonicalSetup["api"], key: string, f: LineFixture, qty: number) {
  return api.post(key, "lineitem", { order_number: f.order, product_number: f.product, qty_ordered: qty });
}

/** A line item posted through `api` is accepted, and every aggregate still equals its recount. */
export async function expectLineAccepted(
  s: CanonicalSetup,
  api: CanonicalSetup["api"],
  f: LineFixture,
  qty: number,
): Promise<void> {
  const r = await postLine(api, s.key, f, qty);
  expect(r.status, JSON.stringify(r.body)).to.equal(201);
  expect(recountProblems(await readState(s.api, s.key))).to.deep.equal([]);
}
