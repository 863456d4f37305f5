/// <reference lib="dom" />
// The functions given to page.evaluate run in the browser: they see its window and document.
/**
 * The definition editor (CodeMirror) in a real headless Chromium against the real
 * platform, with the console's policy in force: a schema mistake is marked in the text
 * and listed as it is typed; completion offers the property names the server's schema
 * allows; a problem of the server's dry run far down a long definition scrolls into
 * view, selected, and is marked in the text; a draft survives a reload; Tab indents and
 * Escape-then-Tab leaves; the browser refuses nothing under the policy; the editor fits a phone.
 */
import { expect } from "chai";
import type { Page } from "playwright-core";
import { demoProject } from "../../fixtures/demo-project.ts";
import { putAdmin } from "../../support/admins.ts";
import {
  afterFailure,
  type Browser,
  PHONE,
  screenshot,
  signIn,
  startBrowser,
} from "../../support/browser.ts";
import {
  editorSelection,
  editorText,
  replaceEditorText,
  untilEditorText,
} from "../../support/code-editor.ts";
import { adminClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";
import { until } from "../../support/until.ts";

/** The demo project and 40 more tables, so its end is far below the editor's first screen. */
function longProject() {
  const demo = demoProject();
  const tables: Record<string, unknown> = { ...demo.tables };
  for (let i = 0; i < 40; i++) {
    tables[`extra${i}`] = { key: ["id"], columns: { id: { type: "integer" }, label: { type: "string" } } };
  }
  return { ...demo, tables };
}

describe("console in Chromium: the definition editor", function () {
  this.timeout(60_000);
  let platform: Platform;
  let browser: Browser;
  let page: Page;
  let operator: ReturnType<typeof adminClient>;
  /** What the browser said about the console's policy (Content-Security-Policy, Trusted Types). */
  const policyComplaints: string[] = [];
  const editor = () => page.getByLabel("Definition (JSON)");

  before(async function () {
    this.timeout(120_000);
    platform = await startPlatform({}, { console: true });
    operator = adminClient(platform.baseUrl, platform.adminToken);
    await operator.send("PUT", "/accounts/acme", {});
    await putAdmin(operator, "acme", "ann", "admin", "ann-secret-1");
    expect((await operator.putProject("acme", "long", longProject())).status).to.equal(201);
    browser = await startBrowser();
    page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    page.on("console", (message) => {
      if (/Content Security Policy|Trusted Type|style-src/i.test(message.text()))
        policyComplaints.push(message.text());
    });
    await signIn(page, platform.baseUrl, "ann", "ann-secret-1");
  });

  afterEach(async function () {
    if (this.currentTest?.state === "failed")
      await afterFailure(page, `failed-editor-${this.currentTest.title.slice(0, 40)}`);
  });

  after(async () => {
    await browser?.close();
    await platform?.close();
  });

  async function openLong(): Promise<void> {
    await page.goto(`${platform.baseUrl}/console/#/projects/long`);
    await page.getByRole("heading", { name: /long · revision/ }).waitFor();
    await editor().waitFor();
  }

  it("marks a schema mistake in the text as it is typed, lists it, and selects it when chosen", async () => {
    await openLong();
    const broken = { ...longProject(), colour: "blue" };
    const customer = broken.tables.customer as { columns: Record<string, unknown> };
    customer.columns.region = { type: "txt" };
    await replaceEditorText(editor(), JSON.stringify(broken, null, 2));
    const listed = page.getByRole("region", { name: "2 problems in the text" });
    await listed.waitFor();
    const typeProblem = page.getByRole("button", { name: /\$\.tables\.customer\.columns\.region\.type/ });
    expect(await listed.locator("li").filter({ has: typeProblem }).textContent()).to.contain(
      'must be one of "string", "number"',
    );
    expect(await listed.getByText("unknown field 'colour'").count()).to.equal(1);
    // Inline: a marker in the lint gutter and the mistaken value underlined.
    await page.locator(".cm-lint-marker-error").first().waitFor();
    expect(await page.locator(".cm-lintRange-error", { hasText: '"colour"' }).count()).to.equal(1);
    await screenshot(page, "definition-editor-problems");

    await listed.getByRole("button", { name: /\$\.colour/ }).click();
    expect(await editorSelection(editor())).to.equal('"colour"');
    await expectSelectionInView(page);
  });

  it("completes property names from the server's schema, leaving out those already there", async () => {
    await openLong();
    await replaceEditorText(editor(), '{\n  "tables": {\n    "t": {\n      "key": ["id"],\n      ');
    await page.keyboard.type('"');
    const list = page.locator(".cm-tooltip-autocomplete");
    await list.waitFor();
    const offered = await list.locator(".cm-completionLabel").allTextContents();
    expect(offered).to.have.members(["columns", "parents", "indexes"]);
    await screenshot(page, "definition-editor-completion");
    await page.keyboard.type("col");
    // Narrowed to what was typed: the one name left is chosen with Enter.
    await until(
      "only 'columns' offered",
      async () => {
        const left = await list.locator(".cm-completionLabel").allTextContents();
        return left.length === 1 && left[0] === "columns";
      },
      5_000,
    );
    await page.keyboard.press("Enter");
    await until(
      "the chosen name in the text",
      async () => (await editorText(editor())).endsWith('"key": ["id"],\n      "columns": '),
      5_000,
    );
    // And values: a column's type.
    await page.keyboard.type('{"c": {"type": "da');
    await list.locator("li", { hasText: '"datetime"' }).waitFor();
  });

  it("scrolls to and selects a problem the dry run found far down the text", async () => {
    await openLong();
    const project = longProject();
    // A mistake only the server sees (the key names no column), in the last table.
    (project.tables.extra39 as { key: string[] }).key = ["nope"];
    const text = JSON.stringify(project, null, 2);
    await replaceEditorText(editor(), text);
    await page.keyboard.press("Control+Home");
    // The text is well-formed and fits the schema: only the server finds the mistake.
    await until(
      "no problems listed for the text",
      async () => (await page.getByRole("region", { name: /problems? in the text/ }).count()) === 0,
      5_000,
    );
    await page.getByRole("button", { name: "Check changes (dry run)" }).click();
    const problem = page
      .getByRole("list", { name: "Problems" })
      .getByRole("button", { name: /\$\.tables\.extra39\.key\[0\]/ });
    await problem.waitFor();
    const line = text.slice(0, text.indexOf('"nope"')).split("\n").length;
    expect(await problem.textContent()).to.contain(`(line ${line})`);
    await problem.click();
    expect(await editorSelection(editor())).to.equal('"nope"');
    await expectSelectionInView(page);
    expect(await inEditor(page)).to.equal(true);
    // Marked in the text too, until the text changes.
    const mark = page.locator(".cm-lintRange-error", { hasText: '"nope"' });
    await mark.waitFor();
    await page.keyboard.press("End");
    await page.keyboard.type(" ");
    await mark.waitFor({ state: "detached" });
  });

  it("keeps the text as a draft across a reload of the page; a discarded one is gone, even for undo", async () => {
    await openLong();
    const draft = JSON.stringify({ ...longProject(), description: "typed before the reload" }, null, 2);
    await replaceEditorText(editor(), draft);
    await page.reload();
    await page.getByRole("status").getByText("Your unsaved changes are back").waitFor();
    await untilEditorText(editor(), "the draft is back in the editor", (text) => text === draft);
    await page.getByRole("button", { name: "Discard my changes" }).click();
    await untilEditorText(
      editor(),
      "the stored text replaces the draft",
      (text) => !text.includes("typed before the reload"),
    );
    // The discarded text starts afresh: undo does not bring the draft back.
    await editor().focus();
    await page.keyboard.press("ControlOrMeta+z");
    expect(await editorText(editor())).to.not.contain("typed before the reload");
    expect(await page.getByRole("status").getByText("Your unsaved changes are back").count()).to.equal(0);
  });

  it("indents with Tab, and lets Escape then Tab move on, as the hint says", async () => {
    await openLong();
    await page.getByText("press Esc, then Tab").waitFor();
    await editor().click();
    await page.keyboard.press("Control+Home");
    const before = await editorText(editor());
    await page.keyboard.press("Tab");
    expect(await editorText(editor())).to.not.equal(before);
    expect(await inEditor(page)).to.equal(true);
    await page.keyboard.press("Escape");
    await page.keyboard.press("Tab");
    expect(await inEditor(page)).to.equal(false);
    expect(await page.evaluate(() => document.activeElement?.textContent)).to.equal(
      "Check changes (dry run)",
    );
  });

  it("works within the console's policy: the browser refused nothing (its styles are an adopted sheet)", async () => {
    await openLong();
    const styled = await page
      .locator(".cm-gutters")
      .evaluate(
        (gutters) =>
          getComputedStyle(gutters).display === "flex" && gutters.getBoundingClientRect().width > 0,
      );
    expect(styled, "CodeMirror's own styles apply").to.equal(true);
    expect(policyComplaints).to.deep.equal([]);
  });

  it("fits a phone: no sideways scrolling, long lines wrapped", async () => {
    const phone = await browser.newPage();
    await phone.setViewportSize(PHONE);
    await signIn(phone, platform.baseUrl, "ann", "ann-secret-1");
    await phone.goto(`${platform.baseUrl}/console/#/projects/long`);
    const text = phone.getByLabel("Definition (JSON)");
    await text.waitFor();
    await replaceEditorText(
      text,
      JSON.stringify({ ...longProject(), description: "a long line ".repeat(30) }, null, 2),
    );
    const widths = await phone.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      view: innerWidth,
    }));
    expect(widths.page).to.be.at.most(widths.view);
    const box = (await text.boundingBox())!;
    expect(box.x + box.width).to.be.at.most(PHONE.width);
    await screenshot(phone, "phone-definition-editor");
    await phone.close();
  });
});

/** The selection's line is drawn, inside the editor's visible box. */
async function expectSelectionInView(page: Page): Promise<void> {
  const placed = await page.locator(".cm-scroller").evaluate((scroller) => {
    const root = scroller.getRootNode() as ShadowRoot;
    const selection = (root as unknown as { getSelection?: () => Selection | null }).getSelection?.();
    const range = selection?.rangeCount ? selection.getRangeAt(0) : undefined;
    if (!range) return { ok: false, why: "no selection in the editor" };
    const at = range.getBoundingClientRect();
    const box = scroller.getBoundingClientRect();
    return {
      ok: at.top >= box.top && at.bottom <= box.bottom && at.height > 0,
      why: JSON.stringify({ at, box }),
    };
  });
  expect(placed.ok, placed.why).to.equal(true);
}

/** Whether the keyboard focus is in the code editor. */
const inEditor = (page: Page) =>
  page.evaluate(
    () => document.activeElement?.shadowRoot?.activeElement?.classList.contains("cm-content") ?? false,
  );
