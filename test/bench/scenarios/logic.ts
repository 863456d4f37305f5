/**
 * Scenarios for features still being built. Each one sets up what it needs and
 * first checks that the feature answers; until it does, the scenario reports
 * itself as pending (with the reason) instead of measuring something else.
 *  - rules-cascade: POST of one line item whose rules cascade over three levels
 *    (line item formula → order sum → customer sum) vs the same POST into a
 *    table without rules (rules engine: services/data/src/rules).
 *  - sandbox-overhead: POST into a table with one formula rule (one sandbox call
 *    per row) vs the same table without rules.
 *  - rules-grandparent: POST of a row whose formula reads its grand-parent
 *    (`row.order.customer.name`) vs one whose formula reads its parent.
 *  - custom-provider-login: login through a custom JavaScript provider (sandbox:
 *    services/data/src/sandbox) vs the built-in provider.
 */
import { adminClient, keyHeader, projectClient } from "../../support/http.ts";
import { ACCOUNT, expectStatus, LOGIN_USERS, PASSWORD, rotatingLogins, USERNAME } from "../lib/fixtures.ts";
import { startTracedService, type Trace } from "../lib/probe.ts";
import type { BenchContext, Scenario } from "../lib/types.ts";

const CONNECTIONS = 10;
const LOGIC_PROJECT = "logic";
const CUSTOM_PROJECT = "custom";
const ORDERS = 100;

// Client-chosen string keys, not generated ones: on FerretDB the sequence behind a generated key
// (findOneAndUpdate with $inc) is not atomic, so concurrent POSTs get the same key and fail with 400.
const itemColumns = {
  id: { type: "string", required: true },
  order_number: { type: "integer", required: true },
  qty: { type: "integer", default: 1 },
  price: { type: "number", default: 0 },
  amount: { type: "number", default: 0 },
};

const itemOrder = (children: string) => ({
  table: "lorder",
  columns: { order_number: "order_number" },
  children,
});

function logicProject() {
  return {
    authentication: { provider: "builtin" },
    tables: {
      lcustomer: {
        key: ["name"],
        columns: { name: { type: "string", required: true }, balance: { type: "number", default: 0 } },
      },
      lorder: {
        key: ["order_number"],
        columns: {
          order_number: { type: "integer", required: true },
          customer_name: { type: "string", required: true },
          amount_total: { type: "number", default: 0 },
        },
        parents: { customer: { table: "lcustomer", columns: { customer_name: "name" }, children: "orders" } },
      },
      lineitem: {
        key: ["id"],
        columns: itemColumns,
        parents: {
          order: { table: "lorder", columns: { order_number: "order_number" }, children: "lineitems" },
        },
      },
      // One table without rules per scenario: on FerretDB an insert costs more as its table grows.
      cascadeplain: { key: ["id"], columns: itemColumns },
      sandboxplain: { key: ["id"], columns: itemColumns },
      formulaitem: { key: ["id"], columns: itemColumns },
      parentitem: { key: ["id"], columns: itemColumns, parents: { order: itemOrder("parentitems") } },
      grandparentitem: {
        key: ["id"],
        columns: itemColumns,
        parents: { order: itemOrder("grandparentitems") },
      },
    },
    rules: [
      { table: "lineitem", type: "formula", column: "amount", expression: "row.qty * row.price" },
      { table: "lorder", type: "sum", column: "amount_total", children: "lineitems", of: "amount" },
      { table: "lcustomer", type: "sum", column: "balance", children: "orders", of: "amount_total" },
      { table: "formulaitem", type: "formula", column: "amount", expression: "row.qty * row.price" },
      {
        table: "parentitem",
        type: "formula",
        column: "amount",
        expression: "row.qty * row.price * (row.order.customer_name ? 1 : 0)",
      },
      {
        table: "grandparentitem",
        type: "formula",
        column: "amount",
        expression: "row.qty * row.price * (row.order.customer.name ? 1 : 0)",
      },
    ],
    apiVersions: { v1: { resources: {} } },
    roles: { "Full access": { tables: { "*": { access: ["read", "insert", "update", "delete"] } } } },
  };
}

const customerOf = (order: number) => `lc${String(order).padStart(4, "0")}`;

type LogicProject = { key: string; reason?: undefined } | { key?: undefined; reason: string };

/** Creates the logic project once; resolves to a key for it, or to the reason it cannot be measured yet. */
function logicProjectFor(ctx: BenchContext): Promise<LogicProject> {
  return ctx.once("logic-project", async (): Promise<LogicProject> => {
    const { stack } = ctx;
    const admin = adminClient(stack.baseUrl, stack.adminToken);
    const put = await admin.putProject(ACCOUNT, LOGIC_PROJECT, logicProject());
    if (put.status !== 201)
      return { reason: `the project definition with rules is refused: ${JSON.stringify(put.body)}` };
    // Admin keys carry roles of the project they are made for; make one with a manual key record.
    const created = await admin.createKey(ACCOUNT, LOGIC_PROJECT, { name: "bench", roles: ["Full access"] });
    expectStatus(created, 201, "POST apikeys (logic project)");
    const key = created.body.apikey as string;
    const client = projectClient(stack.baseUrl, ACCOUNT, LOGIC_PROJECT);
    const customers = Array.from({ length: ORDERS }, (_, i) => ({ name: customerOf(i + 1) }));
    expectStatus(await client.post(key, "lcustomer", customers), 201, "POST lcustomer");
    const orders = Array.from({ length: ORDERS }, (_, i) => ({
      order_number: i + 1,
      customer_name: customerOf(i + 1),
    }));
    expectStatus(await client.post(key, "lorder", orders), 201, "POST lorder");
    const probe = await client.post(key, "lineitem", { id: "probe-1", order_number: 1, qty: 2, price: 3 });
    if (probe.status !== 201)
      return { reason: `POST lineitem answers ${probe.status}: ${JSON.stringify(probe.body)}` };
    const customer = await client.get(key, `lcustomer/${customerOf(1)}`);
    const balance = customer.body?.[0]?.balance;
    if (balance !== 6)
      return {
        reason: `rules engine not active: after POST lineitem {qty: 2, price: 3} the customer's balance is ${balance}, not 6`,
      };
    return { key };
  });
}

/** POST of one row into `table`, rotating over the orders so that concurrent requests rarely touch the same rows. */
let written = 0;

function postRow(ctx: BenchContext, key: string, table: string) {
  return {
    url: `${ctx.stack.dataUrl}/rest/${ACCOUNT}/${LOGIC_PROJECT}/v1/${table}?txsummary=false`,
    method: "POST" as const,
    headers: keyHeader(key),
    next: () => {
      const n = ++written;
      return { body: JSON.stringify({ id: `r${n}`, order_number: (n % ORDERS) + 1, qty: 2, price: 1.5 }) };
    },
  };
}

/** MongoDB commands that read rows, and those that write them. */
const READS = new Set(["find", "count", "aggregate", "distinct", "getMore"]);
const WRITES = new Set(["insert", "update", "delete", "findAndModify"]);
/** Rows a cascaded insert changes: the line item, its order and the order's customer. */
const AFFECTED_ROWS = 3;
const TRACED_CALLS = 30;

/**
 * The store commands of one POST, counted on the wire by the MongoDB driver's command monitoring in
 * a traced data service of the bench process (lib/probe.ts), for a plain insert and a cascaded one.
 */
async function countStoreCommands(ctx: BenchContext, key: string): Promise<void> {
  const probe = await startTracedService(ctx.stack);
  const path = (table: string) => `/rest/${ACCOUNT}/${LOGIC_PROJECT}/v1/${table}?txsummary=false`;
  const auth = keyHeader(key).authorization!;
  const post = (table: string) => (call: number) =>
    probe.request(
      "POST",
      path(table),
      auth,
      { id: `traced-${table}-${call}`, order_number: (call % ORDERS) + 1, qty: 2, price: 1.5 },
      201,
    );
  const summary = (t: Trace) => {
    const per = (names: Set<string>) =>
      Object.entries(t.mongo)
        .filter(([n]) => names.has(n))
        .reduce((a, [, c]) => a + c, 0) / t.calls;
    return {
      reads: per(READS),
      writes: per(WRITES),
      detail: `${JSON.stringify(t.mongo)} in ${t.calls} POSTs`,
    };
  };
  try {
    await post("cascadeplain")(TRACED_CALLS);
    await post("lineitem")(TRACED_CALLS);
    const plain = summary(await probe.trace(post("cascadeplain"), TRACED_CALLS));
    const cascade = summary(await probe.trace(post("lineitem"), TRACED_CALLS));
    ctx.check(
      `store commands per cascaded insert ≤ 1 read + 1 write per affected row (${AFFECTED_ROWS} rows)`,
      cascade.reads <= AFFECTED_ROWS && cascade.writes <= AFFECTED_ROWS,
      `cascade: ${cascade.reads} reads + ${cascade.writes} writes per POST (${cascade.detail}); ` +
        `plain: ${plain.reads} reads + ${plain.writes} writes (${plain.detail})`,
    );
  } finally {
    await probe.close();
  }
}

/** POST to the floor server's write routes, rotating over the orders as postRow does. */
function floorPost(base: string, route: "insert" | "cascade") {
  return {
    url: `${base}/floor/${route}`,
    method: "POST" as const,
    next: () => {
      const n = ++written;
      return { body: JSON.stringify({ id: `f${n}`, order_number: n % ORDERS }) };
    },
  };
}

export const rulesCascade: Scenario = {
  id: "rules-cascade",
  title: "POST with a three-level rule cascade vs no rules",
  describe:
    "POST one line item (formula amount = qty * price → order amount_total sum → customer balance sum) " +
    "against the same POST into a table without rules; the store floor of both (their MongoDB commands " +
    "issued directly by the floor server); store commands per POST counted on the wire.",
  async run(ctx) {
    const logic = await logicProjectFor(ctx);
    if (logic.reason !== undefined) return ctx.pending(logic.reason);
    await countStoreCommands(ctx, logic.key);
    const floor = await ctx.floor();
    await ctx.measure([
      {
        name: "floor-plain",
        what: "store floor: the plain POST's one insert, issued directly (floor server)",
        target: floorPost(floor.url, "insert"),
        connections: CONNECTIONS,
      },
      {
        name: "floor-cascade",
        what: "store floor: the cascaded POST's 2 finds, 1 insert and 2 guarded replaces, issued directly",
        target: floorPost(floor.url, "cascade"),
        connections: CONNECTIONS,
        baseline: "floor-plain",
      },
      {
        name: "plain",
        what: "POST one row into a table without rules",
        target: postRow(ctx, logic.key, "cascadeplain"),
        connections: CONNECTIONS,
      },
      {
        name: "cascade",
        what: "POST one line item: formula, order sum, customer sum",
        target: postRow(ctx, logic.key, "lineitem"),
        connections: CONNECTIONS,
        baseline: "plain",
      },
    ]);
  },
};

export const sandboxOverhead: Scenario = {
  id: "sandbox-overhead",
  title: "Sandbox call overhead (one formula rule)",
  describe:
    "POST one row into a table with one formula rule (one sandbox call) against a table without rules.",
  async run(ctx) {
    const logic = await logicProjectFor(ctx);
    if (logic.reason !== undefined) return ctx.pending(logic.reason);
    await ctx.measure([
      {
        name: "plain",
        what: "POST one row into a table without rules",
        target: postRow(ctx, logic.key, "sandboxplain"),
        connections: CONNECTIONS,
      },
      {
        name: "formula",
        what: "POST one row, one formula rule evaluated in the sandbox",
        target: postRow(ctx, logic.key, "formulaitem"),
        connections: CONNECTIONS,
        baseline: "plain",
      },
    ]);
  },
};

export const rulesGrandparent: Scenario = {
  id: "rules-grandparent",
  title: "A formula reading a grand-parent vs one reading a parent",
  describe:
    "POST one row whose formula reads row.order.customer.name (the order and its customer are read) " +
    "against one whose formula reads row.order.customer_name (the order is read).",
  async run(ctx) {
    const logic = await logicProjectFor(ctx);
    if (logic.reason !== undefined) return ctx.pending(logic.reason);
    await ctx.measure([
      {
        name: "parent",
        what: "POST one row, a formula reading its parent",
        target: postRow(ctx, logic.key, "parentitem"),
        connections: CONNECTIONS,
      },
      {
        name: "grandparent",
        what: "POST one row, a formula reading its grand-parent",
        target: postRow(ctx, logic.key, "grandparentitem"),
        connections: CONNECTIONS,
        baseline: "parent",
      },
    ]);
  },
};

const PROVIDER_CODE = `
function benchProviderCreate() {
  return {
    getConfigInfo: function () { return {}; },
    configure: function () {},
    getLoginInfo: function () { return { fields: [{ name: "username" }, { name: "password" }] }; },
    authenticate: function (payload) {
      if (${JSON.stringify(LOGIN_USERS)}.includes(payload.username) && payload.password === ${JSON.stringify(PASSWORD)})
        return { roleNames: ["Full access"], userIdentifier: payload.username, keyLifetimeSeconds: 3600 };
      return { errorMessage: "Login failed" };
    }
  };
}`;

export const customProviderLogin: Scenario = {
  id: "custom-provider-login",
  title: "Login through a custom provider vs the built-in one",
  describe:
    "POST @authentication through the edge to a project whose custom JavaScript provider accepts fixed " +
    "users (sandbox; rotating over 20), against the built-in provider (argon2id).",
  async run(ctx) {
    const { stack, fixtures } = ctx;
    const admin = adminClient(stack.baseUrl, stack.adminToken);
    const definition = {
      authentication: { provider: "custom", library: "bench", createFunction: "benchProviderCreate" },
      tables: { note: { key: ["id"], columns: { id: { type: "integer", generated: true } } } },
      apiVersions: { v1: { resources: {} } },
      roles: { "Full access": { tables: { "*": { access: ["read"] } } } },
      libraries: { bench: { code: PROVIDER_CODE } },
    };
    const put = await admin.putProject(ACCOUNT, CUSTOM_PROJECT, definition);
    if (put.status !== 201 && put.status !== 200)
      return ctx.pending(`the custom-provider project is refused: ${JSON.stringify(put.body)}`);
    const custom = projectClient(stack.baseUrl, ACCOUNT, CUSTOM_PROJECT);
    const attempt = await custom.login({ username: USERNAME, password: PASSWORD });
    if (attempt.status !== 200)
      return ctx.pending(
        `custom provider login answers ${attempt.status}: ${attempt.body?.errorMessage ?? JSON.stringify(attempt.body)}`,
      );
    await ctx.measure([
      {
        name: "builtin",
        what: "login, built-in provider (argon2id)",
        target: {
          url: `${stack.baseUrl}${fixtures.root}/@authentication`,
          method: "POST",
          next: rotatingLogins(),
        },
        connections: CONNECTIONS,
      },
      {
        name: "custom",
        what: "login, custom JavaScript provider in the sandbox",
        target: {
          url: `${stack.baseUrl}${custom.root}/@authentication`,
          method: "POST",
          next: rotatingLogins(),
        },
        connections: CONNECTIONS,
        baseline: "builtin",
      },
    ]);
    // Cold start: the first login after the library changed builds and loads a new isolate.
    const cold: number[] = [];
    const warm: number[] = [];
    let allOk = true;
    for (let i = 0; i < 5; i++) {
      const changed = {
        ...definition,
        libraries: { bench: { code: `${PROVIDER_CODE}\n// revision ${i}\n` } },
      };
      await admin.putProject(ACCOUNT, CUSTOM_PROJECT, changed);
      for (const list of [cold, warm]) {
        const started = performance.now();
        const r = await custom.login({ username: USERNAME, password: PASSWORD });
        list.push(performance.now() - started);
        allOk &&= r.status === 200;
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    ctx.check(
      "cold start after a library change",
      allOk,
      `first login after the change p50 ${median(cold).toFixed(1)} ms (max ${Math.max(...cold).toFixed(1)}), ` +
        `next login p50 ${median(warm).toFixed(1)} ms; ratio ${(median(cold) / median(warm)).toFixed(1)} (5 changes)`,
    );
  },
};
