/** One project: its definition, revisions, built-in users, API keys, webhooks and settings, on tabs. */

import type { AdminContext } from "../admin-context.ts";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { useLoad } from "../components/useLoad.ts";
import { href } from "../route.ts";
import { ApiKeys } from "./ApiKeys.tsx";
import { DefinitionEditor } from "./DefinitionEditor.tsx";
import { ProjectSettings } from "./ProjectSettings.tsx";
import { Revisions } from "./Revisions.tsx";
import { Users } from "./Users.tsx";
import { Webhooks } from "./Webhooks.tsx";

const DEFINITION_TAB = { id: "definition", label: "Definition" };
const TABS = [
  DEFINITION_TAB,
  { id: "revisions", label: "Revisions" },
  { id: "users", label: "Users" },
  { id: "keys", label: "API keys" },
  { id: "webhooks", label: "Webhooks" },
  { id: "settings", label: "Settings" },
];

export function Project(props: { context: AdminContext; name: string | undefined; tab: string | undefined }) {
  const { context, name } = props;
  const shown = TABS.find((t) => t.id === props.tab) ?? DEFINITION_TAB;
  const tab = shown.id;
  const project = useLoad(
    async (signal) => (name === undefined ? undefined : context.api.projects.get(name, signal)),
    [context, name],
  );

  if (name === undefined) {
    return (
      <section aria-labelledby="project-title">
        <ScreenHeading id="project-title" title="New project" />
        <DefinitionEditor context={context} project={undefined} onStored={() => {}} />
      </section>
    );
  }
  // Only the project the address names: never another one's definition under this name.
  const loaded = project.value?.name === name ? project.value : undefined;
  const roles = Object.keys((loaded?.definition.roles as Record<string, unknown> | undefined) ?? {});
  const tabLabel = shown.label;
  return (
    <section aria-labelledby="project-title" aria-busy={project.loading}>
      <p class="crumbs">
        <a href={href("projects")}>Projects</a> /
      </p>
      <ScreenHeading id="project-title" title={`${name}: ${tabLabel}`}>
        <bdi>{name}</bdi>
        {loaded && <span class="muted"> · revision {loaded.revision}</span>}
      </ScreenHeading>
      <nav class="tabs" aria-label="Project sections">
        {TABS.map((t) => (
          <a key={t.id} href={href("projects", name, t.id)} aria-current={t.id === tab ? "page" : undefined}>
            {t.label}
          </a>
        ))}
      </nav>
      <LoadStatus what="the project" load={project} />
      {loaded && tab === "definition" && (
        <DefinitionEditor key={name} context={context} project={loaded} onStored={project.reload} />
      )}
      {loaded && tab === "revisions" && (
        <Revisions context={context} project={loaded} onRolledBack={project.reload} />
      )}
      {tab === "users" && <Users context={context} project={name} roles={roles} />}
      {tab === "keys" && <ApiKeys context={context} project={name} roles={roles} />}
      {loaded && tab === "webhooks" && (
        <Webhooks
          context={context}
          project={name}
          tables={Object.keys((loaded.definition.tables as Record<string, unknown> | undefined) ?? {})}
        />
      )}
      {loaded && tab === "settings" && (
        <ProjectSettings context={context} project={loaded} onChanged={project.reload} />
      )}
    </section>
  );
}
