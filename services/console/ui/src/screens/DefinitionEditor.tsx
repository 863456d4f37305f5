/**
 * A project's definition as JSON, in a code editor that checks it against the server's
 * definition schema as it is typed and completes field names and values from it. A dry
 * run shows what would change (or the server's problems, at their paths) before anything
 * is applied; Apply sends If-Match with the ETag of what was loaded, so someone else's
 * change is never overwritten unseen (412: reload, or compare against theirs). Unsaved
 * text is kept as a draft per project (drafts.ts) across an expired session, a 401 or a
 * reload. The state is one reducer (definition/editor-state.ts).
 */
import { useEffect, useLayoutEffect, useReducer, useRef, useState } from "preact/hooks";
import type { LoadedProject } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { ApiFailure } from "../api.ts";
import { DiffView } from "../components/DiffView.tsx";
import { Done, ErrorNotice } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { useFocusOn } from "../components/focus.ts";
import { CodeEditor } from "../definition/CodeEditor.tsx";
import type { CodeEditor as Editor } from "../definition/code-editor.ts";
import { useDefinitionSchema } from "../definition/definition-schema.ts";
import {
  type Base,
  canApply,
  draftToKeep,
  type EditorAction,
  type EditorState,
  editorReducer,
  initialEditorState,
} from "../definition/editor-state.ts";
import type { TextProblem } from "../definition/text-problems.ts";
import { draftPlace, readDraft, writeDraft } from "../drafts.ts";
import { locate } from "../json-location.ts";
import { go } from "../route.ts";

const NEW_PROJECT = {
  tables: {},
  apiVersions: { v1: {} },
  roles: {},
};

/** At most this many of the text's own problems are listed (all are marked in the text). */
const LISTED_TEXT_PROBLEMS = 50;

const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const revisionOf = (project: LoadedProject | undefined): Base | undefined =>
  project?.etag ? { etag: project.etag, revision: project.revision } : undefined;

export function DefinitionEditor(props: {
  context: AdminContext;
  project: LoadedProject | undefined;
  onStored: () => void;
}) {
  const { context, project } = props;
  const [name, setName] = useState("");
  const loadedText = pretty(project?.definition ?? NEW_PROJECT);
  const [state, dispatch] = useReducer<EditorState, EditorAction>(
    editorReducer,
    initialEditorState(loadedText, revisionOf(project)),
  );
  const { text, base, dryRun, conflict, restored } = state;
  const { schema, failure: schemaFailure } = useDefinitionSchema(context.client);
  const editor = useRef<Editor | undefined>(undefined);
  const diffRef = useRef<HTMLDivElement>(null);
  const conflictRef = useRef<HTMLDivElement>(null);
  useFocusOn(diffRef, dryRun);
  useFocusOn(conflictRef, conflict);

  const place = draftPlace(context.session.account, project?.name);
  /** Keeps (or drops) this project's draft for the state an action leads to. */
  const keepDraftFor = (next: EditorState) => writeDraft(place, draftToKeep(next));

  // A newly loaded revision (after Apply, a rollback or a reload) or another project replaces
  // the text — before the browser paints or takes a keystroke, so nothing typed into it is
  // wiped afterwards, and one project's text is never applied to another. This project's
  // unsaved draft, if any, comes back with the revision it was edited from.
  useLayoutEffect(() => {
    dispatch({ type: "loaded", text: loadedText, revision: revisionOf(project), draft: readDraft(place) });
  }, [project?.name, project?.etag]);

  const edit = (value: string) => {
    dispatch({ type: "edited", text: value });
    keepDraftFor({ ...state, text: value });
  };

  const discardDraft = () => {
    dispatch({ type: "draftDiscarded" });
    writeDraft(place, undefined);
  };

  const projectName = project?.name ?? name;

  function parsed(): unknown {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new Error(`The definition is not valid JSON: ${(err as Error).message}`);
    }
  }

  async function run(action: () => Promise<void>, clearsDryRun = false) {
    dispatch({ type: "requestStarted", clearsDryRun });
    try {
      await action();
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 412) dispatch({ type: "conflicted" });
      else dispatch({ type: "failed", error: err, problems: err instanceof ApiFailure ? err.problems : [] });
    }
  }

  const check = () =>
    run(async () => {
      // Without a name the request would go to the projects list itself: say so, send nothing.
      if (!projectName.trim())
        throw new Error("Name the project first (Project name, above): nothing was sent.");
      const body = parsed();
      const diff = await context.api.projects.dryRun(projectName, body, base?.etag);
      dispatch({ type: "dryRunDone", diff, text });
    }, true);

  const apply = () =>
    run(async () => {
      const stored = await context.api.projects.store(projectName, parsed(), base?.etag);
      writeDraft(place, undefined);
      dispatch({ type: "applied", revision: stored.revision, summary: stored.summary });
      if (!project) go("projects", projectName);
      else props.onStored();
    });

  /** Their revision becomes the base: the dry run then shows what our text would change in it. */
  const compare = () =>
    run(async () => {
      const current = await context.api.projects.get(projectName);
      const theirs = { etag: current.etag, revision: current.revision };
      dispatch({ type: "rebased", current: theirs });
      keepDraftFor({ ...state, base: theirs });
      const diff = await context.api.projects.dryRun(projectName, parsed(), theirs.etag);
      dispatch({ type: "dryRunDone", diff, text });
    }, true);

  const reload = () => {
    dispatch({ type: "reloadAsked" });
    props.onStored();
  };

  // Found by the editor's own check (a moment after typing stops), as marked in the text.
  const [textOwnProblems, setTextOwnProblems] = useState<TextProblem[]>([]);
  const serverProblems = state.problems?.list ?? [];

  // The server's problems are marked in the text too, while it is the text they are about.
  useEffect(() => {
    const about = state.problems;
    const spans = !about
      ? []
      : about.list.flatMap((p) => {
          const span = locate(about.text, p.path);
          return span
            ? [{ from: span.offset, to: span.offset + span.length, message: `${p.path}: ${p.message}` }]
            : [];
        });
    editor.current?.setServerProblems(about?.text ?? "", spans);
  }, [state.problems]);

  function showServerProblem(path: string) {
    const span = locate(text, path);
    if (span) editor.current?.select(span.offset, span.offset + span.length);
  }

  const changesSomething = dryRun !== undefined && dryRun.diff.summary !== "no changes";
  const applyAllowed = !context.readOnly && canApply(state) && Boolean(project || name);
  return (
    <div class="editor">
      {!project && (
        <Field
          label="Project name"
          name="project"
          value={name}
          onInput={setName}
          required
          nameKind="project"
        />
      )}
      <div class="field">
        <div class="field-label" aria-hidden="true">
          Definition (JSON)
        </div>
        <p class="hint" id="definition-keys">
          {context.readOnly
            ? "Read only. To leave the text with the keyboard, press Esc, then Tab."
            : "Tab indents. To leave the editor with the keyboard, press Esc, then Tab. Ctrl-Space suggests field names and values."}
        </p>
        <CodeEditor
          text={text}
          version={state.replaced}
          label="Definition (JSON)"
          readOnly={context.readOnly}
          schema={schema}
          onChange={edit}
          onProblems={setTextOwnProblems}
          control={editor}
        />
        {schemaFailure && (
          <p class="hint">
            The text is checked only as JSON here (the definition schema could not be loaded: {schemaFailure}
            ); the dry run still checks everything.
          </p>
        )}
      </div>
      {textOwnProblems.length > 0 && (
        <section class="text-problems" aria-labelledby="text-problems-title">
          <h2 id="text-problems-title">
            {textOwnProblems.length === 1
              ? "1 problem in the text"
              : `${textOwnProblems.length} problems in the text`}
          </h2>
          <ol class="problems">
            {textOwnProblems.slice(0, LISTED_TEXT_PROBLEMS).map((p) => (
              <li key={`${p.from}:${p.message}`}>
                <button type="button" class="link" onClick={() => editor.current?.select(p.from, p.to)}>
                  {p.kind === "syntax" ? (
                    `Line ${p.line}`
                  ) : (
                    <>
                      <code>{p.path}</code>
                      <span class="muted"> (line {p.line})</span>
                    </>
                  )}
                </button>
                <span class="problem-message">{p.message}</span>
              </li>
            ))}
          </ol>
          {textOwnProblems.length > LISTED_TEXT_PROBLEMS && (
            <p class="hint">The others are marked in the text.</p>
          )}
        </section>
      )}
      {restored && (
        <div class="notice info" role="status">
          <p>
            Your unsaved changes are back
            {restored.baseRevision !== undefined ? `, edited from revision ${restored.baseRevision}` : ""}
            {project && restored.baseEtag !== undefined && restored.baseEtag !== project.etag
              ? `; the project has changed since (revision ${project.revision}), so Apply will ask you to compare first`
              : ""}
            .
          </p>
          {!context.readOnly && (
            <button type="button" onClick={discardDraft}>
              Discard my changes
            </button>
          )}
        </div>
      )}
      {!context.readOnly && (
        <div class="actions">
          <button type="button" onClick={check} disabled={state.busy}>
            Check changes (dry run)
          </button>
          <button type="button" class="primary" onClick={apply} disabled={!applyAllowed}>
            {base ? `Apply over revision ${base.revision}` : "Apply"}
          </button>
          {dryRun && dryRun.text !== text && (
            <span class="hint">The text changed since the dry run: check again.</span>
          )}
          {dryRun && dryRun.text === text && !changesSomething && (
            <span class="hint">The dry run found nothing to change.</span>
          )}
        </div>
      )}
      {conflict && (
        <div class="notice warning" role="alert" tabIndex={-1} ref={conflictRef}>
          <strong class="notice-title">Someone else changed this project</strong>
          <p>
            {conflict.loadedRevision !== undefined
              ? `You loaded revision ${conflict.loadedRevision}, but another change has been stored since. `
              : "The project was created by someone else meanwhile. "}
            Nothing of yours was applied. Reload to start from their revision (your edits are discarded), or
            compare to see what your text would change in theirs.
          </p>
          {conflict.current && (
            <p>
              Comparing against revision {conflict.current.revision}: applying now replaces it with your text.
            </p>
          )}
          <div class="actions">
            <button type="button" onClick={reload}>
              Reload
            </button>
            <button type="button" onClick={compare} disabled={state.busy || !project}>
              Compare with their revision
            </button>
          </div>
        </div>
      )}
      <ErrorNotice
        error={state.error}
        title={serverProblems.length ? "The definition has problems" : undefined}
      />
      {serverProblems.length > 0 && (
        <ol class="problems" aria-label="Problems">
          {serverProblems.map((p) => {
            const span = locate(text, p.path);
            return (
              <li key={p.path + p.message}>
                <button type="button" class="link" onClick={() => showServerProblem(p.path)}>
                  <code>{p.path}</code>
                  {span && <span class="muted"> (line {span.line})</span>}
                </button>
                <span class="problem-message">{p.message}</span>
              </li>
            );
          })}
        </ol>
      )}
      {dryRun && (
        <div class="dry-run" tabIndex={-1} ref={diffRef}>
          <h2>Dry run: what Apply would change</h2>
          <DiffView diff={dryRun.diff} />
        </div>
      )}
      <Done message={state.done} />
    </div>
  );
}
