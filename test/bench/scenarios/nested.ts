/**
 * A page of customers with their orders nested (the `Customers` resource,
 * pagesize 20) against the same page without them: the cost of the nested
 * level, once where every customer has a few orders (one query for the level)
 * and once where the first customer has more orders than a page (the others
 * are queried again).
 */
import { authHeaders, CUSTOMERS, customerName, postInBatches } from "../lib/fixtures.ts";
import type { Scenario } from "../lib/types.ts";

/** Few connections: the latency of one page, not queueing behind the store. */
const CONNECTIONS = 2;
const PAGESIZE = 20;
const ORDERS_EACH = 3;
/** Orders of the first customer: more than a page. */
const ORDERS_FIRST = 100;

type Wire = { Orders?: Wire[]; "@metadata"?: { next_batch?: string } };

export const nested: Scenario = {
  id: "nested",
  title: `A page of ${PAGESIZE} customers with their orders nested vs without`,
  describe:
    `GET Customers?pagesize=${PAGESIZE} (orders nested) vs GET customer?pagesize=${PAGESIZE}, p50: customers with ` +
    `${ORDERS_EACH} orders each, and the first page where one customer has ${ORDERS_FIRST}.`,
  async run(ctx) {
    const { stack, fixtures } = ctx;
    await ctx.once("orders", async () => {
      const orders = [];
      for (let i = 0; i < CUSTOMERS; i++) {
        const count = ORDERS_EACH + (i === 0 ? ORDERS_FIRST : 0);
        for (let n = 0; n < count; n++) orders.push({ customer_name: customerName(i), amount_total: n });
      }
      await postInBatches(stack, fixtures.key, "purchaseorder", orders);
    });
    const headers = authHeaders(fixtures);
    const root = `${stack.dataUrl}${fixtures.root}`;
    const few = `${root}/Customers?pagesize=${PAGESIZE}&filter=${encodeURIComponent(`Name <> '${customerName(0)}'`)}`;
    const crowded = `${root}/Customers?pagesize=${PAGESIZE}`;
    const page = async (url: string) => (await (await fetch(url, { headers })).json()) as Wire[];
    const ordersShown = (customers: Wire[]) =>
      customers.slice(0, PAGESIZE).map((c) => c.Orders?.filter((o) => !o["@metadata"]?.next_batch).length);
    ctx.check(
      `every customer of a page shows its ${ORDERS_EACH} orders`,
      ordersShown(await page(few)).every((n) => n === ORDERS_EACH),
      few,
    );
    const first = await page(crowded);
    ctx.check(
      `after a customer with ${ORDERS_FIRST + ORDERS_EACH} orders (${PAGESIZE} shown and a next_batch), the others show theirs`,
      JSON.stringify(ordersShown(first)) ===
        JSON.stringify([PAGESIZE, ...Array(PAGESIZE - 1).fill(ORDERS_EACH)]) &&
        first[0]?.Orders?.at(-1)?.["@metadata"]?.next_batch !== undefined,
      JSON.stringify(ordersShown(first)),
    );
    await ctx.measure([
      {
        name: "flat",
        what: `GET customer?pagesize=${PAGESIZE}`,
        target: { url: `${root}/customer?pagesize=${PAGESIZE}`, headers },
        connections: CONNECTIONS,
      },
      {
        name: "nested",
        what: `GET Customers?pagesize=${PAGESIZE} (${ORDERS_EACH} orders each)`,
        target: { url: few, headers },
        connections: CONNECTIONS,
        baseline: "flat",
        compare: "p50",
      },
      {
        name: "nested-crowded",
        what: `GET Customers?pagesize=${PAGESIZE} (the first customer has ${ORDERS_FIRST + ORDERS_EACH} orders)`,
        target: { url: crowded, headers },
        connections: CONNECTIONS,
        baseline: "flat",
        compare: "p50",
      },
    ]);
  },
};
