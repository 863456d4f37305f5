/**
 * Loads the canonical reactive-logic example (project.json next to this file)
 * into a running Tessera through the admin API, creates a user, logs in, and
 * adds a few customers, products and an order. See docs/rules.md.
 *
 *   node examples/canonical/load.ts [--base-url URL] [--account NAME] [--project NAME]
 *        [--user NAME] [--password TEXT] [--token ADMIN_TOKEN] [--no-seed]
 *
 * Defaults: http://127.0.0.1:8080 (PORT), account `demo`, project `canonical`,
 * user `clerk` / `clerk-password`; the admin token from --token, $ADMIN_TOKEN or
 * .data/admin-token (written by `make run`). Running it again updates the
 * project definition and leaves existing rows alone.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";

const here = import.meta.dirname;
const root = path.resolve(here, "../..");

const { values: args } = parseArgs({
  options: {
    "base-url": { type: "string", default: `http://127.0.0.1:${process.env.PORT ?? "8080"}` },
    account: { type: "string", default: "demo" },
    project: { type: "string", default: "canonical" },
    user: { type: "string", default: "clerk" },
    password: { type: "string", default: "clerk-password" },
    token: { type: "string" },
    "no-seed": { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});

if (args.help) {
  console.log(readFileSync(new URL(import.meta.url), "utf8").split("*/")[0]);
  process.exit(0);
}

function adminToken(): string {
  if (args.token) return args.token;
  if (process.env.ADMIN_TOKEN) return process.env.ADMIN_TOKEN.split(",")[0]!.trim();
  const file = path.join(process.env.DATA_DIR ?? path.join(root, ".data"), "admin-token");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  throw new Error(
    "No admin token: pass --token, set ADMIN_TOKEN, or start `make run` (it writes .data/admin-token)",
  );
}

const base = args["base-url"].replace(/\/+$/, "");
const account = args.account;
const project = args.project;

async function call(method: string, url: string, body: unknown, headers: Record<string, string>) {
  const response = await fetch(`${base}${url}`, {
    method,
    headers: { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!response.ok) {
    throw new Error(`${method} ${url} → ${response.status}: ${json?.errorMessage ?? text}`);
  }
  return { status: response.status, body: json };
}

async function main(): Promise<void> {
  const admin = { authorization: `Bearer ${adminToken()}` };
  const definition = JSON.parse(readFileSync(path.join(here, "project.json"), "utf8"));
  await call("PUT", `/admin/v1/accounts/${account}`, { displayName: account }, admin);
  const put = await call("PUT", `/admin/v1/accounts/${account}/projects/${project}`, definition, admin);
  console.log(
    `project ${account}/${project}: revision ${put.body.revision} (${put.status === 201 ? "created" : "updated"})`,
  );
  await call(
    "PUT",
    `/admin/v1/accounts/${account}/projects/${project}/users/${args.user}`,
    { password: args.password, roles: ["Full access"] },
    admin,
  );
  const root = `/rest/${account}/${project}/v1`;
  const login = await call(
    "POST",
    `${root}/@authentication`,
    { username: args.user, password: args.password },
    {},
  );
  const auth = { authorization: `Tessera ${login.body.apikey}:1` };

  if (!args["no-seed"]) {
    const merge = (key: string) => ({ action: "MERGE_INSERT", key });
    await call(
      "POST",
      `${root}/customer`,
      [
        { "@metadata": merge("name"), name: "Alpha and Sons", credit_limit: 1000 },
        { "@metadata": merge("name"), name: "Beta Ltd", credit_limit: 250 },
      ],
      auth,
    );
    const products = await call(
      "POST",
      `${root}/product`,
      [
        { "@metadata": merge("name"), name: "Widget", price: 10 },
        { "@metadata": merge("name"), name: "Gadget", price: 25.5 },
      ],
      auth,
    );
    if (put.status === 201) {
      const [widget, gadget] = products.body.txsummary.map(
        (p: { product_number: number }) => p.product_number,
      );
      const order = await call(
        "POST",
        `${root}/purchaseorder`,
        {
          customer_name: "Alpha and Sons",
          lineitems: [
            { product_number: widget, qty_ordered: 3 },
            { product_number: gadget, qty_ordered: 2 },
          ],
        },
        auth,
      );
      const o = order.body.txsummary[0];
      console.log(
        `order ${o.order_number}: amount_total ${o.amount_total} (rules computed it from its line items)`,
      );
    }
  }
  console.log(`\nuser ${args.user} / ${args.password}; an API key for this session:\n  ${login.body.apikey}`);
  console.log(`\nTry:\n  curl -s ${base}${root}/customer -H 'Authorization: Tessera ${login.body.apikey}:1'`);
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
