/**
 * A project's definition as JSON: a dry run shows what would change (or the
 * problems, at their paths) before anything is applied; Apply sends If-Match with
 * the ETag of what was loaded, so someone else's change is never overwritten
 * unseen (412: reload, or compare against theirs). Unsaved text is kept as a draft
 * per project (drafts.ts) across an expired session, a 401 or a reload.
 */
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import type { LoadedProject } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { ApiFailure, type Problem, seg } from "../api.ts";
import { DiffView } from "../components/DiffView.tsx";
import { Done, ErrorNotice } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { useFocusOn } from "../components/focus.ts";
import { type Draft, draftPlace, readDraft, writeDraft } from "../drafts.ts";
import { locate } from "../json-location.ts";
import { go } from "../route.ts";

const NEW_PROJECT = {
  tables: {},
  apiVersions: { v1: {} },
  roles: {},
};

interface DryRun {
  diff: Record<string, unknown>;
  /** The text the diff was made for: Apply stores exactly that. */
  text: string;
}

/** Someone else stored a revision since ours was loaded. */
interface Conflict {
  loadedRevision: number | undefined;
  current?: { revision: number; etag: string };
}

/** The revision the text is edited from: Apply sends its ETag as If-Match. */
interface Base {
  etag: string;
  revision: number;
}

const pretty = (value: unknown) => JSON.stringify(value, null, 2);
const baseOf = (project: LoadedProject | undefined): Base | undefined =>
  project?.etag ? { etag: project.etag, revision: project.revision } : undefined;
const draftBase = (draft: Draft): Base | undefined =>
  draft.baseEtag === undefined ? undefined : { etag: draft.baseEtag, revision: draft.baseRevision ?? 0 };

export function DefinitionEditor(props: {
  context: AdminContext;
  project: LoadedProject | undefined;
  onStored: () => void;
}) {
  const { context, project } = props;
  const [name, setName] = useState("");
  const [text, setText] = useState(pretty(project?.definition ?? NEW_PROJECT));
  const [base, setBase] = useState(baseOf(project));
  const [restored, setRestored] = useState<Draft>();
  const [dryRun, setDryRun] = useState<DryRun>();
  const [problems, setProblems] = useState<Problem[]>([]);
  const [error, setError] = useState<unknown>();
  const [conflict, setConflict] = useState<Conflict>();
  const [done, setDone] = useState<string>();
  const [busy, setBusy] = useState(false);
  const editor = useRef<HTMLTextAreaElement>(null);
  const diffRef = useRef<HTMLDivElement>(null);
  const conflictRef = useRef<HTMLDivElement>(null);
  useFocusOn(diffRef, dryRun);
  useFocusOn(conflictRef, conflict);

  const place = draftPlace(context.session.account, project?.name);
  const loadedText = pretty(project?.definition ?? NEW_PROJECT);

  // A newly loaded revision (after Apply, a rollback or a reload) or another project replaces
  // the text — before the browser paints or takes a keystroke, so nothing typed into it is
  // wiped afterwards, and one project's text is never applied to another. This project's
  // unsaved draft, if any, comes back with the revision it was edited from.
  useLayoutEffect(() => {
    const draft = readDraft(place);
    if (draft && draft.text !== loadedText) {
      setText(draft.text);
      setBase(draftBase(draft));
      setRestored(draft);
    } else {
      setText(loadedText);
      setBase(baseOf(project));
      setRestored(undefined);
    }
    setDryRun(undefined);
    setProblems([]);
    setConflict(undefined);
  }, [project?.name, project?.etag]);

  /** The text as typed, kept as this project's draft while it differs from what was loaded. */
  function edit(value: string, from: Base | undefined = base) {
    setText(value);
    writeDraft(
      place,
      value === loadedText && from?.etag === project?.etag
        ? undefined
        : { baseEtag: from?.etag, baseRevision: from?.revision, text: value },
    );
  }

  const discardDraft = () => {
    writeDraft(place, undefined);
    setText(loadedText);
    setBase(baseOf(project));
    setRestored(undefined);
    setDryRun(undefined);
    setConflict(undefined);
  };

  const projectName = project?.name ?? name;
  const projectPath = `${context.accountPath}/projects/${seg(projectName)}`;
  const ifMatch = (): Record<string, string> => (base ? { "if-match": base.etag } : {});

  function parsed(): unknown {
    try {
      return JSON.parse(text);
    } catch (err) {
      throw new Error(`The definition is not valid JSON: ${(err as Error).message}`);
    }
  }

  async function run(action: () => Promise<void>) {
    setBusy(true);
    setError(undefined);
    setProblems([]);
    setDone(undefined);
    try {
      await action();
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 412) {
        // The dry run was against a revision that is gone: Apply waits for a new one.
        setDryRun(undefined);
        setConflict({ loadedRevision: base?.revision });
      } else {
        if (err instanceof ApiFailure) setProblems(err.problems);
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  }

  const check = () =>
    run(async () => {
      setDryRun(undefined);
      // Without a name the request would go to the projects list itself: say so, send nothing.
      if (!projectName.trim())
        throw new Error("Name the project first (Project name, above): nothing was sent.");
      const body = parsed();
      const r = await context.client.call<Record<string, unknown>>("PUT", `${projectPath}?dryRun=true`, {
        body,
        headers: ifMatch(),
      });
      setDryRun({ diff: r.body, text });
    });

  const apply = () =>
    run(async () => {
      const r = await context.client.call<{ revision: number; summary: string }>("PUT", projectPath, {
        body: parsed(),
        headers: ifMatch(),
      });
      setDryRun(undefined);
      writeDraft(place, undefined);
      setRestored(undefined);
      setDone(`Stored revision ${r.body.revision}: ${r.body.summary}`);
      if (!project) go("projects", projectName);
      else props.onStored();
    });

  /** Their revision becomes the base: the dry run then shows what our text would change in it. */
  const compare = () =>
    run(async () => {
      const current = await context.client.call<LoadedProject>("GET", projectPath);
      const currentEtag = current.headers.get("etag") ?? "";
      const theirs = { etag: currentEtag, revision: current.body.revision };
      setBase(theirs);
      edit(text, theirs);
      setConflict({
        loadedRevision: conflict?.loadedRevision,
        current: { revision: current.body.revision, etag: currentEtag },
      });
      const r = await context.client.call<Record<string, unknown>>("PUT", `${projectPath}?dryRun=true`, {
        body: parsed(),
        headers: { "if-match": currentEtag },
      });
      setDryRun({ diff: r.body, text });
    });

  const reload = () => {
    setConflict(undefined);
    setDone(undefined);
    props.onStored();
  };

  function showProblem(p: Problem) {
    const span = locate(text, p.path);
    const area = editor.current;
    if (!area) return;
    area.focus();
    if (!span) return;
    area.setSelectionRange(span.offset, span.offset + span.length);
    // Selecting does not scroll a textarea: bring the problem's line into view.
    const lineHeight = Number.parseFloat(getComputedStyle(area).lineHeight) || 18;
    area.scrollTop = Math.max(0, (span.line - 3) * lineHeight);
  }

  const changesSomething = dryRun !== undefined && dryRun.diff.summary !== "no changes";
  const canApply =
    !context.readOnly && dryRun?.text === text && changesSomething && !busy && (project || name);
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
        <label for="definition">Definition (JSON)</label>
        <textarea
          id="definition"
          ref={editor}
          class="code"
          spellcheck={false}
          rows={24}
          value={text}
          readOnly={context.readOnly}
          onInput={(e) => edit((e.target as HTMLTextAreaElement).value)}
        />
      </div>
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
          <button type="button" onClick={check} disabled={busy}>
            Check changes (dry run)
          </button>
          <button type="button" class="primary" onClick={apply} disabled={!canApply}>
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
            <button type="button" onClick={compare} disabled={busy || !project}>
              Compare with their revision
            </button>
          </div>
        </div>
      )}
      <ErrorNotice error={error} title={problems.length ? "The definition has problems" : undefined} />
      {problems.length > 0 && (
        <ol class="problems" aria-label="Problems">
          {problems.map((p) => {
            const span = locate(text, p.path);
            return (
              <li key={p.path + p.message}>
                <button type="button" class="link" onClick={() => showProblem(p)}>
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
      <Done message={done} />
    </div>
  );
}
