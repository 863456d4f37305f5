/** The account's projects. */
import type { AdminContext } from "../admin-context.ts";
import { LoadStatus } from "../components/LoadStatus.tsx";
import { ScreenHeading } from "../components/ScreenHeading.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useLoad } from "../components/useLoad.ts";
import { href } from "../route.ts";

export function Projects({ context }: { context: AdminContext }) {
  const projects = useLoad(context.api.projects.list, [context]);
  return (
    <section aria-labelledby="projects-title" aria-busy={projects.loading}>
      <div class="heading">
        <ScreenHeading id="projects-title" title="Projects" />
        {!context.readOnly && (
          <a class="button primary" href={href("new-project")}>
            New project
          </a>
        )}
      </div>
      <LoadStatus what="projects" load={projects} />
      {projects.value && projects.value.length === 0 && <p class="empty">No projects yet.</p>}
      {projects.value && projects.value.length > 0 && (
        <Table
          label="List of projects"
          rows={projects.value}
          rowKey={(p) => p.name}
          columns={[
            { title: "Name", cell: (p) => <a href={href("projects", p.name)}>{p.name}</a> },
            { title: "Revision", cell: (p) => p.revision },
            { title: "Updated", cell: (p) => <Time iso={p.updated} /> },
          ]}
        />
      )}
    </section>
  );
}
