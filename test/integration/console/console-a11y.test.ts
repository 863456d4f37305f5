/// <reference lib="dom" />
// The functions given to page.evaluate run in the browser: they see its window and document.
/**
 * The console on a laptop (1366×900) and on phones (390×844, 360×740), in a real headless
 * Chromium against the real platform: every screen — sign-in, projects, a project's
 * definition, revisions, users and keys, administrators, the audit trail, the data
 * explorer's login and grid, and the dialogs — has no axe-core violation of
 * any impact, never scrolls sideways, names itself in the tab's title and puts the
 * focus on its heading when it opens (a project's settings, the account and the audit
 * trail's filters included); the top bar's sections stay reachable; focus
 * rings and input borders stand out 3:1; loading is announced (`aria-busy`) and a
 * failed load offers Retry. Screenshots of each screen at each size go to
 * test-output/console/ (named `<size>-<screen>.png`).
 *
 * axe-core is injected into the page, which the console's policy forbids: this file
 * uses a browser of its own with the policy bypassed (console-browser.test.ts checks
 * the policy where it is in force). The browser runs in a time zone other than UTC,
 * so that a time shown or typed without saying which zone it is in shows up.
 */
import { expect } from "chai";
import type { Page, Route } from "playwright-core";
import { demoProject } from "../../fixtures/demo-project.ts";
import { putAdmin } from "../../support/admins.ts";
import { axeViolations } from "../../support/axe.ts";
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
import { until } from "../../support/until.ts";
import { type Receiver, startReceiver } from "../../support/webhook-receiver.ts";

/** A right-to-left override: without isolation it reverses whatever follows it on the line. */
const RLO = "\u202e";
/** A key's name is free text (role names follow the name grammar, which refuses bidi controls). */
const BIDI_KEY_NAME = `${RLO}nightly`;

const SHOP = demoProject();

/** The laptop and the phone the issue was found on, and the narrowest phone the console is made for. */
const SIZES = [
  { name: "desktop", ...DESKTOP },
  { name: "phone", ...PHONE },
  { name: "narrow", width: 360, height: 740 },
];

/** The checks every screen gets: its title, axe-core, no sideways scrolling; and its screenshot. */
async function expectGoodScreen(page: Page, shot: string, title: string): Promise<void> {
  await page.waitForFunction((t) => document.title === t, `${title} · Tessera console`, { timeout: 5_000 });
  expect(await axeViolations(page), "axe-core violations of any impact").to.deep.equal([]);
  const width = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
    // What sticks out (the innermost such elements), to say why.
    beyond: Array.from(document.querySelectorAll("body *"))
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5)
      .filter(
        (el) =>
          !Array.from(el.children).some((c) => c.getBoundingClientRect().right > window.innerWidth + 0.5),
      )
      .slice(0, 5)
      .map((el) => `${el.tagName}.${el.className} ${(el.textContent ?? "").slice(0, 30)}`),
  }));
  expect(width.page, `the page is no wider than the viewport: ${width.beyond.join("; ")}`).to.be.at.most(
    width.viewport,
  );
  await screenshot(page, shot);
}

/** The element that has the focus, as `TAG: text`. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const el = document.activeElement;
    return el ? `${el.tagName}: ${(el.textContent ?? "").trim()}` : "none";
  });

/** Where each text is drawn inside the element (the box of its first occurrence). */
function textBoxes(root: Element, needles: string[]): { left: number; right: number }[] {
  return needles.map((needle) => {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const at = node.textContent!.indexOf(needle);
      if (at < 0) continue;
      const range = document.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + needle.length);
      const box = range.getBoundingClientRect();
      return { left: box.left, right: box.right };
    }
    throw new Error(`${needle} is not in ${root.tagName}`);
  });
}

/**
 * The least contrast between a color an element draws at its edge (its focus ring, or
 * its border) and what lies behind that edge, looked up at the middle of each side.
 */
function edgeContrast(el: Element, which: string): number {
  const parse = (c: string) => {
    const n = (c.match(/[\d.]+/g) ?? []).map(Number);
    return { rgb: n.slice(0, 3), alpha: n.length > 3 ? n[3]! : 1 };
  };
  const luminance = (rgb: number[]) => {
    const [r, g, b] = rgb.map((v) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const ratio = (a: number[], b: number[]) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi! + 0.05) / (lo! + 0.05);
  };
  const style = getComputedStyle(el);
  const color = parse(which === "outline" ? style.outlineColor : style.borderTopColor).rgb;
  const reach =
    which === "outline"
      ? Number.parseFloat(style.outlineOffset) + Number.parseFloat(style.outlineWidth) + 1
      : 1;
  const box = el.getBoundingClientRect();
  const points = [
    [box.left - reach, box.top + box.height / 2],
    [box.right + reach, box.top + box.height / 2],
    [box.left + box.width / 2, box.top - reach],
    [box.left + box.width / 2, box.bottom + reach],
  ].filter(([x, y]) => x! >= 0 && y! >= 0 && x! < window.innerWidth && y! < window.innerHeight);
  let least = Number.POSITIVE_INFINITY;
  for (const [x, y] of points) {
    const behind = document
      .elementsFromPoint(x!, y!)
      .filter((e) => e !== el && !el.contains(e))
      .map((e) => parse(getComputedStyle(e).backgroundColor))
      .find((c) => c.alpha === 1);
    least = Math.min(least, ratio(color, behind?.rgb ?? [255, 255, 255]));
  }
  return least;
}

describe("console in Chromium: phones and accessibility", function () {
  this.timeout(60_000);
  let platform: Platform;
  let browser: Browser;
  let base: string;
  let operator: ReturnType<typeof adminClient>;
  let receiver: Receiver;

  before(async function () {
    this.timeout(120_000);
    // Loopback egress: the webhooks screen shows a subscription to a receiver on this machine.
    platform = await startPlatform(
      {
        SANDBOX_ALLOW_LOOPBACK_FETCH: "true",
        WEBHOOK_POLL_MS: "20",
        // A plan whose users and webhooks limits the one user and subscription of `shop` reach: the
        // usage screen warns of both.
        PLANS: JSON.stringify({
          starter: { usersPerProject: 1, webhooksPerProject: 1, rowsPerTable: 1000, storedBytes: 50_000_000 },
        }),
        USAGE_FLUSH_MS: "100",
      },
      { console: true },
    );
    base = platform.baseUrl;
    operator = adminClient(base, platform.adminToken);
    await operator.send("PUT", "/accounts/acme", { displayName: "Acme" });
    await putAdmin(operator, "acme", "ann", "admin", "ann-secret-1");
    expect((await operator.putProject("acme", "shop", SHOP)).status).to.equal(201);
    await operator.putUser("acme", "shop", "alice", { password: "correct horse", roles: ["Full access"] });
    expect((await operator.send("PUT", "/accounts/acme/plan", { plan: "starter" })).status).to.equal(200);
    const seeder = await operator.createKey("acme", "shop", { name: "seeder", roles: ["Full access"] });
    await operator.createKey("acme", "shop", { name: BIDI_KEY_NAME, roles: ["Full access"] });
    const seeded = await projectClient(base, "acme", "shop").post(seeder.body.apikey, "customer", [
      { name: "Alpha Ltd", credit_limit: 1000, region: "north" },
      { name: "Beta GmbH", credit_limit: 500, region: "south_east" },
    ]);
    receiver = await startReceiver();
    const hook = await operator.send("POST", "/accounts/acme/projects/shop/webhooks", {
      url: receiver.url,
      tables: ["customer"],
      description: "CRM sync",
    });
    expect(hook.status, JSON.stringify(hook.body)).to.equal(201);
    expect(seeded.status, JSON.stringify(seeded.body)).to.equal(201);
    await projectClient(base, "acme", "shop").post(seeder.body.apikey, "customer", {
      name: "Gamma",
      credit_limit: 1,
    });
    await until("a delivery", async () => receiver.delivered().size === 1);
    expect((await operator.send("POST", "/accounts/acme/usage/measure")).status).to.equal(200);
    browser = await startBrowser({ bypassCSP: true, timezoneId: "Asia/Kolkata" });
  });

  after(async () => {
    await browser?.close();
    await receiver?.close();
    await platform?.close();
  });

  for (const size of SIZES) {
    describe(`at ${size.width}×${size.height}`, () => {
      let page: Page;
      const shot = (name: string) => `${size.name}-${name}`;

      before(async () => {
        page = await browser.newPage();
        await page.setViewportSize(size);
        page.setDefaultTimeout(10_000);
      });
      afterEach(async function () {
        if (this.currentTest?.state === "failed")
          await afterFailure(page, `failed-${size.name}-${this.currentTest.title.slice(0, 40)}`);
      });
      after(() => page.close());

      it("sign-in: titled, no axe violations, no sideways scrolling", async () => {
        await page.goto(`${base}/console/`);
        await page.getByLabel("Account", { exact: true }).waitFor();
        await expectGoodScreen(page, shot("sign-in"), "Sign in");
      });

      it("puts the focus on the Projects heading after signing in", async () => {
        await signIn(page, base, "ann", "ann-secret-1");
        expect(await focused(page)).to.equal("H1: Projects");
        await expectGoodScreen(page, shot("projects"), "Projects");
      });

      it("keeps every section of the top bar and Sign out on screen and usable", async () => {
        const bar = page.getByRole("banner");
        const controls = [
          ...(await bar.getByRole("navigation", { name: "Sections" }).getByRole("link").all()),
          bar.getByRole("button", { name: "Sign out" }),
        ];
        expect(controls).to.have.length(6);
        for (const control of controls) {
          const box = (await control.boundingBox())!;
          const name = (await control.textContent()) ?? "";
          expect(box.x, name).to.be.at.least(0);
          expect(box.x + box.width, name).to.be.at.most(size.width);
          expect(box.y + box.height).to.be.at.most(size.height);
        }
        await bar.getByRole("link", { name: "Administrators" }).click();
        await page.getByRole("heading", { name: "Administrators", level: 1 }).waitFor();
        expect(await focused(page)).to.equal("H1: Administrators");
        await expectGoodScreen(page, shot("administrators"), "Administrators");
      });

      it("audit trail", async () => {
        await page.getByRole("banner").getByRole("link", { name: "Audit trail" }).click();
        await page.locator("table.audit tbody tr").first().waitFor();
        expect(await focused(page)).to.equal("H1: Audit trail");
        await expectGoodScreen(page, shot("audit"), "Audit trail");
      });

      it("a project's definition, focused on its heading", async () => {
        await page.getByRole("banner").getByRole("link", { name: "Projects" }).click();
        await page.getByRole("link", { name: "shop", exact: true }).click();
        await page.getByRole("heading", { name: /shop · revision 1/ }).waitFor();
        expect(await focused(page)).to.equal("H1: shop · revision 1");
        await expectGoodScreen(page, shot("definition"), "shop: Definition");
      });

      it("revisions, and a revision's definition in a dialog whose scrolling text takes the keyboard", async () => {
        await page.getByRole("link", { name: "Revisions" }).click();
        await page.getByRole("button", { name: "View" }).first().waitFor();
        expect(await focused(page)).to.equal("H1: shop · revision 1");
        await expectGoodScreen(page, shot("revisions"), "shop: Revisions");
        await page.getByRole("button", { name: "View" }).first().click();
        const dialog = page.getByRole("dialog", { name: "Revision 1" });
        await dialog.getByText('"purchaseorder"', { exact: false }).waitFor();
        await expectGoodScreen(page, shot("revision-dialog"), "shop: Revisions");
        // The dialog opens on its Close button; the definition's text is the stop before it.
        await page.keyboard.press("Shift+Tab");
        const text = dialog.getByRole("region", { name: "Revision 1's definition" });
        expect(await text.evaluate((el) => el === document.activeElement)).to.equal(true);
        await page.keyboard.press("PageDown");
        await page.waitForFunction(() => (document.activeElement?.scrollTop ?? 0) > 0);
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });
      });

      it("users, with focus rings and input borders that stand out 3:1", async () => {
        await page.getByRole("link", { name: "Users" }).click();
        await page.getByRole("cell", { name: "alice", exact: true }).waitFor();
        expect(await focused(page)).to.equal("H1: shop · revision 1");
        await expectGoodScreen(page, shot("users"), "shop: Users");

        const borders: string[] = [];
        for (const input of await page.locator("main input:not([type=checkbox]), main select").all()) {
          const ratio = await input.evaluate(edgeContrast, "border");
          if (ratio < 3) borders.push(`${await input.getAttribute("id")}: ${ratio.toFixed(2)}`);
        }
        expect(borders, "input borders under 3:1").to.deep.equal([]);

        await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
        const rings: string[] = [];
        for (let stop = 0; stop < 30; stop++) {
          await page.keyboard.press("Tab");
          const current = page.locator(":focus");
          if ((await current.count()) === 0) continue;
          const ring = await current.evaluate((el) => {
            const style = getComputedStyle(el);
            return {
              what: `${el.tagName} ${(el.textContent || (el as HTMLInputElement).name || el.id).trim()}`,
              visible: style.outlineStyle !== "none" && Number.parseFloat(style.outlineWidth) >= 2,
            };
          });
          const ratio = await current.evaluate(edgeContrast, "outline");
          if (!ring.visible || ratio < 3) rings.push(`${ring.what}: ${ratio.toFixed(2)}`);
        }
        expect(rings, "focus rings under 3:1").to.deep.equal([]);
      });

      it("API keys, and the dialog that shows a new key", async () => {
        await page.getByRole("link", { name: "API keys" }).click();
        await page.getByRole("cell", { name: "seeder", exact: true }).waitFor();
        await expectGoodScreen(page, shot("api-keys"), "shop: API keys");
        await page.getByLabel("Name", { exact: true }).fill(`a key made on a ${size.name}`);
        await page.getByRole("checkbox", { name: "Full access" }).check();
        await page.getByRole("button", { name: "Create key" }).click();
        const dialog = page.getByRole("dialog");
        await dialog.getByText("This is the only time the key is shown").waitFor();
        await expectInsideViewport(page, "dialog");
        await expectGoodScreen(page, shot("key-created"), "shop: API keys");
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });
      });

      it("a question in a dialog (delete a key?)", async () => {
        await page
          .getByRole("row")
          .filter({ hasText: "seeder" })
          .getByRole("button", { name: /Delete/ })
          .click();
        const dialog = page.getByRole("dialog", { name: "Delete key seeder?" });
        await dialog.getByRole("button", { name: "Cancel" }).waitFor();
        await expectInsideViewport(page, "dialog");
        await expectGoodScreen(page, shot("confirm"), "shop: API keys");
        await dialog.getByRole("button", { name: "Cancel" }).click();
        await dialog.waitFor({ state: "detached" });
      });

      it("webhooks, with a subscription's delivery log", async () => {
        await page.getByRole("link", { name: "Webhooks" }).click();
        await page.getByRole("cell", { name: `${receiver.url} CRM sync` }).waitFor();
        await page.getByRole("button", { name: `Log and dead letters of ${receiver.url}` }).click();
        await page.getByRole("cell", { name: "delivered", exact: true }).waitFor();
        await expectGoodScreen(page, shot("webhooks"), "shop: Webhooks");
      });

      it("a project's settings, and the dialog that deletes a project by its typed name", async () => {
        await page.getByRole("link", { name: "Settings" }).click();
        await page.getByRole("heading", { name: "API documents" }).waitFor();
        expect(await focused(page)).to.equal("H1: shop · revision 1");
        await expectGoodScreen(page, shot("project-settings"), "shop: Settings");
        await page.getByRole("button", { name: "Delete project…" }).click();
        const dialog = page.getByRole("dialog", { name: "Delete project shop?" });
        await dialog.getByLabel("Type shop to confirm").waitFor();
        expect(
          await dialog.getByLabel("Type shop to confirm").evaluate((el) => el === document.activeElement),
        ).to.equal(true);
        await expectInsideViewport(page, "dialog");
        await expectGoodScreen(page, shot("delete-project"), "shop: Settings");
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });
      });

      it("changing a user: the form filled in, its focus on the first input", async () => {
        await page
          .getByRole("navigation", { name: "Project sections" })
          .getByRole("link", { name: "Users" })
          .click();
        await page.getByRole("button", { name: "Change alice" }).click();
        await page.getByRole("form", { name: "Change user alice" }).waitFor();
        expect(await focused(page)).to.equal("INPUT: ");
        await expectGoodScreen(page, shot("user-change"), "shop: Users");
      });

      it("the account: focused on its heading", async () => {
        await page
          .getByRole("banner")
          .getByRole("link", { name: /Your account/ })
          .click();
        await page.getByRole("heading", { name: "Account", level: 1 }).waitFor();
        expect(await focused(page)).to.equal("H1: Account");
        await page.getByLabel("Display name", { exact: true }).waitFor();
        await expectGoodScreen(page, shot("account"), "Account");
      });

      it("usage: the plan, its warning and the charts, focused on its heading", async () => {
        await page.getByRole("banner").getByRole("link", { name: "Usage" }).click();
        await page.getByRole("heading", { name: "Usage", level: 1 }).waitFor();
        expect(await focused(page)).to.equal("H1: Usage");
        const warning = page.getByRole("status").filter({ hasText: "Close to a limit" });
        await warning.getByText(/Users in a project in project shop: 1 of 1/).waitFor();
        await warning.getByText(/Webhook subscriptions in a project in project shop: 1 of 1/).waitFor();
        await page.locator(".usage-chart canvas").nth(4).waitFor();
        const charts = await page
          .locator(".usage-chart canvas")
          .evaluateAll((canvases) => canvases.map((c) => c.getBoundingClientRect().width));
        expect(charts).to.have.length(5);
        for (const width of charts) expect(width).to.be.within(200, size.width);
        const totals = (range: string) => page.locator("table").filter({ hasText: `Totals, ${range}` });
        await totals("last 24 hours").getByText("Writes").waitFor();
        await expectGoodScreen(page, shot("usage"), "Usage");
        await page.getByLabel("Range").selectOption("month");
        await totals("last 30 days").waitFor();
        await expectGoodScreen(page, shot("usage-month"), "Usage");
      });

      it("the audit trail's filters, each labelled", async () => {
        await page.getByRole("banner").getByRole("link", { name: "Audit trail" }).click();
        await page.getByLabel("Who").selectOption({ label: "The operator" });
        await page.getByLabel("Kind of change").selectOption({ label: "Users" });
        await page.getByRole("button", { name: "Show" }).click();
        await page.getByRole("cell", { name: /users\/alice/ }).waitFor();
        await expectGoodScreen(page, shot("audit-filtered"), "Audit trail");
      });

      it("a new project: Check changes without a name says so and sends nothing", async () => {
        await page.getByRole("banner").getByRole("link", { name: "Projects" }).click();
        await page.getByRole("link", { name: "New project" }).click();
        await page.getByRole("heading", { name: "New project", level: 1 }).waitFor();
        expect(await focused(page)).to.equal("H1: New project");
        const sent: string[] = [];
        const record = (r: { url: () => string }) => sent.push(r.url());
        page.on("request", record);
        await page.getByRole("button", { name: "Check changes (dry run)" }).click();
        const alert = page.getByRole("alert");
        await alert.getByText("Name the project first").waitFor();
        page.off("request", record);
        expect(sent.filter((u) => u.includes("/projects"))).to.deep.equal([]);
        expect(await alert.evaluate((el) => el === document.activeElement)).to.equal(true);
        await expectGoodScreen(page, shot("new-project"), "New project");
      });

      it("data explorer: login, focused on the data heading, the grid and the insert dialog inside the viewport", async () => {
        await page.getByRole("banner").getByRole("link", { name: "Data explorer" }).click();
        await page.getByRole("combobox", { name: "Project" }).selectOption("shop");
        await page.getByRole("button", { name: "Show the login form" }).click();
        await page.getByLabel("User name").fill("alice");
        await page.getByLabel("Password", { exact: true }).fill("correct horse");
        await expectGoodScreen(page, shot("explorer-login"), "Data explorer: log in");
        await page.getByLabel("Password", { exact: true }).press("Enter");
        await page.getByRole("heading", { name: "Data: acme / shop / v1" }).waitFor();
        expect(await focused(page)).to.equal("H1: Data: acme / shop / v1");
        await page.getByRole("link", { name: "customer", exact: true }).click();
        await page.getByRole("gridcell", { name: "Beta GmbH", exact: true }).waitFor();
        await expectGoodScreen(page, shot("explorer-grid"), "Data: acme / shop / v1");
        await page
          .getByRole("row")
          .filter({ hasText: "Beta GmbH" })
          .getByRole("button", { name: "Open" })
          .click();
        await page
          .getByRole("region", { name: /^Row/ })
          .getByLabel("credit_limit", { exact: true })
          .waitFor();
        await expectGoodScreen(page, shot("explorer-row"), "Data: acme / shop / v1");

        await page.getByRole("button", { name: "New row" }).click();
        const dialog = page.getByRole("dialog", { name: "New row in customer" });
        await dialog.getByLabel("credit_limit", { exact: true }).waitFor();
        await expectInsideViewport(page, "dialog");
        await expectGoodScreen(page, shot("explorer-insert"), "Data: acme / shop / v1");
        await page.keyboard.press("Escape");
        await dialog.waitFor({ state: "detached" });
        await page.getByRole("button", { name: "Log out of the project" }).click();
        await page.getByRole("alert").getByText("You have signed out of your data session.").waitFor();
      });

      it("data explorer without an administrator's session", async () => {
        const visitor = await browser.newPage();
        try {
          await visitor.setViewportSize(size);
          await visitor.goto(`${base}/console/#/explorer`);
          await visitor.getByRole("heading", { name: "Data explorer", level: 1 }).waitFor();
          expect(await focused(visitor)).to.equal("H1: Data explorer");
          await expectGoodScreen(visitor, shot("explorer-visitor"), "Data explorer: log in");
        } catch (err) {
          // What the visitor's tab showed (afterEach shows the administrator's tab).
          await afterFailure(visitor, `failed-${size.name}-explorer-visitor`);
          throw err;
        } finally {
          await visitor.close();
        }
      });
    });
  }

  describe("details", () => {
    let page: Page;
    before(async () => {
      page = await browser.newPage();
      page.setDefaultTimeout(10_000);
      await signIn(page, base, "ann", "ann-secret-1");
    });
    afterEach(async function () {
      if (this.currentTest?.state === "failed")
        await afterFailure(page, `failed-details-${this.currentTest.title.slice(0, 40)}`);
    });
    after(() => page.close());

    it("opens a dialog whose text scrolls with that text already a region in the tab order (from its first frame)", async () => {
      // What each dialog's scrolling text was when the dialog first drew: looked at in the first
      // animation frame after it opened (frames run before resize observers, so a box measured only
      // by an observer is not yet a region there; axe-core, a keystroke or a test can come then).
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { firstFrames: string[] }).firstFrames = seen;
        new MutationObserver((changes) => {
          for (const change of changes) {
            const dialog = change.target as HTMLDialogElement;
            if (change.attributeName !== "open" || !dialog.open) continue;
            requestAnimationFrame(() => {
              const box = dialog.querySelector(".scroll");
              const scrolls = box !== null && box.scrollHeight > box.clientHeight;
              seen.push(
                `${scrolls ? "scrolls" : "fits"} ${box?.getAttribute("role")} ${box?.getAttribute("tabindex")}`,
              );
            });
          }
        }).observe(document, { attributes: true, attributeFilter: ["open"], subtree: true });
      });
      await page.getByRole("banner").getByRole("link", { name: "Projects" }).click();
      await page.getByRole("link", { name: "shop", exact: true }).click();
      await page.getByRole("link", { name: "Revisions" }).click();
      await page.getByRole("button", { name: "View" }).first().click();
      const dialog = page.getByRole("dialog", { name: "Revision 1" });
      await dialog.getByText('"purchaseorder"', { exact: false }).waitFor();
      await page.waitForFunction(
        () => (window as unknown as { firstFrames: string[] }).firstFrames.length > 0,
      );
      const frames = await page.evaluate(() => (window as unknown as { firstFrames: string[] }).firstFrames);
      expect(frames).to.deep.equal(["scrolls region 0"]);
      await page.keyboard.press("Escape");
      await dialog.waitFor({ state: "detached" });
    });

    it("says it is loading (aria-busy) and offers Retry when a load fails", async () => {
      let held: Route | undefined;
      let release: () => void = () => {};
      const arrived = new Promise<void>((resolve) => {
        release = resolve;
      });
      await page.route("**/admin/v1/accounts/acme/admins", async (route) => {
        if (route.request().method() !== "GET") return route.continue();
        held = route;
        release();
      });
      await page.getByRole("banner").getByRole("link", { name: "Administrators" }).click();
      await arrived;
      const screen = page.getByRole("region", { name: "Administrators" });
      expect(await screen.getAttribute("aria-busy")).to.equal("true");
      await page.getByRole("status").getByText("Loading administrators…").waitFor();

      await held!.fulfill({
        status: 503,
        contentType: "application/json",
        body: JSON.stringify({
          statusCode: 503,
          errorCode: 5030,
          errorMessage: "Unavailable",
          requestId: "r1",
        }),
      });
      await page.unroute("**/admin/v1/accounts/acme/admins");
      const alert = page.getByRole("alert");
      await alert.getByText("Unavailable").waitFor();
      expect(await screen.getAttribute("aria-busy")).to.not.equal("true");
      await alert.getByRole("button", { name: "Retry" }).click();
      await page.getByRole("cell", { name: "ann", exact: true }).waitFor();
      expect(await screen.getAttribute("aria-busy")).to.not.equal("true");
      expect(await page.getByRole("alert").count()).to.equal(0);
    });

    it("announces the page it turns to (a status)", async () => {
      for (let i = 0; i < 11; i++) await operator.send("PUT", "/accounts/acme", { displayName: `Acme ${i}` });
      await page.getByRole("banner").getByRole("link", { name: "Audit trail" }).click();
      await page.getByLabel("Entries per page").selectOption("10");
      await page.getByRole("button", { name: "Show" }).click();
      const pages = page.getByRole("navigation", { name: "Audit pages" });
      await pages.getByRole("status").getByText("Page 1").waitFor();
      await pages.getByRole("button", { name: "Next page →" }).click();
      await pages.getByRole("status").getByText("Page 2").waitFor();
    });

    it("says UTC wherever it shows or asks for a time (in a browser that is not on UTC)", async () => {
      await page.goto(`${base}/console/#/projects/shop/keys`);
      await page.getByRole("cell", { name: "seeder", exact: true }).waitFor();
      await page.getByLabel("Name", { exact: true }).fill("expires in 2030");
      await page.getByLabel("Expires (UTC)").fill("2030-01-01T12:00");
      await page.getByRole("checkbox", { name: "Full access" }).check();
      await page.getByRole("button", { name: "Create key" }).click();
      await page.getByRole("dialog").getByText("This is the only time the key is shown").waitFor();
      await page.keyboard.press("Escape");
      const keys = await operator.listKeys("acme", "shop");
      const made = keys.body.find((k: { name: string }) => k.name === "expires in 2030");
      expect(new Date(`${made.expiration.replace(/Z$/, "")}Z`).toISOString()).to.equal(
        "2030-01-01T12:00:00.000Z",
      );
      const row = page.getByRole("row").filter({ hasText: "expires in 2030" });
      await row.getByText("2030-01-01 12:00:00 UTC").waitFor();

      await page.getByRole("banner").getByRole("link", { name: "Audit trail" }).click();
      await page.getByLabel("From (UTC)").waitFor();
      await page.locator("table.audit tbody tr").first().waitFor();
      const times = await page.locator("main time").allTextContents();
      expect(times.length).to.be.greaterThan(0);
      for (const t of times) expect(t).to.match(/ UTC$/);
    });

    it("isolates bidirectional text: a name with a right-to-left override does not reorder what follows it", async () => {
      await page.goto(`${base}/console/#/projects/shop/keys`);
      const row = page.getByRole("row").filter({ hasText: "nightly" });
      await row.waitFor();
      // A dialog's title naming the key ends with its question mark.
      await row.getByRole("button", { name: /Delete/ }).click();
      const title = page.getByRole("dialog").getByRole("heading");
      const [name, question] = await title.evaluate(textBoxes, ["nightly", "?"]);
      expect(question!.left, "the question mark ends the title").to.be.at.least(name!.right - 1);
      await page.keyboard.press("Escape");
    });

    it("draws underscores in the monospace Filter input at 1× (the default monospace font)", async () => {
      await page.goto(`${base}/console/#/explorer`);
      await page.getByRole("combobox", { name: "Project" }).selectOption("shop");
      await page.getByRole("button", { name: "Show the login form" }).click();
      await page.getByLabel("User name").fill("alice");
      await page.getByLabel("Password", { exact: true }).fill("correct horse");
      await page.getByLabel("Password", { exact: true }).press("Enter");
      await page.getByRole("link", { name: "customer", exact: true }).click();
      const filter = page.getByLabel("Filter");
      const inkOf = async (value: string) => {
        await filter.fill(value);
        await filter.evaluate((el: HTMLInputElement) => el.blur());
        const png = (await filter.screenshot()).toString("base64");
        return page.evaluate(async (data) => {
          const image = new Image();
          image.src = `data:image/png;base64,${data}`;
          await image.decode();
          const canvas = document.createElement("canvas");
          canvas.width = image.width;
          canvas.height = image.height;
          const context = canvas.getContext("2d")!;
          context.drawImage(image, 0, 0);
          // Inside the border only: the pixels the text darkens visibly (below 200 of 255, on white).
          const { data: pixels } = context.getImageData(3, 3, image.width - 6, image.height - 6);
          let ink = 0;
          for (let i = 0; i < pixels.length; i += 4)
            if (pixels[i]! + pixels[i + 1]! + pixels[i + 2]! < 600) ink++;
          return ink;
        }, png);
      };
      const blank = await inkOf("          ");
      const underscores = await inkOf("__________");
      expect(underscores - blank, "pixels drawn by ten underscores").to.be.at.least(30);
    });
  });
});

/** The element (a dialog) lies wholly inside the viewport, and nothing in it scrolls sideways. */
async function expectInsideViewport(page: Page, selector: string): Promise<void> {
  const fit = await page.locator(selector).evaluate((el) => {
    const box = el.getBoundingClientRect();
    return {
      inside:
        box.left >= 0 && box.top >= 0 && box.right <= window.innerWidth && box.bottom <= window.innerHeight,
      box: `${box.left},${box.top} ${box.width}×${box.height} in ${window.innerWidth}×${window.innerHeight}`,
      sideways: el.scrollWidth > el.clientWidth,
    };
  });
  expect(fit.inside, fit.box).to.equal(true);
  expect(fit.sideways, "the dialog scrolls sideways").to.equal(false);
}
