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

      it("previews a CSV file before sending anything, then imports it in batches and names each refused line", async () => {
        const page = tab();
        await page.evaluate(() => (location.hash = "#/explorer/customer"));
        await page.getByRole("cell", { name: owner, exact: true }).waitFor();
        const lines = ["name,credit_limit,region"];
        for (let i = 1; i <= 600; i++) lines.push(`${size.name} csv ${i},${i},west`);
        lines.splice(3, 0, `${size.name} bad,lots,west`); // line 4: not a number
        lines.push(`${owner},5,east`); // line 603: the key is taken
        const posts: unknown[][] = [];
        page.on("request", (r) => {
          if (r.method() === "POST" && new URL(r.url()).pathname.endsWith("/customer"))
            posts.push(r.postDataJSON());
        });
        await page.getByLabel("Import CSV…").setInputFiles({
          name: "people.csv",
          mimeType: "text/csv",
          buffer: Buffer.from(lines.join("\r\n")),
        });
        const preview = page.getByRole("region", { name: "Import preview" });
        await preview.getByText("people.csv: 602 rows; 601 can be imported, 1 are refused.").waitFor();
        expect(await preview.textContent()).to.include(
          "Columns: name (string), credit_limit (number), region (string)",
        );
        expect(await preview.locator("li").allTextContents()).to.deep.equal([
          "Line 4: credit_limit is not a number",
        ]);
        expect(posts, "nothing is sent before the import is confirmed").to.deep.equal([]);
        await expectGood(page, shot("csv-preview"));

        await preview.getByRole("button", { name: "Import 601 rows" }).click();
        const outcome = page.getByRole("region", { name: "Import", exact: true });
        await outcome.getByText("people.csv: 600 of 602 rows inserted; 2 refused:").waitFor();
        const errors = await outcome.locator("li").allTextContents();
        expect(errors[0]).to.equal("Line 4: credit_limit is not a number");
        expect(errors[1]).to.match(/^Line 603: 4\d\d\/\d+ /);
        expect(errors).to.have.length(2);
        for (const body of posts) expect(body, "every request sends an array of rows").to.be.an("array");
        expect(posts.slice(0, 2).map((b) => b.length)).to.deep.equal([250, 250]);
        expect(
          posts.length,
          "three batches, and halves of the third until the refused row is alone",
        ).to.be.at.most(3 + 2 * Math.ceil(Math.log2(101)));
        const found = await data().get(
          seederKey,
          `customer?pagesize=1000&filter=${encodeURIComponent(`name like '${size.name} csv %'`)}`,
        );
        expect(found.body).to.have.length(600);
        await expectGood(page, shot("csv-result"));
      });
    });
  }
});
