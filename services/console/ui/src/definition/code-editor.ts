/**
 * The definition's code editor: CodeMirror 6 with JSON highlighting, inline problems
 * (JSON syntax and the server's definition schema, text-problems.ts) in a lint gutter,
 * and completion of property names and values from that schema (completion.ts).
 * Loaded on demand (a chunk of its own), so other screens do not carry it.
 *
 * It lives in a shadow root: CodeMirror writes its styles at run time, and into a
 * shadow root it adopts them as a constructed style sheet, which the console's
 * policy (`style-src 'self'`, no inline `<style>`) lets through.
 *
 * Keyboard: Tab indents; Escape then Tab (or Ctrl-M, which switches Tab to moving
 * the focus) leaves the editor, as CodeMirror does by default. Ctrl-Space completes.
 */
import {
  autocompletion,
  type CompletionContext,
  type CompletionResult,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
} from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { json } from "@codemirror/lang-json";
import {
  bracketMatching,
  defaultHighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from "@codemirror/language";
import { type Diagnostic, linter, lintGutter } from "@codemirror/lint";
import { EditorSelection, EditorState, StateEffect } from "@codemirror/state";
import {
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { offersAt } from "./completion.ts";
import type { JsonSchema } from "./json-schema.ts";
import { type TextProblem, textProblems } from "./text-problems.ts";

export interface CodeEditorOptions {
  text: string;
  /** The editor's accessible name. */
  label: string;
  readOnly: boolean;
  onChange: (text: string) => void;
  /** The text's own problems, each time they are checked (shortly after typing stops). */
  onProblems: (problems: TextProblem[]) => void;
}

export interface CodeEditor {
  /** Replaces the whole text (a newly loaded revision, a discarded draft), with a fresh undo history; no change event. */
  setText(text: string): void;
  /** The schema to complete and check with (it arrives after the editor). */
  setSchema(schema: JsonSchema | undefined): void;
  /**
   * The server's problems (its dry run's) with their spans in `text`: marked like the
   * editor's own while the text is exactly that one.
   */
  setServerProblems(text: string, problems: { from: number; to: number; message: string }[]): void;
  /** Selects a span, scrolls it into the middle of the view and focuses the editor. */
  select(from: number, to: number): void;
  destroy(): void;
}

/** The console's colours (styles.css's custom properties reach into the shadow root). */
const theme = EditorView.theme({
  "&": {
    border: "1px solid var(--field-line)",
    borderRadius: "4px",
    background: "var(--panel)",
    color: "var(--text)",
    fontSize: "0.875rem",
    height: "min(32rem, 70vh)",
  },
  "&.cm-focused": { outline: "3px solid var(--focus)", outlineOffset: "2px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "1.5" },
  ".cm-gutters": { background: "var(--bg)", color: "var(--muted)", borderRight: "1px solid var(--line)" },
  ".cm-activeLine": { background: "#f2f6ff" },
  ".cm-activeLineGutter": { background: "#e3eafb", color: "var(--text)" },
  ".cm-tooltip": { fontSize: "0.875rem" },
  ".cm-tooltip-autocomplete > ul > li[aria-selected]": { background: "var(--focus)", color: "#fff" },
  ".cm-completionDetail": { color: "var(--muted)", fontStyle: "normal", marginLeft: "0.75em" },
  "li[aria-selected] .cm-completionDetail": { color: "#fff" },
});

/** Asks for the text to be checked again (the schema or the server's problems changed). */
const checkAgain = StateEffect.define<null>();

export function createCodeEditor(host: HTMLElement, options: CodeEditorOptions): CodeEditor {
  const shadow = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  let schema: JsonSchema | undefined;
  let server: { text: string; problems: { from: number; to: number; message: string }[] } | undefined;

  const problems = (view: EditorView): Diagnostic[] => {
    const text = view.state.doc.toString();
    const found = textProblems(schema, text);
    options.onProblems(found);
    const own = found.map((p) => ({
      from: p.from,
      to: p.to,
      message: p.kind === "syntax" ? p.message : `${p.path}: ${p.message}`,
    }));
    const fromServer = server?.text === text ? server.problems : [];
    return [...own, ...fromServer].map((p) => ({
      from: Math.min(p.from, text.length),
      to: Math.min(p.to, text.length),
      severity: "error",
      message: p.message,
    }));
  };

  const complete = (context: CompletionContext): CompletionResult | null => {
    if (!schema) return null;
    const offers = offersAt(schema, context.state.doc.toString(), context.pos);
    if (!offers) return null;
    // Typing starts completion only on a word or a quote; Ctrl-Space asks anywhere.
    if (!context.explicit && offers.from === offers.to && offers.to === context.pos) return null;
    return {
      from: offers.from,
      to: offers.to,
      options: offers.options.map((o) => ({
        label: o.label,
        apply: o.apply,
        detail: o.detail,
        info: o.info,
        type: o.kind === "property" ? "property" : "enum",
      })),
      // Already narrowed to what was typed (completion.ts); asked again at each keystroke.
      filter: false,
    };
  };

  const extensions = [
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightActiveLine(),
    history(),
    indentOnInput(),
    bracketMatching(),
    closeBrackets(),
    json(),
    syntaxHighlighting(defaultHighlightStyle, { fallback: true }),
    linter(problems, {
      delay: 250,
      needsRefresh: (update) => update.transactions.some((tr) => tr.effects.some((e) => e.is(checkAgain))),
    }),
    lintGutter(),
    autocompletion({ override: [complete], icons: false }),
    keymap.of([
      ...closeBracketsKeymap,
      ...defaultKeymap,
      ...historyKeymap,
      ...completionKeymap,
      indentWithTab,
    ]),
    EditorView.lineWrapping,
    EditorState.readOnly.of(options.readOnly),
    // tabindex: the text is already a tab stop (contenteditable); said outright, checkers
    // (axe's scrollable-region-focusable) see that the scrolling box takes the keyboard.
    EditorView.contentAttributes.of({ "aria-label": options.label, tabindex: "0" }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged) options.onChange(update.state.doc.toString());
    }),
    theme,
  ];
  const view = new EditorView({
    root: shadow,
    parent: shadow,
    state: EditorState.create({ doc: options.text, extensions }),
  });

  return {
    setText(text) {
      if (view.state.doc.toString() === text) return;
      // A fresh state: undo never brings back a text from before (another revision's edits).
      view.setState(EditorState.create({ doc: text, extensions }));
    },
    setSchema(next) {
      schema = next;
      view.dispatch({ effects: checkAgain.of(null) });
    },
    setServerProblems(text, problems) {
      server = { text, problems };
      view.dispatch({ effects: checkAgain.of(null) });
    },
    select(from, to) {
      const length = view.state.doc.length;
      const range = EditorSelection.range(Math.min(from, length), Math.min(to, length));
      view.dispatch({ selection: range, effects: EditorView.scrollIntoView(range, { y: "center" }) });
      view.focus();
    },
    destroy() {
      view.destroy();
    },
  };
}
