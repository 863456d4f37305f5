/**
 * The fixed data, loaded through the public admin and data APIs (the edge)
 * exactly as a client would: one account, one project (the demo project of the
 * tests plus an `item` table), one built-in user and 200 customers for every
 * run; the 10,000 items only when a scenario needs them (loadItems), written
 * with POSTs of arrays of 1,000.
 *
 * Keys are strings on purpose: FerretDB 1.24 on SQLite pushes a lookup by `_id`
 * down to SQLite only for string (and ObjectId) values; a numeric `_id` is
 * found by reading the whole collection, which makes every insert (the writer
 * checks that the key is free) cost a full scan.
 */
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, keyHeader, projectClient, type Reply } from "../../support/http.ts";
import type { Stack } from "./stack.ts";

export const ACCOUNT = "bench";
export const PROJECT = "shop";
export const USERNAME = "alice";
export const PASSWORD = "bench-password-1";
/**
 * Users the login scenarios rotate over (the first is USERNAME), more than their
 * connections: parallel logins of one user beyond LOGIN_FAILURES_BEFORE_LOCKOUT
 * are refused while their verdicts are pending (the lock-out counts them), so a
 * single user would measure the throttle, not a login.
 */
export const LOGIN_USERS = Array.from({ length: 20 }, (_, i) => (i === 0 ? USERNAME : `${USERNAME}${i}`));

/** A `next` for load targets: each request logs in as the next of LOGIN_USERS. */
export function rotatingLogins(): () => { body: string } {
  let n = 0;
  return () => ({
    body: JSON.stringify({ username: LOGIN_USERS[n++ % LOGIN_USERS.length], password: PASSWORD }),
  });
}
export const CUSTOMERS = 200;
export const ITEMS = 10_000;
export const REGIONS = ["north", "south", "east", "west"] as const;
/** Rows per POST (the data API's maximum per request). */
export const BATCH = 1_000;

export interface Fixtures {
  account: string;
  project: string;
  /** A key from a login of the built-in user (role "Full access"). */
  key: string;
  /** `/rest/<account>/<project>/v1` */
  root: string;
  /** A customer that exists, for GET by key. */
  customerName: string;
}

export function expectStatus(reply: Reply, status: number, what: string): void {
  if (reply.status !== status)
    throw new Error(`${what}: expected ${status}, got ${reply.status} ${JSON.stringify(reply.body)}`);
}

export function customerName(i: number): string {
  return `c${String(i).padStart(5, "0")}`;
}

/** Item keys: `i00001` … `i10000` (sort as numbers do). */
export function itemId(i: number): string {
  return `i${String(i).padStart(5, "0")}`;
}

export function shopProject() {
  const project = demoProject();
  return {
    ...project,
    tables: {
      ...project.tables,
      item: {
        key: ["id"],
        columns: {
          id: { type: "string", required: true },
          name: { type: "string", required: true },
          grp: { type: "integer" },
          price: { type: "number", default: 0 },
        },
      },
    },
  };
}

/** POSTs `rows` in arrays of BATCH objects. */
export async function postInBatches(
  stack: Stack,
  key: string,
  path: string,
  rows: Record<string, unknown>[],
): Promise<void> {
  const client = projectClient(stack.baseUrl, ACCOUNT, PROJECT);
  for (let i = 0; i < rows.length; i += BATCH) {
    const reply = await client.post(key, `${path}?txsummary=false`, rows.slice(i, i + BATCH));
    expectStatus(reply, 201, `POST ${path} rows ${i}..${i + BATCH - 1}`);
  }
}

export async function loadFixtures(stack: Stack, log: (line: string) => void): Promise<Fixtures> {
  const started = Date.now();
  const admin = adminClient(stack.baseUrl, stack.adminToken);
  expectStatus(await admin.putAccount(ACCOUNT), 201, "PUT account");
  expectStatus(await admin.putProject(ACCOUNT, PROJECT, shopProject()), 201, "PUT project");
  for (const username of LOGIN_USERS) {
    expectStatus(
      await admin.putUser(ACCOUNT, PROJECT, username, { password: PASSWORD, roles: ["Full access"] }),
      201,
      `PUT user ${username}`,
    );
  }
  const client = projectClient(stack.baseUrl, ACCOUNT, PROJECT);
  const login = await client.login({ username: USERNAME, password: PASSWORD });
  expectStatus(login, 200, "login");
  const key = login.body.apikey as string;

  const customers = Array.from({ length: CUSTOMERS }, (_, i) => ({
    name: customerName(i),
    credit_limit: 1000 + i,
    region: REGIONS[i % REGIONS.length],
  }));
  await postInBatches(stack, key, "customer", customers);
  const name = customerName(CUSTOMERS / 2);
  // The data is there and readable with the key.
  const check = await client.get(key, `customer/${name}`);
  expectStatus(check, 200, "GET a customer");
  if (!Array.isArray(check.body) || check.body.length !== 1) throw new Error(`customer ${name} is missing`);
  log(`fixtures: project, user and ${CUSTOMERS} customers loaded in ${seconds(started)} s`);
  return { account: ACCOUNT, project: PROJECT, key, root: client.root, customerName: name };
}

/** The 10,000 rows of `item`, in POSTs of BATCH objects. */
export async function loadItems(
  stack: Stack,
  fixtures: Fixtures,
  log: (line: string) => void,
): Promise<void> {
  const started = Date.now();
  const items = Array.from({ length: ITEMS }, (_, i) => ({
    id: itemId(i + 1),
    name: `item ${i + 1}`,
    grp: i % 50,
    price: (i % 1000) / 10,
  }));
  for (let i = 0; i < items.length; i += BATCH) {
    await postInBatches(stack, fixtures.key, "item", items.slice(i, i + BATCH));
    log(`items: ${Math.min(i + BATCH, items.length)} of ${ITEMS} after ${seconds(started)} s`);
  }
  const client = projectClient(stack.baseUrl, ACCOUNT, PROJECT);
  const check = await client.get(fixtures.key, `item/${itemId(ITEMS)}`);
  expectStatus(check, 200, "GET the last item");
  if (!Array.isArray(check.body) || check.body.length !== 1) throw new Error("the last item is missing");
}

function seconds(since: number): string {
  return ((Date.now() - since) / 1000).toFixed(1);
}

export function authHeaders(fixtures: Fixtures): Record<string, string> {
  return keyHeader(fixtures.key);
}

/** A project with one table `table` (string key `id`, `name`, integer `qty`), no rules, and role "Full access". */
export function oneTableProject(table: string) {
  return {
    authentication: { provider: "builtin" },
    tables: {
      [table]: {
        key: ["id"],
        columns: {
          id: { type: "string", required: true },
          name: { type: "string" },
          qty: { type: "integer" },
        },
      },
    },
    apiVersions: { v1: { resources: {} } },
    roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
  };
}

/** A project of a scenario's own (created by this call) and a key of its role "Full access". */
export async function benchProject(
  stack: Stack,
  project: string,
  definition: unknown,
): Promise<{ key: string; client: ReturnType<typeof projectClient> }> {
  const admin = adminClient(stack.baseUrl, stack.adminToken);
  expectStatus(await admin.putProject(ACCOUNT, project, definition), 201, `PUT project ${project}`);
  const created = await admin.createKey(ACCOUNT, project, { name: "bench", roles: ["Full access"] });
  expectStatus(created, 201, `POST apikeys (${project})`);
  return { key: created.body.apikey as string, client: projectClient(stack.baseUrl, ACCOUNT, project) };
}
