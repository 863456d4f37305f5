/// <reference lib="dom" />
// The functions given to page.evaluate run in the browser: they see its window and document.
/**
 * The console's admin screens in a real headless Chromium against the real platform, on
 * a laptop (1366×900) and on a phone (390×844): the audit trail and a project's revisions
 * newest first and filtered; a user's roles, globals and key lifetime changed without a
 * password; a project's settings (its API documents, its key lifetime, and deleting it by
 * typing its name); the account screen (the display name, and the administrator's own
 * password, after which the session goes on with the new key). Each size has an account
 * of its own, so that what one changes the other does not see.
 */
import { expect } from "chai";
import type { Page } from "playwright-core";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminAuthentication, adminKey, putAdmin } from "../../support/admins.ts";
import {
  afterFailure,
  type Browser,
  DESKTOP,
  PHONE,
  screenshot,
  signIn,
  startBrowser,
} from "../../support/browser.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const SIZES = [
  { name: "desktop", ...DESKTOP },
  { name: "phone", ...PHONE },
];

const rowTexts = (page: Page, table: string) => page.locator(`${table} tbody tr`).allTextContents();
/** The texts of the table's n-th column (from 1). */
const columnTexts = (page: Page, table: string, n: number) =>
  page.locator(`${table} tbody tr td:nth-child(${n})`).allTextContents();

/** A user name of the most characters the name grammar allows (63). */
const LONG_USER = `u${"0123456789".repeat(6)}xy`;

describe("console in Chromium: admin screens", function () {
  this.timeout(60_000);
  let platform: Platform;
  let browser: Browser;
  let operator: ReturnType<typeof adminClient>;

  before(async function () {
    this.timeout(120_000);
    platform = await startPlatform({}, { console: true });
    operator = adminClient(platform.baseUrl, platform.adminToken);
    browser = await startBrowser();
  });
  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  for (const size of SIZES) {
    describe(`at ${size.width}×${size.height}`, () => {
      const account = `screens-${size.name}`;
      let page: Page;
      let bob: ReturnType<typeof adminClient>;

      before(async () => {
        await operator.send("PUT", `/accounts/${account}`, { displayName: "Before" });
        await putAdmin(operator, account, "ann", "admin", "ann-secret-1");
        await putAdmin(operator, account, "bob", "admin", "bob-secret-1");
        await putAdmin(operator, account, "rita", "reader", "rita-secret-1");
        bob = adminClient(platform.baseUrl, await adminKey(platform.baseUrl, account, "bob", "bob-secret-1"));
        expect((await operator.putProject(account, "shop", demoProject())).status).to.equal(201);
        expect(
          (await bob.send("PUT", `/accounts/${account}/projects/shop`, demoProject({ rules: [] }))).status,
        ).to.equal(200);
        expect((await bob.send("PUT", `/accounts/${account}/projects/shop`, { tables: 5 })).status).to.equal(
          400,
        );
        expect((await operator.putProject(account, "doomed", demoProject())).status).to.equal(201);
        // The longest names the grammar allows: a long path and summary in the audit trail.
        await operator.putUser(account, "shop", LONG_USER, {
          password: "long-password",
          roles: ["Full access"],
        });
        await operator.putUser(account, "shop", "alice", {
          password: "alice-password",
          roles: ["Full access"],
        });
        page = await browser.newPage();
        await page.setViewportSize(size);
        page.setDefaultTimeout(10_000);
        await signIn(page, platform.baseUrl, "ann", "ann-secret-1", account);
      });
      afterEach(async function () {
        if (this.currentTest?.state === "failed")
          await afterFailure(page, `failed-screens-${size.name}-${this.currentTest.title.slice(0, 40)}`);
      });
      after(() => page.close());

      it("lists the audit trail newest first, filtered by who, kind of change and refusal", async () => {
        await page.goto(`${platform.baseUrl}/console/#/audit`);
        await page.locator("table.audit tbody tr").first().waitFor();
        await page.getByText(`/users/${LONG_USER}`).waitFor();
        // Long paths and summaries break inside the table: on a laptop nothing of it is cut off.
        const fit = await page.locator("table.audit").evaluate((table) => {
          const area = table.parentElement!;
          const status = table.querySelector("thead th:last-child")!.getBoundingClientRect();
          return {
            scrolls: area.scrollWidth > area.clientWidth,
            statusInside: status.right <= area.getBoundingClientRect().right + 0.5,
          };
        });
        if (size.width >= 1366) expect(fit).to.deep.equal({ scrolls: false, statusInside: true });
        await screenshot(page, `admin-${size.name}-audit`);
        const all = await rowTexts(page, "table.audit");
        expect(all[0], "the newest entry first").to.include("/users/alice");
        expect(all.at(-1), "the oldest last").to.include(`PUT /admin/v1/accounts/${account}`);

        await page.getByLabel("Who").selectOption({ label: "bob" });
        await page.getByLabel("Outcome").selectOption({ label: "Refused only" });
        await page.getByRole("button", { name: "Show" }).click();
        await page.waitForFunction(() => document.querySelectorAll("table.audit tbody tr").length === 1);
        const refused = await rowTexts(page, "table.audit");
        expect(refused[0]).to.include("bob");
        expect(refused[0]).to.include("400 / 4001");
        expect(refused[0]).to.include("refused");

        await page.getByLabel("Who").selectOption({ label: "The operator" });
        await page.getByLabel("Outcome").selectOption({ label: "Made or refused" });
        await page.getByLabel("Kind of change").selectOption({ label: "Administrators" });
        await page.getByRole("button", { name: "Show" }).click();
        await page.waitForFunction(() =>
          Array.from(document.querySelectorAll("table.audit tbody tr")).every((r) =>
            r.textContent?.includes("/admins/"),
          ),
        );
        const changes = await columnTexts(page, "table.audit", 3);
        expect(changes).to.deep.equal(
          ["rita", "bob", "ann"].map((login) => `PUT /admin/v1/accounts/${account}/admins/${login}`),
        );
        await screenshot(page, `admin-${size.name}-audit-filtered`);
      });

      it("lists a project's revisions newest first, filtered by who stored them", async () => {
        await page.goto(`${platform.baseUrl}/console/#/projects/shop/revisions`);
        await page.getByRole("button", { name: "View" }).first().waitFor();
        expect(await columnTexts(page, "table.grid", 1)).to.deep.equal(["2current", "1"]);
        await page.getByLabel("Stored by").selectOption({ label: "The operator" });
        await page.waitForFunction(() => document.querySelectorAll("table.grid tbody tr").length === 1);
        expect(await columnTexts(page, "table.grid", 1)).to.deep.equal(["1"]);
        await page.getByLabel("Order").selectOption({ label: "Oldest first" });
        await page.getByLabel("Stored by").selectOption({ label: "Everyone" });
        await page.waitForFunction(() => document.querySelectorAll("table.grid tbody tr").length === 2);
        expect(await columnTexts(page, "table.grid", 1)).to.deep.equal(["1", "2current"]);
      });

      it("changes a user's roles, globals and key lifetime without a password", async () => {
        await page.goto(`${platform.baseUrl}/console/#/projects/shop/users`);
        await page.getByRole("button", { name: "Change alice" }).click();
        const form = page.getByRole("form", { name: "Change user alice" });
        await form.waitFor();
        expect(await page.evaluate(() => (document.activeElement as HTMLInputElement).name)).to.equal(
          "username",
        );
        expect(await form.getByRole("checkbox", { name: "Full access" }).isChecked()).to.equal(true);
        expect(await form.getByLabel("Password").getAttribute("required")).to.equal(null);

        await form.getByRole("checkbox", { name: "Full access" }).uncheck();
        await form.getByRole("checkbox", { name: "Region reader" }).check();
        await form.getByLabel("Globals (JSON object)").fill("[1, 2]");
        await form.getByRole("button", { name: "Save user" }).click();
        await page.getByRole("alert").getByText("Globals must be a JSON object").waitFor();
        const unchanged = await operator.send("GET", `/accounts/${account}/projects/shop/users/alice`);
        expect(unchanged.body.roles).to.deep.equal(["Full access"]);

        await form.getByLabel("Globals (JSON object)").fill('{"region": "north"}');
        await form.getByLabel("Key lifetime (seconds)").fill("600");
        await form.getByRole("button", { name: "Save user" }).click();
        await page.getByRole("status").getByText("User alice updated, password kept.").waitFor();
        const row = page.getByRole("row").filter({ hasText: "alice" });
        await row.getByText('{"region":"north"}').waitFor();
        await row.getByText("600 s").waitFor();
        const stored = await operator.send("GET", `/accounts/${account}/projects/shop/users/alice`);
        expect(stored.body).to.deep.equal({
          username: "alice",
          roles: ["Region reader"],
          globals: { region: "north" },
          keyLifetimeSeconds: 600,
        });
        const login = await projectClient(platform.baseUrl, account, "shop").login({
          username: "alice",
          password: "alice-password",
        });
        expect(login.status, "the password is kept").to.equal(200);
        await screenshot(page, `admin-${size.name}-user-changed`);
      });

      it("creates an API key with globals, which its role's row filter then uses", async () => {
        const seeder = await operator.createKey(account, "shop", { name: "seeder", roles: ["Full access"] });
        const seeded = await projectClient(platform.baseUrl, account, "shop").post(
          seeder.body.apikey,
          "customer",
          [
            { name: "North Ltd", region: "north" },
            { name: "South Ltd", region: "south" },
          ],
        );
        expect(seeded.status, JSON.stringify(seeded.body)).to.equal(201);
        await page.goto(`${platform.baseUrl}/console/#/projects/shop/keys`);
        await page.getByLabel("Name", { exact: true }).fill("northern report");
        await page.getByRole("checkbox", { name: "Region reader" }).check();
        await page.getByLabel("Globals (JSON object)").fill('{"region": "north"}');
        await page.getByRole("button", { name: "Create key" }).click();
        const value = await page.getByRole("dialog").getByLabel("API key").inputValue();
        await page.keyboard.press("Escape");
        const rows = await projectClient(platform.baseUrl, account, "shop").get(value, "customer");
        expect(rows.status).to.equal(200);
        expect(rows.body.map((r: { name: string }) => r.name)).to.deep.equal(["North Ltd"]);
      });

      it("shows a project's API documents and key lifetime, and deletes it only once its name is typed", async () => {
        await page.goto(`${platform.baseUrl}/console/#/projects/doomed`);
        await page.getByRole("link", { name: "Settings" }).click();
        await page.getByRole("heading", { name: "API documents" }).waitFor();
        const docs = page.getByRole("link", { name: "OpenAPI document of v1" });
        expect(await docs.getAttribute("href")).to.equal(`/rest/${account}/doomed/v1/@docs`);
        await page.getByText("3600 seconds").waitFor();
        await screenshot(page, `admin-${size.name}-project-settings`);

        await page.getByRole("button", { name: "Delete project…" }).click();
        const dialog = page.getByRole("dialog", { name: "Delete project doomed?" });
        const confirm = dialog.getByRole("button", { name: "Delete project" });
        expect(await confirm.isDisabled()).to.equal(true);
        await dialog.getByLabel("Type doomed to confirm").fill("doome");
        expect(await confirm.isDisabled()).to.equal(true);
        expect((await operator.send("GET", `/accounts/${account}/projects/doomed`)).status).to.equal(200);
        await dialog.getByLabel("Type doomed to confirm").fill("doomed");
        await screenshot(page, `admin-${size.name}-delete-project`);
        await dialog.getByLabel("Type doomed to confirm").press("Enter");
        await page.getByRole("heading", { name: "Projects", level: 1 }).waitFor();
        await page.getByRole("link", { name: "shop", exact: true }).waitFor();
        expect(await page.getByRole("link", { name: "doomed", exact: true }).count()).to.equal(0);
        expect((await operator.send("GET", `/accounts/${account}/projects/doomed`)).status).to.equal(404);
      });

      it("a project changed meanwhile is not deleted (412), and says so", async () => {
        await operator.putProject(account, "busy", demoProject());
        await page.goto(`${platform.baseUrl}/console/#/projects/busy/settings`);
        await page.getByRole("button", { name: "Delete project…" }).click();
        await operator.putProject(account, "busy", demoProject({ rules: [] }));
        const dialog = page.getByRole("dialog", { name: "Delete project busy?" });
        await dialog.getByLabel("Type busy to confirm").fill("busy");
        await dialog.getByRole("button", { name: "Delete project" }).click();
        await dialog.getByRole("alert").getByText("nothing was deleted").waitFor();
        expect((await operator.send("GET", `/accounts/${account}/projects/busy`)).status).to.equal(200);
        await page.keyboard.press("Escape");
      });

      it("renames the account and changes the administrator's own password, going on with the new key", async () => {
        await page
          .getByRole("banner")
          .getByRole("link", { name: /Your account/ })
          .click();
        await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
        const name = page.getByLabel("Display name", { exact: true });
        expect(await name.inputValue()).to.equal("Before");
        await name.fill("After");
        await page.getByRole("button", { name: "Save display name" }).click();
        await page.getByRole("status").getByText("The account is now called After.").waitFor();
        expect((await operator.send("GET", `/accounts/${account}`)).body.displayName).to.equal("After");

        await page.getByLabel("Current password").fill("not my password");
        await page.getByLabel("New password", { exact: true }).fill("ann-secret-2");
        await page.getByLabel("New password again").fill("ann-secret-2");
        await page.getByRole("button", { name: "Change password" }).click();
        await page.getByRole("alert").waitFor();
        await page.getByLabel("New password again").fill("ann-secret-3");
        await page.getByLabel("Current password").fill("ann-secret-1");
        await page.getByRole("button", { name: "Change password" }).click();
        await page.getByRole("alert").getByText("differ").waitFor();
        expect(await loginStatus(platform.baseUrl, account, "ann", "ann-secret-1"), "unchanged").to.equal(
          200,
        );

        const before = await page.evaluate(() => sessionStorage.getItem("tessera.console.admin"));
        await page.getByLabel("Current password").fill("ann-secret-1");
        await page.getByLabel("New password again").fill("ann-secret-2");
        await page.getByRole("button", { name: "Change password" }).click();
        await page.getByRole("status").getByText("Your password is changed.").waitFor();
        const after = await page.evaluate(() => sessionStorage.getItem("tessera.console.admin"));
        expect(JSON.parse(after!).apikey).to.not.equal(JSON.parse(before!).apikey);
        await screenshot(page, `admin-${size.name}-account`);
        expect(await loginStatus(platform.baseUrl, account, "ann", "ann-secret-1")).to.equal(401);
        expect(await loginStatus(platform.baseUrl, account, "ann", "ann-secret-2")).to.equal(200);

        // The session goes on with the new key: the next screen loads, nobody is signed out.
        await page.getByRole("banner").getByRole("link", { name: "Administrators" }).click();
        await page.getByRole("cell", { name: "rita", exact: true }).waitFor();
        expect(await page.getByRole("button", { name: "Sign out" }).count()).to.equal(1);
      });

      it("aborts a load nobody wants any more (another project opened meanwhile) and never shows its answer", async () => {
        const held = `**/admin/v1/accounts/${account}/projects/busy`;
        let arrived: () => void = () => {};
        const holding = new Promise<void>((resolve) => {
          arrived = resolve;
        });
        await page.route(held, (route) =>
          route.request().method() === "GET" ? arrived() : route.continue(),
        );
        const failed = page.waitForEvent("requestfailed", (r) => r.url().endsWith(`/projects/busy`));
        await page.goto(`${platform.baseUrl}/console/#/projects/busy`);
        await holding;
        // The same document: only the address's hash changes, as a link does.
        await page.evaluate(() => {
          window.location.hash = "#/projects/shop/revisions";
        });
        expect((await failed).failure()?.errorText).to.match(/abort/i);
        await page.getByRole("heading", { name: /shop · revision/ }).waitFor();
        await page.unroute(held);
        expect(await page.getByText("busy").count()).to.equal(0);
      });

      it("shows a reader the account and a project's settings without a control that changes them", async () => {
        const reader = await browser.newPage();
        await reader.setViewportSize(size);
        await signIn(reader, platform.baseUrl, "rita", "rita-secret-1", account);
        await reader.goto(`${platform.baseUrl}/console/#/account`);
        await reader.getByText("After", { exact: true }).waitFor();
        expect(await reader.getByRole("button", { name: "Save display name" }).count()).to.equal(0);
        await reader.goto(`${platform.baseUrl}/console/#/projects/shop/settings`);
        await reader.getByRole("heading", { name: "API documents" }).waitFor();
        expect(await reader.getByRole("button", { name: /Delete/ }).count()).to.equal(0);
        await reader.goto(`${platform.baseUrl}/console/#/projects/shop/users`);
        await reader.getByRole("cell", { name: "alice", exact: true }).waitFor();
        expect(await reader.getByRole("button", { name: /Change/ }).count()).to.equal(0);
        await reader.close();
      });
    });
  }
});

/** An administrator's login through the API (200 with a key, 401 when the password is wrong). */
const loginStatus = async (base: string, account: string, login: string, password: string) =>
  (await adminAuthentication(base, account, { username: login, password })).status;
