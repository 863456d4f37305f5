/**
 * The definition editor's state in one reducer with named actions: the text, the
 * revision it is edited from (its ETag goes out as If-Match), the draft brought back,
 * the last dry run, the server's problems, a conflict (412), the outcome of Apply and
 * whether a request is under way. Pure: DefinitionEditor.tsx sends the requests and
 * keeps the draft (drafts.ts) as `draftToKeep` says.
 */
import type { Problem } from "../api.ts";
import type { Draft } from "../drafts.ts";

/** The revision the text is edited from: Apply sends its ETag as If-Match. */
export interface Base {
  etag: string;
  revision: number;
}

export interface DryRun {
  diff: Record<string, unknown>;
  /** The text the diff was made for: Apply stores exactly that. */
  text: string;
}

/** Someone else stored a revision since ours was loaded. */
export interface Conflict {
  loadedRevision: number | undefined;
  /** Their revision, once the user chose to compare against it. */
  current?: Base;
}

export interface EditorState {
  text: string;
  /** Counts the times the text was replaced from outside the editor (a load, a discarded draft). */
  replaced: number;
  /** The loaded revision's text (or the new-project template): a text equal to it is no draft. */
  loadedText: string;
  /** The loaded revision (none: a project not stored yet). */
  loaded: Base | undefined;
  /** What the text is edited from: the loaded revision, a draft's, or theirs after Compare. */
  base: Base | undefined;
  /** The draft that came back when the project was opened, until it is applied or discarded. */
  restored: Draft | undefined;
  dryRun: DryRun | undefined;
  /** The server's problems with the text, and the text they are about. */
  problems: { list: Problem[]; text: string } | undefined;
  error: unknown;
  conflict: Conflict | undefined;
  /** What the last Apply stored. */
  done: string | undefined;
  busy: boolean;
}

export type EditorAction =
  /** A revision was loaded (or another project opened): its text, or this project's draft. */
  | { type: "loaded"; text: string; revision: Base | undefined; draft: Draft | undefined }
  | { type: "edited"; text: string }
  | { type: "draftDiscarded" }
  | { type: "requestStarted"; clearsDryRun?: boolean }
  | { type: "dryRunDone"; diff: Record<string, unknown>; text: string }
  | { type: "applied"; revision: number; summary: string }
  /** The server refused the text or the request failed; `problems` as it answered them. */
  | { type: "failed"; error: unknown; problems: Problem[] }
  /** 412: the revision we edit from is no longer the project's. */
  | { type: "conflicted" }
  /** The user chose to compare against their revision: it becomes the base. */
  | { type: "rebased"; current: Base }
  | { type: "reloadAsked" };

export function initialEditorState(text: string, revision: Base | undefined): EditorState {
  return {
    text,
    replaced: 0,
    loadedText: text,
    loaded: revision,
    base: revision,
    restored: undefined,
    dryRun: undefined,
    problems: undefined,
    error: undefined,
    conflict: undefined,
    done: undefined,
    busy: false,
  };
}

const draftBase = (draft: Draft): Base | undefined =>
  draft.baseEtag === undefined ? undefined : { etag: draft.baseEtag, revision: draft.baseRevision ?? 0 };

export function editorReducer(state: EditorState, action: EditorAction): EditorState {
  switch (action.type) {
    case "loaded": {
      const fresh = { ...initialEditorState(action.text, action.revision), replaced: state.replaced + 1 };
      const { draft } = action;
      if (!draft || draft.text === action.text) return { ...fresh, done: state.done };
      return { ...fresh, text: draft.text, base: draftBase(draft), restored: draft, done: state.done };
    }
    case "edited":
      return { ...state, text: action.text };
    case "draftDiscarded":
      return {
        ...state,
        text: state.loadedText,
        replaced: state.replaced + 1,
        base: state.loaded,
        restored: undefined,
        dryRun: undefined,
        conflict: undefined,
      };
    case "requestStarted":
      return {
        ...state,
        busy: true,
        error: undefined,
        problems: undefined,
        done: undefined,
        dryRun: action.clearsDryRun ? undefined : state.dryRun,
      };
    case "dryRunDone":
      return { ...state, busy: false, dryRun: { diff: action.diff, text: action.text } };
    case "applied":
      return {
        ...state,
        busy: false,
        dryRun: undefined,
        restored: undefined,
        done: `Stored revision ${action.revision}: ${action.summary}`,
      };
    case "failed":
      return {
        ...state,
        busy: false,
        error: action.error,
        problems: action.problems.length ? { list: action.problems, text: state.text } : undefined,
      };
    case "conflicted":
      // The dry run was against a revision that is gone: Apply waits for a new one.
      return { ...state, busy: false, dryRun: undefined, conflict: { loadedRevision: state.base?.revision } };
    case "rebased":
      return {
        ...state,
        base: action.current,
        conflict: { loadedRevision: state.conflict?.loadedRevision, current: action.current },
      };
    case "reloadAsked":
      return { ...state, conflict: undefined, done: undefined };
  }
}

/**
 * The draft to keep for this state: the text with the revision it is edited from, while
 * it differs from the loaded revision (or is edited from another one); none otherwise.
 */
export function draftToKeep(state: EditorState): Draft | undefined {
  if (state.text === state.loadedText && state.base?.etag === state.loaded?.etag) return undefined;
  return { baseEtag: state.base?.etag, baseRevision: state.base?.revision, text: state.text };
}

/** Apply is possible for exactly the text of a dry run that found something to change. */
export function canApply(state: EditorState): boolean {
  const { dryRun } = state;
  return (
    dryRun !== undefined && dryRun.text === state.text && dryRun.diff.summary !== "no changes" && !state.busy
  );
}
