/**
 * A real headless Chromium (Debian's /usr/bin/chromium, never a downloaded build)
 * driven by playwright-core, with a fresh profile per browser. Screenshots go to
 * test-output/console/ (ignored by git).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { type BrowserContext, chromium, type Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const SCREENSHOTS = path.resolve(import.meta.dirname, "../../test-output/console");

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** The two sizes the console is tested at: a laptop, and a phone held upright. */
export const DESKTOP = { width: 1366, height: 900 };
export const PHONE = { width: 390, height: 844 };

export interface Browser {
  context: BrowserContext;
  /** A new tab (its own sessionStorage). */
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

export interface BrowserOptions {
  /**
   * Lets a test inject a script (axe-core) although the console's policy forbids it. Only
   * for a browser of its own: the policy's tests run where the policy is in force.
   */
  bypassCSP?: boolean;
  /** The browser's time zone (default UTC). */
  timezoneId?: string;
}

export async function startBrowser(options: BrowserOptions = {}): Promise<Browser> {
  const profile = mkdtempSync(path.join(tmpdir(), "tessera-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: DESKTOP,
    locale: "en-GB",
    timezoneId: options.timezoneId ?? "UTC",
    bypassCSP: options.bypassCSP ?? false,
  });
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Saves a full-page screenshot as test-output/console/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/**
 * After a failed test on a page the next tests go on using: saves its screenshot, then closes
 * any dialog it left open (a modal takes every click), so that one failure stays one failure
 * instead of failing every later test of the page on "dialog intercepts pointer events".
 */
export async function afterFailure(page: Page, name: string): Promise<void> {
  await screenshot(page, name);
  await page.evaluate(() => {
    for (const dialog of Array.from(document.querySelectorAll("dialog[open]")))
      (dialog as HTMLDialogElement).close();
  });
}

/** Signs an administrator of an account (acme unless named) in to the console, and waits for the projects. */
export async function signIn(
  page: Page,
  base: string,
  login: string,
  password: string,
  account = "acme",
): Promise<void> {
  await page.goto(`${base}/console/`);
  await page.getByLabel("Account", { exact: true }).fill(account);
  await page.getByLabel("Login", { exact: true }).fill(login);
  await page.getByLabel("Password", { exact: true }).fill(password);
  await page.getByLabel("Password", { exact: true }).press("Enter");
  await page.getByRole("heading", { name: "Projects" }).waitFor();
}
