/// <reference lib="dom" />
// The functions given to page.evaluate run in the browser: they see its window and document.
/** What the explorer's browser tests share: the two sizes, the page check, a project user's login. */
import { expect } from "chai";
import type { Page } from "playwright-core";
import { putAdmin } from "./admins.ts";
import { axeViolations } from "./axe.ts";
import { DESKTOP, PHONE, screenshot } from "./browser.ts";
import { adminClient } from "./http.ts";
import { type Platform, startPlatform } from "./platform.ts";

export const SIZES = [
  { name: "desktop", ...DESKTOP },
  { name: "phone", ...PHONE },
];

/** axe-core finds nothing (of any impact), the page does not scroll sideways; and a screenshot. */
export async function expectGood(page: Page, shot: string): Promise<void> {
  expect(await axeViolations(page), "axe-core violations of any impact").to.deep.equal([]);
  const width = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  expect(width[0], "the page is no wider than the viewport").to.be.at.most(width[1]!);
  await screenshot(page, shot);
}

/** Logs a project user in through the explorer's login form, and waits for the project's tables. */
export async function logInToProject(
  page: Page,
  base: string,
  project: string,
  user: { name: string; password: string },
): Promise<void> {
  await page.goto(`${base}/console/#/explorer`);
  await page.getByLabel("Account", { exact: true }).fill("acme");
  await page.getByLabel("Project", { exact: true }).fill(project);
  await page.getByRole("button", { name: "Show the login form" }).click();
  await page.getByLabel("User name").fill(user.name);
  await page.getByLabel("Password", { exact: true }).fill(user.password);
  await page.getByLabel("Password", { exact: true }).press("Enter");
  await page.getByRole("heading", { name: `Data: acme / ${project} / v1` }).waitFor();
}

export interface ExplorerPlatform {
  platform: Platform;
  base: string;
  /** A key of the project with full access, for seeding and checking rows. */
  seederKey: string;
}

/**
 * The platform with the console, account acme with its admin ann (`ann-secret-1`), and a
 * project of the definition given with the user alice (`correct horse`, full access).
 */
export async function startExplorerPlatform(project: string, definition: unknown): Promise<ExplorerPlatform> {
  const platform = await startPlatform({}, { console: true });
  const base = platform.baseUrl;
  const operator = adminClient(base, platform.adminToken);
  await operator.send("PUT", "/accounts/acme", { displayName: "Acme" });
  await putAdmin(operator, "acme", "ann", "admin", "ann-secret-1");
  expect((await operator.putProject("acme", project, definition)).status).to.equal(201);
  await operator.putUser("acme", project, "alice", { password: "correct horse", roles: ["Full access"] });
  const seederKey = (await operator.createKey("acme", project, { name: "seeder", roles: ["Full access"] }))
    .body.apikey;
  return { platform, base, seederKey };
}

/**
 * Registers mocha hooks for a describe block at one size: a tab of that size, opened with
 * `open` (a login, say); a screenshot of each failed test (`failed-<what>-<size>-…`); the
 * tab closed after. Returns the tab (once the hooks ran).
 */
export function tabAtSize(
  newPage: () => Promise<Page>,
  size: (typeof SIZES)[number],
  what: string,
  open: (page: Page) => Promise<void>,
): () => Page {
  let page: Page | undefined;
  before(async () => {
    page = await newPage();
    await page.setViewportSize(size);
    page.setDefaultTimeout(15_000);
    await open(page);
  });
  afterEach(async function () {
    if (page && this.currentTest?.state === "failed")
      await screenshot(page, `failed-${what}-${size.name}-${this.currentTest.title.slice(0, 40)}`);
  });
  after(() => page?.close());
  return () => {
    if (!page) throw new Error("The tab is opened by the describe block's before hook");
    return page;
  };
}
