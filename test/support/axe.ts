/// <reference lib="dom" />
// The function given to page.evaluate runs in the browser: it sees its window and document.
/**
 * axe-core's violations of any impact (minor, moderate, serious, critical) on a page as it
 * is now: the console has none. axe-core is injected
 * into the page, which the console's policy forbids: use it in a browser started with
 * `bypassCSP` (test/support/browser.ts).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

export async function axeViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate(() => "axe" in window))) await page.addScriptTag({ content: axeSource });
  return page.evaluate(async () => {
    type Violation = { id: string; help: string; impact: string; nodes: { target: string[] }[] };
    const axe = (
      window as unknown as { axe: { run: (c: unknown, o: unknown) => Promise<{ violations: Violation[] }> } }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map(
      (v) => `${v.id} [${v.impact}] (${v.help}): ${v.nodes.map((n) => n.target.join(" ")).join(" | ")}`,
    );
  });
}
