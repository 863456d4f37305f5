/// <reference lib="dom" />
// The functions given to page.evaluate run in the browser: they see its window and document.
/**
 * The data explorer with the administrator's own session, in a real headless
 * Chromium against the real platform: an account admin opens a project that has no
 * users, browses and edits it with their own admin key — no user password, no key
 * of the project made — and each write lands in the audit trail under their name.
 * Signing out of the console ends the explorer's session: the admin key is refused
 * from then on and the explorer shows no data. Logging in as a project user stays
 * available (to see what a role allows), and signing out disables that key too.
 */
import { expect } from "chai";
import type { Page } from "playwright-core";
import type { AuditEntryView } from "../../../services/data/src/http/admin/audit-routes.ts";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminKey, putAdmin } from "../../support/admins.ts";
import { afterFailure, type Browser, screenshot, signIn, startBrowser } from "../../support/browser.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { until } from "../../support/until.ts";

const BARE = demoProject({
  rules: [{ table: "customer", type: "sum", column: "balance", children: "orders", of: "amount_total" }],
});

const nav = (page: Page, name: string) =>
  page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name, exact: true });

/** The keys of the console's sessions in the tab's sessionStorage. */
const storedSessions = (page: Page) =>
  page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith("tessera.console.")));

const storedKey = (page: Page, name: string) =>
  page.evaluate((n) => JSON.parse(sessionStorage.getItem(n) ?? "{}").apikey as string | undefined, name);

describe("console in Chromium: the data explorer with the administrator's own session", function () {
  this.timeout(60_000);
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  let operator: ReturnType<typeof adminClient>;
  const bare = () => projectClient(platform.baseUrl, "acme", "bare");

  before(async function () {
    this.timeout(120_000);
    platform = await startPlatform({}, { console: true });
    operator = adminClient(platform.baseUrl, platform.adminToken);
    await operator.send("PUT", "/accounts/acme", { displayName: "Acme" });
    await putAdmin(operator, "acme", "ann", "admin", "ann-secret-1");
    expect((await operator.putProject("acme", "bare", BARE)).status).to.equal(201);
    // Another project with the same tables: nothing of bare's explorer is to be seen in it.
    expect((await operator.putProject("acme", "bare2", BARE)).status).to.equal(201);
    // Seeded with an admin key of its own: the project has no users and no keys.
    const seeder = await adminKey(platform.baseUrl, "acme", "ann", "ann-secret-1");
    const seeded = await bare().post(seeder, "customer", { name: "Seeded", credit_limit: 50 });
    expect(seeded.status, JSON.stringify(seeded.body)).to.equal(201);
    browser = await startBrowser();
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
  });

  afterEach(async function () {
    if (this.currentTest?.state === "failed")
      await afterFailure(page, `failed-admin-explorer-${this.currentTest.title.slice(0, 40)}`);
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  it("an admin browses and edits a project without users with their own session; no key is made", async () => {
    expect((await operator.send("GET", "/accounts/acme/projects/bare/users")).body).to.deep.equal([]);
    await signIn(page, platform.baseUrl, "ann", "ann-secret-1");
    await nav(page, "Data explorer").click();
    await page.getByRole("combobox", { name: "Project" }).selectOption("bare");
    await screenshot(page, "20-explorer-open-as-admin");
    await page.getByRole("button", { name: "Open as ann" }).click();
    await page.getByRole("heading", { name: "Data: acme / bare / v1" }).waitFor();
    await page.getByText("account admin").waitFor();

    await page.getByRole("link", { name: "customer", exact: true }).click();
    await page.getByRole("gridcell", { name: "Seeded", exact: true }).waitFor();

    await page.getByRole("button", { name: "New row" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("name", { exact: true }).fill("FromConsole");
    await dialog.getByLabel("credit_limit", { exact: true }).fill("10");
    await dialog.getByLabel("credit_limit", { exact: true }).press("Enter");
    await page.getByRole("region", { name: /Inserted: 1 row\(s\) changed/ }).waitFor();

    await page
      .locator("table.data tbody tr", { hasText: "Seeded" })
      .getByRole("button", { name: "Open" })
      .click();
    const detail = page.getByRole("region", { name: /Row/ });
    await detail.getByLabel("credit_limit", { exact: true }).fill("75");
    await detail.getByRole("button", { name: "Save changes" }).click();
    await page.getByRole("region", { name: /Saved: 1 row\(s\) changed/ }).waitFor();
    await screenshot(page, "21-explorer-as-admin");

    const adminKeyOfTab = await storedKey(page, "tessera.console.admin");
    expect((await bare().get(adminKeyOfTab, "customer/FromConsole")).body).to.have.length(1);
    expect((await bare().get(adminKeyOfTab, "customer/Seeded")).body[0].credit_limit).to.equal(75);
    // No temp key, no key at all: the project's key list is empty, and the tab holds only the admin session.
    expect((await operator.listKeys("acme", "bare")).body).to.deep.equal([]);
    expect(await storedSessions(page)).to.have.members(["tessera.console.admin", "tessera.console.explore"]);

    const audit = await operator.send("GET", "/accounts/acme/audit?pagesize=1000");
    const writes = (audit.body as AuditEntryView[])
      .filter((e) => e.path?.startsWith("/rest/acme/bare/"))
      .slice(1) // the seeding POST above
      .map((e) => [e.method, e.path, e.status, e.actor]);
    expect(writes).to.deep.equal([
      ["POST", "/rest/acme/bare/v1/customer", 201, { kind: "admin", login: "ann", role: "admin" }],
      ["PUT", "/rest/acme/bare/v1/customer/Seeded", 200, { kind: "admin", login: "ann", role: "admin" }],
    ]);

    // The same table and row address in another project: the summary of bare's write stays with bare.
    await page.evaluate(() => (location.hash = "#/explorer/acme/bare2/v1/customer?row=customer%2FSeeded"));
    await page.getByRole("heading", { name: "Data: acme / bare2 / v1" }).waitFor();
    await page.getByText("The row no longer exists").waitFor();
    expect(await page.getByRole("region", { name: /Saved: 1 row\(s\) changed/ }).count()).to.equal(0);
    await page.evaluate(() => (location.hash = "#/explorer/acme/bare/v1/customer"));
    await page.getByRole("heading", { name: "Data: acme / bare / v1" }).waitFor();
  });

  it("Sign out ends the explorer's session: its key is refused and the explorer shows no data", async () => {
    // The explorer is open as the admin (the step above), reading with the tab's admin key.
    await page.getByRole("gridcell", { name: "Seeded", exact: true }).waitFor();
    const key = await storedKey(page, "tessera.console.admin");
    expect((await bare().get(key, "customer")).status).to.equal(200);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Data explorer" }).waitFor();
    expect(await page.getByRole("heading", { name: "Data: acme / bare / v1" }).count()).to.equal(0);
    expect(await page.getByRole("gridcell", { name: "Seeded", exact: true }).count()).to.equal(0);
    // Each session is forgotten once the server has disabled its key.
    await until("the tab forgets every session", async () => (await storedSessions(page)).length === 0);
    const refused = await bare().get(key, "customer");
    expect(refused.status).to.equal(401);
    expect(refused.body.errorCode).to.equal(4014);
  });

  it("an admin may still log in as a project user to see what a role allows; Sign out disables that key too", async () => {
    const put = await operator.putUser("acme", "bare", "bob", {
      password: "bob-password-1",
      roles: ["Region reader"],
      globals: { region: "west" },
    });
    expect(put.status, JSON.stringify(put.body)).to.equal(201);
    await signIn(page, platform.baseUrl, "ann", "ann-secret-1");
    await nav(page, "Data explorer").click();
    await page.getByRole("combobox", { name: "Project" }).selectOption("bare");
    await page.getByRole("button", { name: "Show the login form" }).click();
    await page.getByLabel("User name").fill("bob");
    await page.getByLabel("Password", { exact: true }).fill("bob-password-1");
    await page.getByLabel("Password", { exact: true }).press("Enter");
    await page.getByRole("heading", { name: "Data: acme / bare / v1" }).waitFor();
    await page.getByText("(Region reader)").waitFor();
    const userKey = await storedKey(page, "tessera.console.data");
    expect((await bare().get(userKey, "customer")).status).to.equal(200);

    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Data explorer" }).waitFor();
    await until("the tab forgets every session", async () => (await storedSessions(page)).length === 0);
    const refused = await bare().get(userKey, "customer");
    expect(refused.status).to.equal(401);
    expect(refused.body.errorCode).to.equal(4014);
  });

  it("a reader opens a project with her own session: every read, no write control, and the server refuses writes", async () => {
    await putAdmin(operator, "acme", "rita", "reader", "rita-secret-1");
    await signIn(page, platform.baseUrl, "rita", "rita-secret-1");
    await nav(page, "Data explorer").click();
    await page.getByRole("combobox", { name: "Project" }).selectOption("bare");
    await page.getByRole("button", { name: "Open as rita" }).click();
    await page.getByText("account reader").waitFor();
    await page.getByRole("link", { name: "customer", exact: true }).click();
    await page.getByRole("gridcell", { name: "Seeded", exact: true }).waitFor();
    await page
      .locator("table.data tbody tr", { hasText: "Seeded" })
      .getByRole("button", { name: "Open" })
      .click();
    const detail = page.getByRole("region", { name: /Row/ });
    const limit = detail.getByLabel("credit_limit", { exact: true });
    expect(await limit.inputValue()).to.equal("75");
    expect(await limit.getAttribute("readonly")).to.not.equal(null);
    await screenshot(page, "22-explorer-as-reader");
    for (const name of ["New row", "Save changes", "Delete row"])
      expect(await page.getByRole("button", { name }).count(), name).to.equal(0);
    expect(await page.getByLabel("Import").count(), "the import's file input").to.equal(0);
    expect(await page.getByRole("checkbox").count(), "row selection for a bulk delete").to.equal(0);
    // The controls are gone because the server would refuse them: it does.
    const key = await storedKey(page, "tessera.console.admin");
    const refused = await bare().post(key!, "customer", { name: "ByReader", credit_limit: 1 });
    expect([refused.status, refused.body.errorCode]).to.deep.equal([403, 4031]);
  });
});
