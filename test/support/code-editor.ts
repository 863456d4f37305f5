/// <reference lib="dom" />
/**
 * The console's code editor (CodeMirror 6) in browser tests. CodeMirror draws only the
 * lines in view, so its whole text and its selection are read from its state, through
 * the view CodeMirror keeps on its content element (what `EditorView.findFromDOM` reads).
 */
import type { Locator } from "playwright-core";
import { until } from "./until.ts";

interface ViewLike {
  state: { doc: { toString(): string }; selection: { main: { from: number; to: number } } };
}

/** The editor's whole text; `editor` is its content element (`getByLabel("Definition (JSON)")`). */
export function editorText(editor: Locator): Promise<string> {
  return editor.evaluate((el) => {
    const view = (el as unknown as { cmTile?: { root?: { view?: ViewLike } } }).cmTile?.root?.view;
    if (!view) throw new Error("no CodeMirror view on this element");
    return view.state.doc.toString();
  });
}

/** The text the editor has selected. */
export function editorSelection(editor: Locator): Promise<string> {
  return editor.evaluate((el) => {
    const view = (el as unknown as { cmTile?: { root?: { view?: ViewLike } } }).cmTile?.root?.view;
    if (!view) throw new Error("no CodeMirror view on this element");
    const { from, to } = view.state.selection.main;
    return view.state.doc.toString().slice(from, to);
  });
}

/**
 * Replaces the editor's whole text as a person would: select all (Ctrl-A), then paste.
 * (Playwright's `fill` selects only the lines CodeMirror has drawn, so on a long text it
 * would replace part of it.)
 */
export async function replaceEditorText(editor: Locator, text: string): Promise<void> {
  await editor.focus();
  await editor.press("ControlOrMeta+a");
  await editor.evaluate((el, pasted) => {
    const data = new DataTransfer();
    data.setData("text/plain", pasted);
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, text);
}

/**
 * Waits until the editor's whole text satisfies `holds`: a text put in from outside (a
 * load, a discarded draft) reaches the editor after the console re-renders, not at once.
 */
export async function untilEditorText(
  editor: Locator,
  what: string,
  holds: (text: string) => boolean,
): Promise<string> {
  let text = "";
  await until(what, async () => {
    text = await editorText(editor);
    return holds(text);
  });
  return text;
}
