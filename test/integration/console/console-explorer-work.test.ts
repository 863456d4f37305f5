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
 * axe-core finds no violation (of any impact) in any of these states. Screenshots
 * go to test-output/console/ (`work-<size>-<what>.png`).
 */
import { expect } from "chai";
import type { Locator, Page } from "playwright-core";
import { demoProject } from "../../fixtures/demo-project.ts";
import { type Browser, startBrowser } from "../../support/browser.ts";
import {
  expectGood,
  logInToProject,
  SIZES,
  startExplorerPlatform,
  tabAtSize,
} from "../../support/explorer-page.ts";
import { projectClient } from "../../support/http.ts";
import type { Platform } from "../../support/platform.ts";

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
    const customers = [
      ...SIZES.map((s) => ({ name: `Owner ${s.name}`, credit_limit: 10 })),
      { name: "Multi line", credit_limit: 1, region: "north\nsouth\neast" },
    ];
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

  /** Signs ann in with the administrator's form (its account, acme, already filled in). */
  async function signInWith(form: Locator): Promise<void> {
    expect(await form.getByLabel("Account", { exact: true }).inputValue()).to.equal("acme");
    await form.getByLabel("Login", { exact: true }).fill("ann");
    await form.getByLabel("Password", { exact: true }).fill("ann-secret-1");
    await form.getByLabel("Password", { exact: true }).press("Enter");
  }

  for (const size of SIZES) {
    describe(`at ${size.width}×${size.height}`, () => {
      const tab = tabAtSize(() => browser.newPage(), size, "work", logIn);
      const shot = (name: string) => `work-${size.name}-${name}`;
      const owner = `Owner ${size.name}`;

      const path = `customer/${encodeURIComponent(owner)}`;

      /** Opens the owner's customer row through its address, and waits for its editors. */
      async function openOwnerRow(page: Page): Promise<Locator> {
        await page.evaluate(
          (row) => (location.hash = `#/explorer/acme/work/v1/customer?row=${encodeURIComponent(row)}`),
          path,
        );
        const detail = page.locator("section.detail");
        await detail.getByRole("heading", { name: `Row customer / ${owner}`, exact: true }).waitFor();
        return detail;
      }

      /** Opens a link in a fresh tab and signs ann in where it points (the account filled in from the link). */
      async function signInAsAdminAt(admin: Page, address: string): Promise<void> {
        await admin.setViewportSize(size);
        admin.setDefaultTimeout(15_000);
        await admin.goto(address);
        await admin.getByRole("button", { name: "Sign in as an administrator" }).click();
        await signInWith(admin.getByRole("form", { name: "Account administrator" }));
      }

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
        await detail.getByRole("heading", { name: `Row Customers / ${owner}`, exact: true }).waitFor();
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
        await page.getByRole("gridcell", { name: `${size.name} order 3`, exact: true }).waitFor();
        for (const n of [1, 2, 3]) await page.getByRole("checkbox", { name: `Select row ${n}` }).check();
        await page.getByText("3 selected").waitFor();
        await page.getByRole("button", { name: "Delete selected" }).click();
        const dialog = page.getByRole("dialog");
        expect(await dialog.textContent(), "the confirmation names the rows").to.match(
          /purchaseorder \/ \d+, purchaseorder \/ \d+, purchaseorder \/ \d+\. All of them/,
        );
        await dialog.getByRole("button", { name: "Delete" }).click();
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
        await page.getByRole("gridcell", { name: owner, exact: true }).waitFor();
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

      it("keeps the whole place in the address; tables are links; a link in a fresh tab signs in and lands on the row", async () => {
        const page = tab();
        const link = page.getByRole("navigation", { name: "Tables and resources" }).getByRole("link", {
          name: "customer",
          exact: true,
        });
        expect(await link.getAttribute("href")).to.equal("#/explorer/acme/work/v1/customer");
        await link.click();
        await page.getByRole("gridcell", { name: owner, exact: true }).waitFor();
        await page
          .locator("table.virtual tbody tr", { hasText: owner })
          .getByRole("button", { name: "Open" })
          .click();
        await page.locator("section.detail").getByLabel("name").first().waitFor();
        const address = await page.evaluate(() => location.href);
        expect(new URL(address).hash).to.match(
          /^#\/explorer\/acme\/work\/v1\/customer\?.*row=customer%2FOwner/,
        );

        // A project user, in a tab of its own (nothing of the first tab's session).
        const fresh = await browser.newPage();
        try {
          await fresh.setViewportSize(size);
          fresh.setDefaultTimeout(15_000);
          await fresh.goto(address);
          expect(await fresh.getByLabel("Account", { exact: true }).inputValue()).to.equal("acme");
          expect(await fresh.getByLabel("Project", { exact: true }).inputValue()).to.equal("work");
          expect(await fresh.getByLabel("API version", { exact: true }).inputValue()).to.equal("v1");
          await expectGood(fresh, shot("link-sign-in"));
          await fresh.getByRole("button", { name: "Show the login form" }).click();
          await fresh.getByLabel("User name").fill("alice");
          await fresh.getByLabel("Password", { exact: true }).fill("correct horse");
          await fresh.getByLabel("Password", { exact: true }).press("Enter");
          const detail = fresh.locator("section.detail");
          await detail.waitFor();
          expect(await detail.locator("input").first().inputValue()).to.equal(owner);
          expect(await fresh.evaluate(() => location.href)).to.equal(address);
          await expectGood(fresh, shot("link-landed"));
        } finally {
          await fresh.close();
        }

        // An administrator, signing in where the link points.
        const admin = await browser.newPage();
        try {
          await signInAsAdminAt(admin, address);
          const detail = admin.locator("section.detail");
          await detail.waitFor();
          expect(await detail.locator("input").first().inputValue()).to.equal(owner);
          await admin.getByRole("heading", { name: "Data: acme / work / v1" }).waitFor();
          await expectGood(admin, shot("link-admin"));
        } finally {
          await admin.close();
        }
      });

      it("walks the grid with the keyboard alone: one Tab stop, arrows, Enter opens, Escape returns; rows one line", async () => {
        const page = tab();
        await page.evaluate(() => (location.hash = "#/explorer/acme/work/v1/customer?order=name"));
        await page.getByRole("gridcell", { name: "Multi line", exact: true }).waitFor();
        const heights = await page
          .locator("table.virtual tbody tr:not(.spacer)")
          .evaluateAll((rows) => [...new Set(rows.map((r) => Math.round(r.getBoundingClientRect().height)))]);
        expect(heights, "every row one line high, a three-line value too").to.have.length(1);

        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        const inGrid = () =>
          page.evaluate(() => {
            const el = document.activeElement;
            return el?.tagName === "TD" && el.closest('table[role="grid"]') !== null
              ? { row: el.closest("tr")?.getAttribute("aria-rowindex"), text: el.textContent }
              : undefined;
          });
        let presses = 0;
        let at = await inGrid();
        while (!at && presses < 60) {
          await page.keyboard.press("Tab");
          presses++;
          at = await inGrid();
        }
        console.log(`        (${presses} Tab presses from the top of the page to the first grid row)`);
        expect(at, "the first row's first cell takes the focus").to.deep.equal({ row: "2", text: "" });
        // Was 26: the header's sort buttons and width handles were a stop each.
        expect(presses, "Tab presses to the first row").to.be.at.most(19);
        await page.keyboard.press("ArrowDown");
        await page.keyboard.press("ArrowRight");
        await page.keyboard.press("ArrowRight");
        expect(await inGrid()).to.deep.equal({ row: "3", text: "Owner desktop" });
        await page.keyboard.press("Tab");
        expect(await inGrid(), "Tab leaves the grid (one stop)").to.equal(undefined);
        await page.keyboard.press("Shift+Tab");
        expect(await inGrid()).to.deep.equal({ row: "3", text: "Owner desktop" });
        await expectGood(page, shot("grid-keyboard"));
        await page.keyboard.press("Enter");
        const detail = page.locator("section.detail");
        await detail.getByRole("heading", { name: "Row customer / Owner desktop", exact: true }).waitFor();
        await page.keyboard.press("Escape");
        await detail.waitFor({ state: "detached" });
        await page.waitForFunction(() => document.activeElement?.tagName === "TD");
        expect(await inGrid()).to.deep.equal({ row: "3", text: "Owner desktop" });
        await page.keyboard.press("Home");
        await page.keyboard.press(" ");
        await page.getByText("1 selected").waitFor();
        expect(await page.getByRole("checkbox", { name: "Select row 2", exact: true }).isChecked()).to.equal(
          true,
        );

        // The header's controls are the one stop before the rows: ← → between them, Alt+← narrows a column.
        const focused = () =>
          page.evaluate(() => {
            const el = document.activeElement;
            return `${el?.tagName} ${el?.getAttribute("aria-label") ?? el?.textContent}`;
          });
        await page.keyboard.press("Shift+Tab");
        expect(await focused()).to.equal("INPUT Select the rows shown");
        await page.keyboard.press("ArrowRight");
        const column = await page.evaluate(
          () => document.activeElement?.querySelector("bdi")?.textContent ?? "",
        );
        expect(await page.evaluate(() => document.activeElement?.className)).to.equal("sort");
        const width = page.getByRole("separator", { name: `Width of ${column}` });
        const before = Number(await width.getAttribute("aria-valuenow"));
        await page.keyboard.press("Alt+ArrowLeft");
        expect(Number(await width.getAttribute("aria-valuenow"))).to.equal(before - 20);
        await page.keyboard.press("Shift+Tab");
        expect(
          await page.evaluate(() => document.activeElement?.closest("thead") === null),
          "Shift+Tab leaves the header (one stop)",
        ).to.equal(true);

        // From the top of the page (its first stop, Skip to content): Tab to Skip to the rows, Enter —
        // on the grid's current cell. (A blur would leave Chromium's starting point where the focus was.)
        await page.locator("button.skip").first().focus();
        expect(await focused()).to.equal("BUTTON Skip to content");
        await page.keyboard.press("Tab");
        expect(await focused()).to.equal("BUTTON Skip to the rows");
        await page.keyboard.press("Enter");
        expect(await inGrid()).to.deep.equal({ row: "3", text: "" });
      });

      it("shows which attributes differ after a 409, yours against the stored, and keeps yours per attribute", async () => {
        const page = tab();
        const detail = await openOwnerRow(page);
        await detail.getByLabel("credit_limit", { exact: true }).fill("77");
        await detail.getByRole("checkbox", { name: "null (region)" }).uncheck();
        await detail.getByLabel("region", { exact: true }).fill("west");
        const behind = await data().put(seederKey, path, {
          "@metadata": { checksum: "override" },
          credit_limit: 55,
          region: "east",
        });
        expect(behind.status, JSON.stringify(behind.body)).to.equal(200);

        await detail.getByRole("button", { name: "Save changes" }).click();
        const conflict = detail.getByRole("alert");
        await conflict.getByText("Someone else changed this row").waitFor();
        const diff = conflict.locator("table.conflict-diff tbody tr");
        await diff.first().waitFor();
        const rows = await diff.evaluateAll((trs) =>
          trs.map((tr) => Array.from(tr.querySelectorAll("th, td")).map((c) => c.textContent?.trim())),
        );
        expect(rows).to.deep.equal([
          ["credit_limit", "77", "55", ""],
          ["region", "west", "east", ""],
        ]);
        await expectGood(page, shot("conflict"));
        await conflict.getByRole("checkbox", { name: "Keep your region" }).uncheck();
        await conflict.getByRole("button", { name: "Use these values" }).click();
        await conflict.waitFor({ state: "detached" });
        expect(await detail.getByLabel("credit_limit", { exact: true }).inputValue()).to.equal("77");
        expect(await detail.getByLabel("region", { exact: true }).inputValue()).to.equal("east");
        await detail.getByRole("button", { name: "Save changes" }).click();
        await page.getByRole("region", { name: /Saved: \d+ row\(s\) changed/ }).waitFor();
        const now = (await data().get(seederKey, path)).body[0];
        expect([now.credit_limit, now.region]).to.deep.equal([77, "east"]);
      });

      it("warns before the admin key expires and signs in again in place: the place and typed edits stay", async () => {
        const address = `${base}/console/#/explorer/acme/work/v1/customer?row=${encodeURIComponent(path)}`;
        const admin = await browser.newPage();
        try {
          await signInAsAdminAt(admin, address);
          const detail = admin.locator("section.detail");
          await detail.waitFor();
          expect(await admin.getByText("Your administrator session ends at").count()).to.equal(0);
          // The key's expiration as the tab keeps it, three minutes from now (the server's is later).
          await admin.evaluate(() => {
            const s = JSON.parse(sessionStorage.getItem("tessera.console.admin")!);
            s.expiration = new Date(Date.now() + 3 * 60_000).toISOString();
            sessionStorage.setItem("tessera.console.admin", JSON.stringify(s));
          });
          await admin.reload();
          const warning = admin.locator(".expiry-warning");
          await warning.getByText("Your administrator session ends at").waitFor();
          await detail.getByLabel("credit_limit", { exact: true }).fill("4321");
          await expectGood(admin, shot("expiry-warning"));
          await warning.getByRole("button", { name: "Sign in again" }).click();
          await signInWith(warning.getByRole("form", { name: "Account administrator" }));
          await warning.waitFor({ state: "detached" });
          expect(await detail.getByLabel("credit_limit", { exact: true }).inputValue()).to.equal("4321");
          expect(await admin.evaluate(() => location.href)).to.equal(address);
          await detail.getByRole("button", { name: "Save changes" }).click();
          await admin.getByRole("region", { name: /Saved: \d+ row\(s\) changed/ }).waitFor();
          expect((await data().get(seederKey, path)).body[0].credit_limit).to.equal(4321);
        } finally {
          await admin.close();
        }
      });

      it("keeps a row's edits as a draft across an expired session; saving after signing in again stays conditional", async () => {
        const page = tab();
        const detail = await openOwnerRow(page);
        await detail.getByLabel("credit_limit", { exact: true }).fill("999");
        const behind = await data().put(seederKey, path, {
          "@metadata": { checksum: "override" },
          credit_limit: 11,
        });
        expect(behind.status, JSON.stringify(behind.body)).to.equal(200);
        // The project user's key expires (as the tab keeps it): the session ends at once on reload.
        await page.evaluate(() => {
          const s = JSON.parse(sessionStorage.getItem("tessera.console.data")!);
          s.expiration = new Date(Date.now() - 1000).toISOString();
          sessionStorage.setItem("tessera.console.data", JSON.stringify(s));
        });
        await page.reload();
        await page.getByRole("button", { name: "Show the login form" }).click();
        await page.getByLabel("User name").fill("alice");
        await page.getByLabel("Password", { exact: true }).fill("correct horse");
        await page.getByLabel("Password", { exact: true }).press("Enter");
        await detail.getByRole("heading", { name: `Row customer / ${owner}`, exact: true }).waitFor();
        expect(await detail.getByLabel("credit_limit", { exact: true }).inputValue()).to.equal("999");
        await detail.getByRole("button", { name: "Save changes" }).click();
        const conflict = detail.getByRole("alert");
        await conflict.getByText("Someone else changed this row").waitFor();
        await conflict.locator("table.conflict-diff tbody tr").first().waitFor();
        expect((await data().get(seederKey, path)).body[0].credit_limit, "never overwritten").to.equal(11);
        await conflict.getByRole("button", { name: "Use these values" }).click();
        await detail.getByRole("button", { name: "Save changes" }).click();
        await page.getByRole("region", { name: /Saved: \d+ row\(s\) changed/ }).waitFor();
        expect((await data().get(seederKey, path)).body[0].credit_limit).to.equal(999);
        // A saved row leaves no draft (it is dropped once the save is answered).
        await page.waitForFunction(() => !Object.keys(sessionStorage).some((k) => k.includes("draft:row:")));
      });

      it("says it is loading a far page a link names, and shows no other page's rows under its number", async () => {
        const page = tab();
        const filter = encodeURIComponent(`customer_name = '${owner}'`);
        let requests = 0;
        let release: () => void = () => {};
        const released = new Promise<void>((resolve) => {
          release = resolve;
        });
        // The first page comes at once; the one that loads up to page 120 waits for the test.
        await page.route(/\/rest\/acme\/work\/v1\/purchaseorder\?/, async (route) => {
          requests++;
          if (requests > 1) await released;
          await route.continue();
        });
        try {
          await page.evaluate(
            (f) => (location.hash = `#/explorer/acme/work/v1/purchaseorder?filter=${f}&pagesize=1&page=120`),
            filter,
          );
          await page.getByRole("status").getByText("Loading page 120…").waitFor();
          await page.locator("table.virtual").waitFor({ state: "attached" });
          expect(
            await page.getByRole("gridcell", { name: `${size.name} order 4`, exact: true }).isVisible(),
          ).to.equal(false);
          await expectGood(page, shot("far-page-loading"));
          release();
          // Orders 1–3 were deleted above: the 120th left is order 123.
          await page.getByRole("gridcell", { name: `${size.name} order 123`, exact: true }).waitFor();
          await page.getByRole("status").getByText("Loading page 120…").waitFor({ state: "detached" });
          // Page 120 is the one shown: its row at the top of the box, under the page's own label.
          await page.waitForFunction(() => document.querySelector(".grid-box")?.scrollTop === 119 * 36);
          await page.evaluate(
            () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
          );
          const top = await page.evaluate(() => {
            const box = document.querySelector(".grid-box")!.getBoundingClientRect();
            const row = Array.from(document.querySelectorAll(".grid-box tbody tr:not(.spacer)")).find(
              (r) => r.getBoundingClientRect().bottom > box.top + 36 + 1,
            );
            return row?.textContent ?? "";
          });
          expect(top, "the first row in view").to.include(`${size.name} order 123`);
          const pager = page.getByRole("navigation", { name: "Row pages" }).getByRole("status");
          expect(await pager.textContent()).to.match(/^Page 120( of \d+)?$/);
          expect(
            await page.evaluate(() => new URLSearchParams(location.hash.split("?")[1]).get("page")),
          ).to.equal("120");
        } finally {
          release();
          await page.unroute(/\/rest\/acme\/work\/v1\/purchaseorder\?/);
        }
      });

      it("shows rows on the first screen", async () => {
        const page = tab();
        await page.evaluate(() => (location.hash = "#/explorer/acme/work/v1/purchaseorder"));
        await page.getByRole("heading", { name: "Table purchaseorder" }).waitFor();
        await page.locator("table.virtual tbody tr:not(.spacer)").nth(20).waitFor();
        await page.evaluate(() => window.scrollTo(0, 0));
        const rows = await page
          .locator("table.virtual tbody tr:not(.spacer)")
          .evaluateAll(
            (trs) => trs.filter((tr) => tr.getBoundingClientRect().bottom <= window.innerHeight).length,
          );
        // Not one or two at the very bottom (as before, under the table list and a query of four lines).
        expect(rows, "data rows wholly on the first screen").to.be.at.least(5);
        await expectGood(page, shot("first-screen"));
      });

      it("puts only a filter the server accepts into the address and the history", async () => {
        const page = tab();
        await page.evaluate(() => (location.hash = "#/explorer/acme/work/v1/customer"));
        await page.getByRole("gridcell", { name: owner, exact: true }).waitFor();
        const filter = page.getByLabel("Filter");
        await filter.fill(`name = '${owner}'`);
        await filter.press("Enter");
        await page.waitForFunction(() => location.hash.includes("filter="));
        const accepted = await page.evaluate(() => location.hash);

        await filter.fill("credit_limit = ");
        await filter.press("Enter");
        await page.locator("#query-filter-error").getByText("Invalid filter").waitFor();
        expect(await page.evaluate(() => location.hash), "the address keeps the accepted filter").to.equal(
          accepted,
        );
        expect(await filter.inputValue(), "what was typed stays at the input").to.equal("credit_limit = ");
        await expectGood(page, shot("filter-refused"));

        // Back leaves the accepted filter (the refused one was never an entry of its own).
        await page.goBack();
        await page.waitForFunction(() => !location.hash.includes("filter="));
        await page.waitForFunction(
          () => (document.querySelector("#query-filter") as HTMLInputElement | null)?.value === "",
        );
        await page.getByRole("gridcell", { name: "Multi line", exact: true }).waitFor();
      });

      it("clears a write's summary and an import's result once the user moves to another row or table", async () => {
        const page = tab();
        const detail = await openOwnerRow(page);
        await detail.getByLabel("credit_limit", { exact: true }).fill("12");
        await detail.getByRole("button", { name: "Save changes" }).click();
        const saved = page.getByRole("region", { name: /Saved: 1 row\(s\) changed/ });
        await saved.waitFor();
        // Another row: the summary described the one left.
        await page.evaluate(
          () =>
            (location.hash = `#/explorer/acme/work/v1/customer?row=${encodeURIComponent("customer/Multi line")}`),
        );
        await detail.getByRole("heading", { name: "Row customer / Multi line", exact: true }).waitFor();
        expect(await saved.count(), "the summary of the row left").to.equal(0);

        // Back to the owner, saved again; then another table.
        await openOwnerRow(page);
        await detail.getByLabel("credit_limit", { exact: true }).fill("10");
        await detail.getByRole("button", { name: "Save changes" }).click();
        await saved.waitFor();
        await page.evaluate(() => (location.hash = "#/explorer/acme/work/v1/purchaseorder"));
        await page.getByRole("heading", { name: "Table purchaseorder" }).waitFor();
        expect(await saved.count(), "the summary of the table left").to.equal(0);

        // An import's result, then a row opened.
        await page.evaluate(() => (location.hash = "#/explorer/acme/work/v1/customer"));
        await page.getByRole("gridcell", { name: owner, exact: true }).waitFor();
        await page.getByLabel("Import CSV…").setInputFiles({
          name: "one.csv",
          mimeType: "text/csv",
          buffer: Buffer.from(`name,credit_limit\r\n${size.name} lingering,1`),
        });
        await page
          .getByRole("region", { name: "Import preview" })
          .getByRole("button", { name: "Import 1 rows" })
          .click();
        const imported = page.getByRole("region", { name: "Import", exact: true });
        await imported.getByText("one.csv: 1 of 1 rows inserted.").waitFor();
        await page
          .locator("table.virtual tbody tr", { hasText: owner })
          .getByRole("button", { name: "Open" })
          .click();
        await detail.getByRole("heading", { name: `Row customer / ${owner}`, exact: true }).waitFor();
        expect(await imported.count(), "the import's result once a row is opened").to.equal(0);
        await expectGood(page, shot("moved-on"));
      });
    });
  }
});
