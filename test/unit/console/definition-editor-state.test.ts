/**
 * The definition editor's reducer (console/ui/src/definition/editor-state.ts): what each
 * named action does to the text, the revision it is edited from, the draft, the dry run,
 * a conflict and Apply — as pure logic, without a browser.
 */
import { expect } from "chai";
import {
  canApply,
  draftToKeep,
  type EditorAction,
  type EditorState,
  editorReducer,
  initialEditorState,
} from "../../../services/console/ui/src/definition/editor-state.ts";

const r3 = { etag: '"p1.3"', revision: 3 };
const r4 = { etag: '"p1.4"', revision: 4 };
const LOADED = '{"tables": {}}';

const run = (state: EditorState, ...actions: EditorAction[]) => actions.reduce(editorReducer, state);
const opened = () =>
  run(initialEditorState("", undefined), { type: "loaded", text: LOADED, revision: r3, draft: undefined });

describe("console: the definition editor's state", () => {
  it("opens a revision with its text, edited from it, keeping no draft", () => {
    const state = opened();
    expect(state).to.include({ text: LOADED, loadedText: LOADED, busy: false });
    expect(state.base).to.deep.equal(r3);
    expect(draftToKeep(state)).to.equal(undefined);
  });

  it("brings a draft back with the revision it was edited from, unless it is the loaded text", () => {
    const draft = { baseEtag: r3.etag, baseRevision: 3, text: '{"tables": {"t": 1}}' };
    const back = run(initialEditorState("", undefined), {
      type: "loaded",
      text: LOADED,
      revision: r4,
      draft,
    });
    expect(back.text).to.equal(draft.text);
    expect(back.base).to.deep.equal(r3);
    expect(back.restored).to.deep.equal(draft);
    expect(draftToKeep(back)).to.deep.equal(draft);
    const same = run(initialEditorState("", undefined), {
      type: "loaded",
      text: LOADED,
      revision: r4,
      draft: { ...draft, text: LOADED },
    });
    expect(same.restored).to.equal(undefined);
    expect(same.base).to.deep.equal(r4);
  });

  it("counts each replacement of the text from outside, never an edit", () => {
    const state = opened();
    const edited = run(state, { type: "edited", text: "x" });
    expect(edited.replaced).to.equal(state.replaced);
    const discarded = run(edited, { type: "draftDiscarded" });
    expect(discarded.replaced).to.equal(state.replaced + 1);
    expect(discarded.text).to.equal(LOADED);
    expect(draftToKeep(discarded)).to.equal(undefined);
    const reloaded = run(discarded, { type: "loaded", text: "y", revision: r4, draft: undefined });
    expect(reloaded.replaced).to.equal(state.replaced + 2);
  });

  it("keeps a draft while the text differs from the loaded revision, and drops it when typed back", () => {
    const edited = run(opened(), { type: "edited", text: '{"tables": {"a": {}}}' });
    expect(draftToKeep(edited)).to.deep.equal({ baseEtag: r3.etag, baseRevision: 3, text: edited.text });
    expect(draftToKeep(run(edited, { type: "edited", text: LOADED }))).to.equal(undefined);
  });

  it("allows Apply only for the exact text of a dry run that changes something", () => {
    const text = '{"tables": {"a": {}}}';
    const checked = run(
      opened(),
      { type: "edited", text },
      { type: "requestStarted", clearsDryRun: true },
      { type: "dryRunDone", diff: { summary: "tables +1" }, text },
    );
    expect(checked.busy).to.equal(false);
    expect(canApply(checked)).to.equal(true);
    expect(canApply(run(checked, { type: "edited", text: `${text} ` }))).to.equal(false);
    expect(canApply(run(checked, { type: "requestStarted" }))).to.equal(false);
    const nothing = run(opened(), { type: "dryRunDone", diff: { summary: "no changes" }, text: LOADED });
    expect(canApply(nothing)).to.equal(false);
  });

  it("keeps the server's problems with the text they are about, until the next request", () => {
    const problems = [{ path: "$.tables.a.key", message: "required" }];
    const failed = run(
      opened(),
      { type: "requestStarted" },
      { type: "failed", error: new Error("400"), problems },
    );
    expect(failed.problems).to.deep.equal({ list: problems, text: LOADED });
    expect(failed.busy).to.equal(false);
    expect(run(failed, { type: "requestStarted" }).problems).to.equal(undefined);
    const plain = run(opened(), { type: "failed", error: new Error("offline"), problems: [] });
    expect(plain.problems).to.equal(undefined);
    expect(plain.error).to.be.instanceOf(Error);
  });

  it("meets a conflict: the dry run is gone; comparing makes their revision the base", () => {
    const text = '{"tables": {"mine": {}}}';
    const conflicted = run(
      opened(),
      { type: "edited", text },
      { type: "dryRunDone", diff: { summary: "tables +1" }, text },
      { type: "requestStarted" },
      { type: "conflicted" },
    );
    expect(conflicted.dryRun).to.equal(undefined);
    expect(conflicted.conflict).to.deep.equal({ loadedRevision: 3 });
    const rebased = run(conflicted, { type: "rebased", current: r4 });
    expect(rebased.base).to.deep.equal(r4);
    expect(rebased.conflict).to.deep.equal({ loadedRevision: 3, current: r4 });
    expect(draftToKeep(rebased)).to.deep.equal({ baseEtag: r4.etag, baseRevision: 4, text });
    expect(run(rebased, { type: "reloadAsked" }).conflict).to.equal(undefined);
  });

  it("says what Apply stored, and keeps saying it when the new revision loads", () => {
    const text = '{"tables": {"a": {}}}';
    const applied = run(
      opened(),
      { type: "edited", text },
      { type: "dryRunDone", diff: { summary: "tables +1" }, text },
      { type: "requestStarted" },
      { type: "applied", revision: 4, summary: "tables +1" },
    );
    expect(applied).to.include({ done: "Stored revision 4: tables +1", busy: false, dryRun: undefined });
    const reloaded = run(applied, { type: "loaded", text, revision: r4, draft: undefined });
    expect(reloaded.done).to.equal("Stored revision 4: tables +1");
    expect(reloaded.base).to.deep.equal(r4);
    expect(draftToKeep(reloaded)).to.equal(undefined);
  });
});
