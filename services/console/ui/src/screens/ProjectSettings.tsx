/**
 * A project's settings: its API documents (`@docs` of each API version), how long the keys
 * of its logins live, and — for role admin — deleting it, confirmed by typing its name.
 */
import { useState } from "preact/hooks";
import type { LoadedProject } from "../admin-api.ts";
import type { AdminContext } from "../admin-context.ts";
import { ApiFailure } from "../api.ts";
import { Dialog } from "../components/Dialog.tsx";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { Field } from "../components/Field.tsx";
import { useAction } from "../components/useAction.ts";
import { go, href } from "../route.ts";

/** What the definition says about logins' keys (docs/project-definitions.md#authentication). */
function keyLifetimeOf(definition: Record<string, unknown>): { seconds: number; set: boolean } {
  const auth = definition.authentication as { keyLifetimeSeconds?: unknown } | undefined;
  const seconds = auth?.keyLifetimeSeconds;
  return typeof seconds === "number" ? { seconds, set: true } : { seconds: 3600, set: false };
}

export function ProjectSettings(props: {
  context: AdminContext;
  project: LoadedProject;
  onChanged: () => void;
}) {
  const { context, project } = props;
  const versions = Object.keys((project.definition.apiVersions as Record<string, unknown> | undefined) ?? {});
  const lifetime = keyLifetimeOf(project.definition);
  const [deleting, setDeleting] = useState(false);

  return (
    <div class="settings">
      <section class="card" aria-labelledby="docs-title">
        <h2 id="docs-title">API documents</h2>
        {versions.length === 0 && <p class="empty">The project has no API version yet.</p>}
        {versions.length > 0 && (
          <ul class="plain">
            {versions.map((v) => (
              <li key={v}>
                <a href={context.api.docsPath(project.name, v)} target="_blank" rel="noreferrer">
                  OpenAPI document of <bdi>{v}</bdi>
                </a>{" "}
                <code class="muted">{context.api.docsPath(project.name, v)}</code>
              </li>
            ))}
          </ul>
        )}
        <p class="hint">
          Each version's <code>@docs</code> answers the API as the key that asks may use it. It needs a
          project key (a user's, or an API key) unless the definition publishes the documents:{" "}
          <code>{'"apiDocs": {"public": true}'}</code>.
        </p>
      </section>
      <section class="card" aria-labelledby="lifetime-title">
        <h2 id="lifetime-title">Key lifetime</h2>
        <p>
          Keys issued by logins to this project live <strong>{lifetime.seconds} seconds</strong>
          {lifetime.set ? "" : " (the default)"}, set by <code>authentication.keyLifetimeSeconds</code> in the{" "}
          <a href={href("projects", project.name, "definition")}>definition</a>. A user's own lifetime wins:
          see <a href={href("projects", project.name, "users")}>Users</a>.
        </p>
      </section>
      {!context.readOnly && (
        <section class="card danger-zone" aria-labelledby="delete-title">
          <h2 id="delete-title">Delete the project</h2>
          <p>
            Drops its tables and rows, its users, its API keys and its definition history. Keys issued for it
            stop working at once. It cannot be undone.
          </p>
          <div class="actions">
            <button type="button" class="danger" onClick={() => setDeleting(true)}>
              Delete project…
            </button>
          </div>
        </section>
      )}
      {deleting && (
        <DeleteProject
          context={context}
          project={project}
          onClose={() => setDeleting(false)}
          onChanged={props.onChanged}
        />
      )}
    </div>
  );
}

/** The deletion's dialog: the project's name must be typed to confirm. */
function DeleteProject(props: {
  context: AdminContext;
  project: LoadedProject;
  onClose: () => void;
  onChanged: () => void;
}) {
  const { project } = props;
  const [typed, setTyped] = useState("");
  const action = useAction();
  const remove = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      try {
        await props.context.api.projects.remove(project.name, project.etag);
      } catch (err) {
        if (err instanceof ApiFailure && err.status === 412) {
          props.onChanged();
          throw new Error(
            `Someone changed the project since you loaded revision ${project.revision}: nothing was deleted. Look at the change, then try again.`,
          );
        }
        throw err;
      }
      go("projects");
      return undefined;
    });
  };
  return (
    <Dialog
      title={
        <>
          Delete project <bdi>{project.name}</bdi>?
        </>
      }
      onClose={props.onClose}
    >
      <form onSubmit={remove}>
        <p>
          Its rows, users, API keys and history are dropped for good, as revision {project.revision} stands.
        </p>
        <Field
          label={`Type ${project.name} to confirm`}
          name="confirm-project"
          value={typed}
          onInput={setTyped}
          autocomplete="off"
        />
        <ErrorNotice error={action.error} />
        <div class="actions">
          <button type="submit" class="danger" disabled={typed !== project.name || action.busy}>
            Delete project
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Dialog>
  );
}
