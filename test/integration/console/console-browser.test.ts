/// <reference lib="dom" />
// The functions given to page.evaluate run in the browser: they see its window and document.
/**
 * The console in a real headless Chromium against the real platform (data, auth
 * and the console's own server behind the edge, on real stores): an account
 * administrator signs in, creates a project through a dry run, makes a user and a
 * key, explores data as that user (filter, paging, a forced checksum conflict,
 * inserts and deletes with rule side effects), meets a definition conflict, rolls
 * back and reads the audit trail; a reader sees everything and can change nothing.
 * Hostile names, values and error messages stay text; the policy blocks inline
 * script; no key ever appears in a URL or localStorage. Each main screen is saved
 * under test-output/console/.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import type { Page } from "playwright-core";
import { verifyWebhook } from "../../../services/data/src/hooks/signature.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { afterFailure, type Browser, screenshot, signIn, startBrowser } from "../../support/browser.ts";
import {
  editorSelection,
  editorText,
  replaceEditorText,
  untilEditorText,
} from "../../support/code-editor.ts";
import { adminClient, call, keyHeader, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { until } from "../../support/until.ts";
import { startReceiver } from "../../support/webhook-receiver.ts";

const XSS_VALUE = "<img src=x onerror=window.__xss=1>";
const XSS_ROLE = "<img src=x onerror=window.__xss=2>";
const XSS_KEY_NAME = "<img src=x onerror=window.__xss=3> nightly";
const XSS_RULE_MESSAGE = "<img src=x onerror=window.__xss=4> too much: {balance}";
const XSS_JSON_KEY = "<b onmouseover=window.__xss=5>key</b>";
const XSS_PROMPT = "<img src=x onerror=window.__xss=6> secret";
const XSS_ATTRIBUTE = "<img src=x onerror=window.__xss=7>";

/** The demo project, with a json column, a role with a hostile name and two rules (a sum and a validation). */
const demo = demoProject();
const SHOP = demoProject({
  tables: {
    ...demo.tables,
    customer: {
      ...demo.tables.customer,
      columns: { ...demo.tables.customer.columns, notes: { type: "json" } },
    },
  },
  roles: {
    "Full access": demo.roles["Full access"],
    [XSS_ROLE]: { tables: { customer: { access: ["read"] } } },
  },
  rules: [
    { table: "customer", type: "sum", column: "balance", children: "orders", of: "amount_total" },
    {
      table: "customer",
      type: "validation",
      expression: "row.balance <= row.credit_limit",
      message: XSS_RULE_MESSAGE,
    },
  ],
});

const secretWordCode = readFileSync(
  path.resolve(import.meta.dirname, "../../../examples/providers/secret-word/secret-word.js"),
  "utf8",
);

/** Nothing hostile ran: every payload above would set window.__xss. */
async function expectNoScriptRan(page: Page): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss)).to.equal(undefined);
}

const nav = (page: Page, name: string) =>
  page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name, exact: true });

describe("console in Chromium", function () {
  this.timeout(60_000);
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  let operator: ReturnType<typeof adminClient>;
  const requestedUrls: string[] = [];
  const issuedKeys: string[] = [];

  before(async function () {
    this.timeout(120_000);
    // Loopback egress and a short retry window: the webhooks screen's receiver is on this machine.
    platform = await startPlatform(
      {
        SANDBOX_ALLOW_LOOPBACK_FETCH: "true",
        WEBHOOK_POLL_MS: "20",
        WEBHOOK_BACKOFF_BASE_MS: "100",
        WEBHOOK_BACKOFF_CAP_MS: "200",
        WEBHOOK_RETRY_WINDOW_SECONDS: "1",
        // One attempt without an answer within half a second backs a subscription off (its circuit).
        WEBHOOK_TIMEOUT_MS: "500",
        WEBHOOK_CIRCUIT_TIMEOUTS: "1",
        WEBHOOK_CIRCUIT_OPEN_MS: "600000",
      },
      { console: true },
    );
    operator = adminClient(platform.baseUrl, platform.adminToken);
    await operator.send("PUT", "/accounts/acme", { displayName: "Acme" });
    await putAdmin(operator, "acme", "ann", "admin", "ann-secret-1");
    await putAdmin(operator, "acme", "rita", "reader", "rita-secret-1");
    browser = await startBrowser();
    browser.context.on("request", (r) => requestedUrls.push(r.url()));
    await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: platform.baseUrl,
    });
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
  });

  afterEach(async function () {
    // The screen as it was when a step failed, to see why.
    if (this.currentTest?.state === "failed")
      await afterFailure(page, `failed-${this.currentTest.title.slice(0, 40)}`);
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  describe("administration", () => {
    it("signs an administrator in (a failed attempt is shown, focused), keeping the key in sessionStorage only", async () => {
      await page.goto(`${platform.baseUrl}/console/`);
      await page.getByLabel("Account", { exact: true }).fill("acme");
      await page.getByLabel("Login", { exact: true }).fill("ann");
      await page.getByLabel("Password", { exact: true }).fill("wrong password");
      await screenshot(page, "01-sign-in");
      await page.getByLabel("Password", { exact: true }).press("Enter");
      const alert = page.getByRole("alert");
      await alert.getByText("Sign-in failed").waitFor();
      expect(await alert.evaluate((el) => el === document.activeElement)).to.equal(true);

      await page.getByLabel("Password", { exact: true }).fill("ann-secret-1");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "Projects" }).waitFor();
      await page.getByText("No projects yet.").waitFor();
      const stored = await page.evaluate(() => ({
        session: JSON.parse(sessionStorage.getItem("tessera.console.admin") ?? "null"),
        local: localStorage.length,
      }));
      expect(stored.session).to.include({ account: "acme", login: "ann", role: "admin" });
      expect(stored.session.apikey).to.match(/^tsk_/);
      expect(stored.local).to.equal(0);
      issuedKeys.push(stored.session.apikey);
    });

    it("creates a project: problems shown at their paths, a dry-run diff, then Apply", async () => {
      await page.getByRole("link", { name: "New project" }).click();
      await page.getByLabel("Project name").fill("shop");
      const apply = page.getByRole("button", { name: /^Apply/ });
      const broken = {
        ...SHOP,
        tables: { ...SHOP.tables, customer: { ...SHOP.tables.customer, key: ["nope"] } },
      };
      await replaceEditorText(page.getByLabel("Definition (JSON)"), JSON.stringify(broken, null, 2));
      await page.getByRole("button", { name: "Check changes (dry run)" }).click();
      const problem = page.getByRole("list", { name: "Problems" }).getByRole("button", {
        name: /\$\.tables\.customer\.key\[0\]/,
      });
      await problem.waitFor();
      await problem.click();
      expect(await editorSelection(page.getByLabel("Definition (JSON)"))).to.equal('"nope"');
      expect(await apply.isDisabled()).to.equal(true);

      await replaceEditorText(page.getByLabel("Definition (JSON)"), JSON.stringify(SHOP, null, 2));
      expect(await apply.isDisabled(), "Apply waits for a dry run").to.equal(true);
      await page.getByRole("button", { name: "Check changes (dry run)" }).click();
      const diff = page.getByRole("region", { name: "What would change" });
      await diff.getByText("Summary:").waitFor();
      const added = diff.locator("li.diff-added");
      await added.filter({ hasText: /customer$/ }).waitFor();
      expect(await added.allTextContents()).to.include(`+added ${XSS_ROLE}`);
      await screenshot(page, "02-dry-run-diff");
      expect(await page.evaluate(() => document.activeElement?.className)).to.equal("dry-run");
      const before = await operator.send("GET", "/accounts/acme/projects");
      expect(before.body).to.deep.equal([]);

      await apply.click();
      await page.getByRole("heading", { name: /shop · revision 1/ }).waitFor();
      const stored = await operator.send("GET", "/accounts/acme/projects/shop");
      expect(stored.body.revision).to.equal(1);
      expect(stored.body.definition.rules).to.have.length(2);
      await expectNoScriptRan(page);
    });

    it("creates a user and a manual key whose value is shown once, with a copy button", async () => {
      await page.getByRole("link", { name: "Users" }).click();
      await page.getByLabel("Username").fill("alice");
      await page.getByLabel("Password").fill("correct horse");
      await page.getByRole("checkbox", { name: "Full access" }).check();
      await page.getByRole("button", { name: "Save user" }).click();
      await page.getByRole("status").getByText("User alice created.").waitFor();
      await page.getByRole("cell", { name: "alice", exact: true }).waitFor();

      await page.getByRole("link", { name: "API keys" }).click();
      // The click returns before the screen changes: "Name" alone would also find the Users
      // screen's "Username", still shown.
      await page.getByRole("heading", { name: "New manual key" }).waitFor();
      await page.getByLabel("Name", { exact: true }).fill(XSS_KEY_NAME);
      await page.getByRole("checkbox", { name: "Full access" }).check();
      await page.getByRole("checkbox", { name: XSS_ROLE }).check();
      await page.getByRole("button", { name: "Create key" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByText("This is the only time the key is shown").waitFor();
      const value = await dialog.getByLabel("API key").inputValue();
      expect(value).to.match(/^tsk_/);
      issuedKeys.push(value);
      await dialog.getByRole("button", { name: "Copy" }).click();
      await dialog.getByText("Copied to the clipboard.").waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).to.equal(value);
      await screenshot(page, "03-key-created");
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      expect(await page.content()).to.not.include(value);
      await page.getByRole("cell", { name: XSS_KEY_NAME, exact: true }).waitFor();
      await screenshot(page, "04-api-keys");

      const data = projectClient(platform.baseUrl, "acme", "shop");
      expect((await data.get(value, "customer")).status).to.equal(200);
      await expectNoScriptRan(page);
    });
  });

  describe("webhooks", () => {
    it("creates a webhook whose secret is shown once; its dead letter is listed and replayed", async () => {
      const receiver = await startReceiver();
      try {
        receiver.answer(500);
        await page.getByRole("link", { name: "Webhooks" }).click();
        await page.getByText("No webhooks.").waitFor();
        await page.getByLabel("URL").fill(receiver.url);
        await page.getByRole("checkbox", { name: "customer" }).check();
        await page.getByRole("checkbox", { name: "DELETE" }).uncheck();
        await page.getByLabel("Filter").fill("balance >= 0");
        await page.getByRole("button", { name: "Create webhook" }).click();
        const dialog = page.getByRole("dialog");
        await dialog.getByText("This is the only time the signing secret is shown").waitFor();
        const secret = await dialog.getByLabel("Signing secret").inputValue();
        expect(secret).to.match(/^whsec_/);
        receiver.setSecret(secret);
        await dialog.getByRole("button", { name: "Done" }).click();
        await dialog.waitFor({ state: "detached" });
        expect(await page.content()).to.not.include(secret);
        await page.getByRole("cell", { name: receiver.url, exact: true }).waitFor();

        const data = projectClient(platform.baseUrl, "acme", "shop");
        expect(
          (await data.post(issuedKeys[1], "customer", { name: "Hooked", credit_limit: 5 })).status,
        ).to.equal(201);
        const [hook] = (await operator.send("GET", "/accounts/acme/projects/shop/webhooks")).body;
        await until("a dead letter", async () => {
          const one = await operator.send("GET", `/accounts/acme/projects/shop/webhooks/${hook.id}`);
          return one.body.deadLetters === 1;
        });
        await page.getByRole("button", { name: `Log and dead letters of ${receiver.url}` }).click();
        await page.getByRole("cell", { name: "row.inserted", exact: true }).waitFor();
        await page.getByRole("cell", { name: "dead", exact: true }).waitFor();
        await screenshot(page, "05-webhooks");
        receiver.answer(200);
        await page.getByRole("button", { name: "Replay all" }).click();
        await page.getByRole("status").getByText("1 dead letter(s) sent again.").waitFor();
        await until("the replayed delivery", async () => receiver.delivered().size === 1);
        expect(receiver.received.at(-1)!.signed).to.equal(true);
        expect(receiver.received.at(-1)!.body.data.row.name).to.equal("Hooked");
        await page.getByText("No dead letters.").waitFor();

        // The receiver moved: the webhook is changed to its new URL, then given a new secret.
        const moved = await startReceiver();
        try {
          moved.setSecret(secret);
          await page.getByRole("button", { name: `Change ${receiver.url}` }).click();
          await page.getByRole("heading", { name: `Change the webhook to ${receiver.url}` }).waitFor();
          expect(await page.getByLabel("Filter").inputValue()).to.equal("balance >= 0");
          await page.getByLabel("URL").fill(moved.url);
          await page.getByRole("button", { name: "Save changes" }).click();
          await page.getByRole("status").getByText(`Webhook to ${moved.url} changed.`).waitFor();
          await page.getByRole("cell", { name: moved.url, exact: true }).waitFor();
          await page.getByRole("button", { name: `New secret for ${moved.url}` }).click();
          await page.getByRole("button", { name: "New secret, keep the current one for a day" }).click();
          const rotated = page.getByRole("dialog");
          await rotated.getByRole("heading", { name: "Secret rotated" }).waitFor();
          const second = await rotated.getByLabel("Signing secret").inputValue();
          expect(second)
            .to.match(/^whsec_/)
            .and.not.equal(secret);
          await rotated.getByRole("button", { name: "Done" }).click();
          await page.getByText("The previous secret signs too, until").waitFor();
          await screenshot(page, "05-webhook-secret-rotated");
          expect(await page.content()).to.not.include(second);
          // Receivers holding either secret accept what follows (within a second of the change: until
          // then, a delivery may still go to the old URL, with one signature).
          let sent = 0;
          await until("a delivery to the new URL signed with both secrets", async () => {
            sent++;
            const r = await data.post(issuedKeys[1], "customer", { name: `Moved ${sent}`, credit_limit: 5 });
            expect(r.status).to.equal(201);
            return moved.received.some((d) => d.signature.split(" ").length === 2);
          });
          const both = moved.received.find((d) => d.signature.split(" ").length === 2)!;
          for (const key of [secret, second])
            expect(
              verifyWebhook(key, both.id, both.timestamp, JSON.stringify(both.body), both.signature),
            ).to.equal(true);
        } finally {
          await moved.close();
        }
      } finally {
        await receiver.close();
      }
    });
  });

  describe("webhooks: a receiver that hangs", () => {
    it("shows a subscription its receiver's time-outs backed off, and until when", async () => {
      const hanging = await startReceiver();
      const hooks = "/accounts/acme/projects/shop/webhooks";
      try {
        hanging.answer("hold");
        const created = await operator.send("POST", hooks, { url: hanging.url, tables: ["customer"] });
        expect(created.status, JSON.stringify(created.body)).to.equal(201);
        const data = projectClient(platform.baseUrl, "acme", "shop");
        expect((await data.post(issuedKeys[1], "customer", { name: "Unanswered" })).status).to.equal(201);
        await until("the circuit opens", async () => {
          const one = await operator.send("GET", `${hooks}/${created.body.id}`);
          return one.body.circuit.state === "open";
        });
        await page.reload();
        // In the subscription's own cell, below its URL.
        const cell = page.getByRole("cell", { name: /Backed off after 1 attempt in a row/ });
        await cell.waitFor();
        const text = await cell.textContent();
        expect(text, text ?? "")
          .to.include(hanging.url)
          .and.include("until one probe at");
        await screenshot(page, "05-webhook-backed-off");
        expect((await operator.send("DELETE", `${hooks}/${created.body.id}`)).status).to.equal(200);
      } finally {
        hanging.release();
        await hanging.close();
      }
    });
  });

  describe("data explorer", () => {
    const data = () => projectClient(platform.baseUrl, "acme", "shop");
    let managerKey: string;

    before(async () => {
      const key = await operator.createKey("acme", "shop", { name: "seeder", roles: ["Full access"] });
      managerKey = key.body.apikey;
      const seeded = await data().post(managerKey, "customer", [
        ...["A1", "A2", "A3", "A4", "A5"].map((name) => ({ name, credit_limit: 1000 })),
        { name: XSS_VALUE, notes: { [XSS_JSON_KEY]: "<script>window.__xss=8</script>" } },
      ]);
      expect(seeded.status, JSON.stringify(seeded.body)).to.equal(201);
    });

    it("logs in as a project user through the project's login form", async () => {
      await nav(page, "Data explorer").click();
      await page.getByRole("combobox", { name: "Project" }).selectOption("shop");
      await page.getByRole("button", { name: "Show the login form" }).click();
      await page.getByLabel("User name").fill("alice");
      await page.getByLabel("Password", { exact: true }).fill("correct horse");
      await screenshot(page, "05-explorer-login");
      await page.getByLabel("Password", { exact: true }).press("Enter");
      await page.getByRole("heading", { name: "Data: acme / shop / v1" }).waitFor();
      const dataKey = await page.evaluate(
        () => JSON.parse(sessionStorage.getItem("tessera.console.data") ?? "{}").apikey,
      );
      expect(dataKey).to.match(/^tsk_/);
      issuedKeys.push(dataKey);
    });

    it("shows rows with hostile values as text, filters (errors at their position) and pages", async () => {
      await page.getByRole("link", { name: "customer", exact: true }).click();
      // Too long for its column: cut, with a button that shows all of it.
      await page.locator("table.data td .cell").getByText(XSS_VALUE, { exact: true }).waitFor();
      await page.getByText(XSS_JSON_KEY, { exact: false }).first().waitFor();
      await expectNoScriptRan(page);
      await screenshot(page, "06-data-explorer");

      await page.getByLabel("Filter").fill("credit_limit = ");
      await page.getByLabel("Filter").press("Enter");
      const error = page.locator("#query-filter-error");
      await error.getByText("Invalid filter at position 16").waitFor();
      expect(await page.evaluate(() => document.activeElement?.id)).to.equal("query-filter");
      expect(await page.getByLabel("Filter").getAttribute("aria-invalid")).to.equal("true");
      await screenshot(page, "07-filter-error");

      await page.getByLabel("Filter").fill(`"${XSS_ATTRIBUTE}" = 1`);
      await page.getByRole("button", { name: "Apply" }).click();
      await error.getByText(`unknown attribute '${XSS_ATTRIBUTE.slice(0, 28)}`, { exact: false }).waitFor();
      await expectNoScriptRan(page);

      await page.getByLabel("Filter").fill("name like 'A%'");
      await page.getByLabel("Order").fill("name desc");
      await page.getByLabel("Rows per page").fill("2");
      await page.getByRole("button", { name: "Apply" }).click();
      // Pages load as far as the grid has room; the pager scrolls from page to page.
      const names = () => page.locator("table.data tbody tr:not(.spacer) td:nth-child(3)").allTextContents();
      await page.getByRole("gridcell", { name: "A1", exact: true }).waitFor();
      expect(await names()).to.deep.equal(["A5", "A4", "A3", "A2", "A1"]);
      const pager = page.getByRole("navigation", { name: "Row pages" });
      await pager.getByRole("status").getByText("Page 1 of 3").waitFor();
      await page.getByRole("button", { name: "Next page →" }).click();
      await pager.getByRole("status").getByText("Page 2 of 3").waitFor();
      await page.getByRole("button", { name: "Next page →" }).click();
      await pager.getByRole("status").getByText("Page 3 of 3").waitFor();
      expect(await page.getByRole("button", { name: "Next page →" }).isDisabled()).to.equal(true);
      await page.getByRole("button", { name: "← Previous page" }).click();
      await pager.getByRole("status").getByText("Page 2 of 3").waitFor();
    });

    it("edits a row: a change behind its back is a conflict, Reload shows it, and saving again works", async () => {
      await page.getByRole("button", { name: "← Previous page" }).click();
      await page.getByRole("gridcell", { name: "A5", exact: true }).waitFor();
      await page
        .locator("table.data tbody tr", { hasText: "A4" })
        .getByRole("button", { name: "Open" })
        .click();
      const detail = page.getByRole("region", { name: /Row/ });
      await detail.getByLabel("credit_limit", { exact: true }).fill("1500");

      const behind = await data().put(managerKey, "customer/A4", {
        "@metadata": { checksum: "override" },
        credit_limit: 777,
      });
      expect(behind.status).to.equal(200);

      await detail.getByRole("button", { name: "Save changes" }).click();
      const conflict = detail.getByRole("alert");
      await conflict.getByText("Someone else changed this row").waitFor();
      expect(await conflict.evaluate((el) => el === document.activeElement)).to.equal(true);
      await screenshot(page, "08-row-conflict");
      expect((await data().get(managerKey, "customer/A4")).body[0].credit_limit).to.equal(777);

      await conflict.getByRole("button", { name: "Reload the row" }).click();
      await page.waitForFunction(
        () => (document.querySelector("#attr-2") as HTMLInputElement | null)?.value === "777",
      );
      await detail.getByLabel("credit_limit", { exact: true }).fill("1500");
      await detail.getByRole("button", { name: "Save changes" }).click();
      const summary = page.getByRole("region", { name: /Saved: 1 row\(s\) changed/ });
      await summary.waitFor();
      expect((await data().get(managerKey, "customer/A4")).body[0].credit_limit).to.equal(1500);
    });

    it("inserts a row and highlights the rule's side effects in the transaction summary", async () => {
      await page.getByRole("link", { name: "purchaseorder", exact: true }).click();
      await page.getByRole("button", { name: "New row" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByLabel("customer_name", { exact: true }).fill("A4");
      await dialog.getByLabel("amount_total", { exact: true }).fill("30");
      await dialog.getByLabel("amount_total", { exact: true }).press("Enter");
      const summary = page.getByRole("region", { name: /Inserted: 2 row\(s\) changed/ });
      await summary.waitFor();
      const entries = summary.locator("li");
      expect(await entries.nth(0).getAttribute("class")).to.equal("written");
      expect(await entries.nth(0).textContent()).to.include("INSERT");
      expect(await entries.nth(1).getAttribute("class")).to.equal("side-effect");
      expect(await entries.nth(1).textContent()).to.match(/UPDATE.*customer.*side effect/);
      expect(await page.evaluate(() => document.activeElement?.className)).to.equal("txsummary");
      await screenshot(page, "09-txsummary");
      expect((await data().get(managerKey, "customer/A4")).body[0].balance).to.equal(30);

      // A refused write (the validation rule) shows its message as text and writes nothing.
      await page.getByRole("button", { name: "New row" }).click();
      await dialog.getByLabel("customer_name", { exact: true }).fill("A4");
      await dialog.getByLabel("amount_total", { exact: true }).fill("5000");
      await dialog.getByRole("button", { name: "Insert" }).click();
      await dialog
        .getByRole("alert")
        .getByText(XSS_RULE_MESSAGE.replace("{balance}", ""), { exact: false })
        .waitFor();
      await expectNoScriptRan(page);
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      expect((await data().get(managerKey, "customer/A4")).body[0].balance).to.equal(30);
    });

    it("deletes a row with its checksum; the summary shows the rule's update", async () => {
      await page
        .locator("table.data tbody tr", { hasText: "30" })
        .getByRole("button", { name: "Open" })
        .click();
      await page.getByRole("button", { name: "Delete row" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
      const summary = page.getByRole("region", { name: /Deleted: 2 row\(s\) changed/ });
      await summary.waitFor();
      expect(await summary.locator("li").nth(0).textContent()).to.include("DELETE");
      expect(await summary.locator("li").nth(1).getAttribute("class")).to.equal("side-effect");
      expect((await data().get(managerKey, "customer/A4")).body[0].balance).to.equal(0);
      expect((await data().get(managerKey, "purchaseorder")).body).to.deep.equal([]);
    });

    it("opens a custom resource's row with its nested children", async () => {
      await data().post(managerKey, "purchaseorder", [
        { customer_name: "A2", amount_total: 5 },
        { customer_name: "A2", amount_total: 7 },
      ]);
      await page.getByRole("link", { name: "Customers", exact: true }).click();
      const row = page.locator("table.data tbody tr", { hasText: "A2" });
      await row.getByText("Orders: 2").waitFor();
      await row.getByRole("button", { name: "Open" }).click();
      const orders = page.getByRole("region", { name: "Orders" });
      await orders.getByRole("cell", { name: "7", exact: true }).waitFor();
      await screenshot(page, "10-nested-children");
    });

    it("draws a custom provider's login form, its hostile labels as text", async () => {
      const put = await operator.putProject("acme", "gate", {
        ...SHOP,
        libraries: { secretWord: { code: secretWordCode } },
        authentication: {
          provider: "custom",
          library: "secretWord",
          createFunction: "secretWordCreate",
          config: { secretWord: "Tessera", prompt: XSS_PROMPT, roles: ["Full access"] },
        },
      });
      expect(put.status, JSON.stringify(put.body)).to.equal(201);
      await page.getByRole("button", { name: "Log out of the project" }).click();
      await page.getByRole("alert").getByText("You have signed out of your data session.").waitFor();
      await page.getByRole("combobox", { name: "Project" }).selectOption("gate");
      await page.getByRole("button", { name: "Show the login form" }).click();
      await page.getByLabel("Your name").fill("visitor");
      await page.getByLabel(XSS_PROMPT).fill("Tessera");
      await expectNoScriptRan(page);
      await page.getByRole("button", { name: "Log in" }).click();
      await page.getByRole("heading", { name: "Data: acme / gate / v1" }).waitFor();
    });
  });

  describe("definition history and audit", () => {
    it("never carries one project's definition text into another at the same revision (an edited address)", async () => {
      await nav(page, "Projects").click();
      await page.getByRole("link", { name: "shop" }).click();
      await page.getByRole("heading", { name: /shop · revision 1/ }).waitFor();
      const editor = page.getByLabel("Definition (JSON)");
      await replaceEditorText(editor, JSON.stringify({ tables: {}, apiVersions: {}, typedFor: "shop" }));
      await page.evaluate(() => {
        window.location.hash = "#/projects/gate";
      });
      await page.getByRole("heading", { name: /gate · revision 1/ }).waitFor();
      const gate = await operator.send("GET", "/accounts/acme/projects/gate");
      const gateText = await untilEditorText(editor, "gate's definition in the editor", (text) =>
        text.includes("secretWord"),
      );
      expect(JSON.parse(gateText)).to.deep.equal(gate.body.definition);
      // And back: what was typed in shop is shop's draft, offered back there (and only there).
      await page.goBack();
      await page.getByRole("heading", { name: /shop · revision 1/ }).waitFor();
      await page.getByRole("status").getByText("Your unsaved changes are back").waitFor();
      const draft = await untilEditorText(editor, "the draft is back in the editor", (text) =>
        text.includes("typedFor"),
      );
      expect(JSON.parse(draft)).to.deep.equal({ tables: {}, apiVersions: {}, typedFor: "shop" });
      await page.getByRole("button", { name: "Discard my changes" }).click();
      const shop = await operator.send("GET", "/accounts/acme/projects/shop");
      // The click returns before the editor shows the stored text again.
      const stored = await untilEditorText(editor, "the stored text replaces the draft", (text) =>
        text.includes('"customer"'),
      );
      expect(JSON.parse(stored)).to.deep.equal(shop.body.definition);
    });

    it("applies a provider's definition with its config masked as loaded: the stored secret is kept", async () => {
      await nav(page, "Projects").click();
      await page.getByRole("link", { name: "gate" }).click();
      await page.getByRole("heading", { name: /gate · revision 1/ }).waitFor();
      const text = await editorText(page.getByLabel("Definition (JSON)"));
      expect(text).to.contain('"secretWord": "********"');
      expect(JSON.parse(text).authentication.config).to.deep.equal({
        secretWord: "********",
        prompt: "********",
        roles: "********",
      });
      await replaceEditorText(
        page.getByLabel("Definition (JSON)"),
        JSON.stringify({ ...JSON.parse(text), description: "the gate, secret kept" }, null, 2),
      );
      await page.getByRole("button", { name: "Check changes (dry run)" }).click();
      await page
        .getByRole("region", { name: "What would change" })
        .getByText("the gate, secret kept")
        .waitFor();
      await page.getByRole("button", { name: /^Apply/ }).click();
      await page.getByRole("heading", { name: /gate · revision 2/ }).waitFor();
      const login = await projectClient(platform.baseUrl, "acme", "gate").login({
        username: "visitor",
        password: "Tessera",
      });
      expect(login.status, JSON.stringify(login.body)).to.equal(200);
    });

    it("explains a definition conflict (412): compare with their revision, then apply over it knowingly", async () => {
      await nav(page, "Projects").click();
      await page.getByRole("link", { name: "shop" }).click();
      await page.getByRole("heading", { name: /shop · revision 1/ }).waitFor();
      const customer = SHOP.tables.customer;
      const edited = {
        ...SHOP,
        tables: {
          ...SHOP.tables,
          customer: { ...customer, columns: { ...customer.columns, segment: { type: "string" } } },
        },
      };
      await replaceEditorText(page.getByLabel("Definition (JSON)"), JSON.stringify(edited, null, 2));
      await page.getByRole("button", { name: "Check changes (dry run)" }).click();
      await page.getByRole("region", { name: "What would change" }).getByText("segment").waitFor();

      const theirs = {
        ...SHOP,
        roles: { ...SHOP.roles, Auditor: { tables: { "*": { access: ["read"] } } } },
      };
      const behind = await operator.putProject("acme", "shop", theirs);
      expect(behind.body.revision).to.equal(2);

      await page.getByRole("button", { name: /^Apply/ }).click();
      const conflict = page.getByRole("alert").filter({ hasText: "Someone else changed this project" });
      await conflict.getByText("You loaded revision 1").waitFor();
      await screenshot(page, "11-definition-conflict");
      expect((await operator.send("GET", "/accounts/acme/projects/shop")).body.revision).to.equal(2);

      await conflict.getByRole("button", { name: "Compare with their revision" }).click();
      await conflict.getByText("Comparing against revision 2").waitFor();
      const diff = page.getByRole("region", { name: "What would change" });
      await diff.getByText("Auditor").waitFor();
      await page.getByRole("button", { name: "Apply over revision 2" }).click();
      await page.getByRole("heading", { name: /shop · revision 3/ }).waitFor();
      const stored = await operator.send("GET", "/accounts/acme/projects/shop");
      expect(stored.body.definition.tables.customer.columns.segment).to.deep.equal({ type: "string" });
      expect(stored.body.definition.roles.Auditor).to.equal(undefined);
    });

    it("lists revisions, shows one, and rolls back to it as a new revision", async () => {
      await page.getByRole("link", { name: "Revisions" }).click();
      await page.getByRole("cell", { name: /^3\s*current$/ }).waitFor();
      await page.getByRole("row", { name: /^1 / }).getByRole("button", { name: "View" }).click();
      const dialog = page.getByRole("dialog", { name: "Revision 1" });
      await dialog.getByText('"purchaseorder"', { exact: false }).waitFor();
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
      await screenshot(page, "12-revisions");

      await page.getByRole("button", { name: "Roll back to 1" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Roll back" }).click();
      await page
        .getByRole("status")
        .getByText(/Rolled back: stored revision 4/)
        .waitFor();
      await page.getByRole("heading", { name: /shop · revision 4/ }).waitFor();
      const [r1, now] = await Promise.all([
        operator.send("GET", "/accounts/acme/projects/shop/revisions/1"),
        operator.send("GET", "/accounts/acme/projects/shop"),
      ]);
      expect(now.body.definition).to.deep.equal(r1.body.definition);
    });

    it("leaves Apply disabled when the dry run finds nothing to change", async () => {
      await page.getByRole("link", { name: "Definition" }).click();
      await page.getByRole("heading", { name: /shop · revision 4/ }).waitFor();
      await page.getByRole("button", { name: "Check changes (dry run)" }).click();
      await page.getByText("The dry run found nothing to change.").waitFor();
      expect(await page.getByRole("button", { name: "Apply over revision 4" }).isDisabled()).to.equal(true);
    });

    it("pages through the audit trail", async () => {
      await nav(page, "Audit trail").click();
      await page.getByLabel("Entries per page").selectOption("10");
      await page.getByRole("button", { name: "Show" }).click();
      const rows = page.locator("table.audit tbody tr");
      await page.waitForFunction(() => document.querySelectorAll("table.audit tbody tr").length === 10);
      const first = await rows.allTextContents();
      expect(first).to.have.length(10);
      // Newest first: the rollback just made leads.
      expect(first[0]).to.include("rollback");
      expect(first.join("\n")).to.include("PUT /admin/v1/accounts/acme/projects/shop");
      const times = await page
        .locator("table.audit tbody time")
        .evaluateAll((els) => els.map((el) => el.getAttribute("datetime") ?? ""));
      expect(times).to.deep.equal([...times].sort().reverse());
      await screenshot(page, "13-audit");
      await page.getByRole("button", { name: "Next page →" }).click();
      await page.waitForFunction(
        (before) => document.querySelector("table.audit tbody tr")?.textContent !== before,
        first[0],
      );
      const second = await rows.allTextContents();
      expect(second.length).to.be.greaterThan(0);
      expect(second).to.not.include.members([first[0]]);
      expect(second.join("\n")).to.not.include("rollback");
      await page.getByRole("button", { name: "← Previous page" }).click();
      await page.waitForFunction(
        (want) => document.querySelector("table.audit tbody tr")?.textContent === want,
        first[0],
      );
    });
  });

  describe("readers, policy and sessions", () => {
    it("shows a reader everything without a single edit control, and the server refuses the reader anyway", async () => {
      const reader = await browser.newPage();
      await signIn(reader, platform.baseUrl, "rita", "rita-secret-1");
      expect(await reader.getByRole("link", { name: "New project" }).count()).to.equal(0);
      await reader.getByRole("link", { name: "shop" }).click();
      await reader.getByRole("heading", { name: /shop · revision 4/ }).waitFor();
      expect(await reader.getByLabel("Definition (JSON)").getAttribute("aria-readonly")).to.equal("true");
      expect(await reader.getByRole("button", { name: /Apply|dry run/ }).count()).to.equal(0);
      await screenshot(reader, "14-reader-definition");
      await reader.getByRole("link", { name: "Revisions" }).click();
      await reader.getByRole("button", { name: "View" }).first().waitFor();
      expect(await reader.getByRole("button", { name: /Roll back/ }).count()).to.equal(0);
      await reader.getByRole("link", { name: "Users" }).click();
      await reader.getByRole("cell", { name: "alice", exact: true }).waitFor();
      expect(await reader.getByRole("button", { name: /Delete|Save/ }).count()).to.equal(0);
      await reader.getByRole("link", { name: "API keys" }).click();
      await reader.getByRole("cell", { name: "seeder", exact: true }).waitFor();
      expect(await reader.getByRole("button", { name: /Delete|Create/ }).count()).to.equal(0);
      await nav(reader, "Administrators").click();
      await reader.getByRole("cell", { name: "rita", exact: true }).waitFor();
      expect(await reader.getByRole("button", { name: /Remove|Save/ }).count()).to.equal(0);
      expect(
        await reader
          .locator(
            'input, textarea:not([readonly]), select, [contenteditable="true"]:not([aria-readonly="true"])',
          )
          .count(),
      ).to.equal(0);

      const readerKey = await reader.evaluate(
        () => JSON.parse(sessionStorage.getItem("tessera.console.admin") ?? "{}").apikey,
      );
      issuedKeys.push(readerKey);
      const refused = await call(platform.baseUrl, "PUT", "/admin/v1/accounts/acme/projects/shop", {
        body: SHOP,
        headers: { authorization: `Bearer ${readerKey}` },
      });
      expect(refused.status).to.equal(403);
      await reader.close();
    });

    it("sends the policy with every page, and the policy blocks inline script and style", async () => {
      await page.goto(`${platform.baseUrl}/console/#/projects`);
      const response = await page.reload();
      expect(response!.headers()["content-security-policy"]).to.include("script-src 'self'");
      await page.getByRole("heading", { name: "Projects" }).waitFor();
      const outcome = await page.evaluate(async () => {
        const violations: string[] = [];
        document.addEventListener("securitypolicyviolation", (e) => violations.push(e.effectiveDirective));
        const script = document.createElement("script");
        let assigned = true;
        try {
          script.textContent = "window.__inline = 1";
        } catch {
          assigned = false; // Trusted Types refuse a plain string as script text
        }
        document.body.append(script);
        const style = document.createElement("style");
        style.textContent = "body { display: none }";
        document.head.append(style);
        const holder = document.createElement("div");
        let markup = true;
        try {
          holder.innerHTML = "<img src=x onerror=window.__inline=2>";
        } catch {
          markup = false; // no string becomes markup
        }
        // Until the browser reported both refusals (each comes after the refused step).
        await new Promise<void>((resolve) => {
          const both = () => {
            if (violations.includes("require-trusted-types-for") && violations.includes("style-src-elem"))
              resolve();
          };
          document.addEventListener("securitypolicyviolation", both);
          both();
        });
        return {
          ran: (window as unknown as { __inline?: unknown }).__inline,
          assigned,
          markup,
          hidden: getComputedStyle(document.body).display === "none",
          violations,
        };
      });
      expect(outcome.ran).to.equal(undefined);
      expect(outcome.assigned).to.equal(false);
      expect(outcome.markup).to.equal(false);
      expect(outcome.hidden).to.equal(false);
      expect(outcome.violations).to.include("require-trusted-types-for");
      expect(outcome.violations).to.include("style-src-elem");
    });

    it("signs out on a 401 (the key disabled behind its back) with a clear message", async () => {
      const key = await page.evaluate(
        () => JSON.parse(sessionStorage.getItem("tessera.console.admin") ?? "{}").apikey,
      );
      const disabled = await call(platform.baseUrl, "POST", "/admin/v1/accounts/acme/@authentication", {
        body: { apikey: key, disable: true },
      });
      expect(disabled.status).to.equal(200);
      await nav(page, "Administrators").click();
      const notice = page.getByRole("alert");
      await notice.getByText("You were signed out: The API key has been disabled").waitFor();
      expect(await page.evaluate(() => sessionStorage.getItem("tessera.console.admin"))).to.equal(null);
      await screenshot(page, "15-signed-out");
    });

    it("keeps the definition being edited when the session ends, and signs back in where it was", async () => {
      await signIn(page, platform.baseUrl, "ann", "ann-secret-1");
      await page.getByRole("link", { name: "shop" }).click();
      await page.getByRole("heading", { name: /shop · revision/ }).waitFor();
      const editor = page.getByLabel("Definition (JSON)");
      const stored = JSON.parse(await editorText(editor));
      const draft = JSON.stringify({ ...stored, description: "half-way through an edit" }, null, 2);
      await replaceEditorText(editor, draft);
      const key = await page.evaluate(
        () => JSON.parse(sessionStorage.getItem("tessera.console.admin") ?? "{}").apikey,
      );
      await call(platform.baseUrl, "POST", "/admin/v1/accounts/acme/@authentication", {
        body: { apikey: key, disable: true },
      });
      await page.getByRole("button", { name: "Check changes (dry run)" }).click();
      await page.getByRole("alert").getByText("You were signed out").waitFor();

      await page.getByLabel("Account", { exact: true }).fill("acme");
      await page.getByLabel("Login", { exact: true }).fill("ann");
      await page.getByLabel("Password", { exact: true }).fill("ann-secret-1");
      await page.getByLabel("Password", { exact: true }).press("Enter");
      await page.getByRole("heading", { name: /shop · revision/ }).waitFor();
      await page.getByRole("status").getByText("Your unsaved changes are back").waitFor();
      await untilEditorText(editor, "the draft is back in the editor", (text) => text === draft);

      await page.getByRole("button", { name: "Discard my changes" }).click();
      const afterDiscard = await untilEditorText(
        editor,
        "the stored text replaces the draft",
        (text) => text !== draft,
      );
      expect(JSON.parse(afterDiscard)).to.deep.equal(stored);
      // Signing out on purpose forgets drafts.
      await replaceEditorText(editor, draft);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Login", { exact: true }).waitFor();
      const drafts = await page.evaluate(() =>
        Object.keys(sessionStorage).filter((k) => k.startsWith("tessera.console.draft:")),
      );
      expect(drafts).to.deep.equal([]);
    });

    it("never puts a key in a URL or in localStorage", async () => {
      expect(issuedKeys).to.have.length.greaterThan(3);
      expect(requestedUrls.length).to.be.greaterThan(20);
      for (const url of requestedUrls) {
        for (const key of issuedKeys) expect(url, url).to.not.include(key);
      }
      expect(await page.evaluate(() => localStorage.length)).to.equal(0);
    });
  });
});

describe("console in Chromium: an expired admin key", () => {
  let platform: Platform;
  let browser: Browser;
  before(async function () {
    this.timeout(120_000);
    platform = await startPlatform({ ADMIN_KEY_LIFETIME_SECONDS: "3" }, { console: true });
    const operator = adminClient(platform.baseUrl, platform.adminToken);
    await operator.send("PUT", "/accounts/acme", {});
    await putAdmin(operator, "acme", "ann", "admin", "ann-secret-1");
    browser = await startBrowser();
  });
  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  it("signs the administrator out when the login's expiration passes, saying why", async function () {
    this.timeout(30_000);
    const page = await browser.newPage();
    await signIn(page, platform.baseUrl, "ann", "ann-secret-1");
    // Nothing is clicked: the console's own timer, set from the login's expiration, signs out.
    await page
      .getByRole("alert")
      .getByText("Your admin session has expired. Sign in again.")
      .waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => sessionStorage.getItem("tessera.console.admin"))).to.equal(null);
    const key = await adminKey(platform.baseUrl, "acme", "ann", "ann-secret-1");
    expect(
      (await call(platform.baseUrl, "GET", "/admin/v1/accounts/acme", { headers: keyHeader(key) })).status,
    ).to.equal(200);
  });
});
