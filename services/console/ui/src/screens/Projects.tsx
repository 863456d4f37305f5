/** The account's projects. */
import type { AdminContext } from "../admin-context.ts";
import { ErrorNotice } from "../components/ErrorNotice.tsx";
import { Table } from "../components/Table.tsx";
import { Time } from "../components/Time.tsx";
import { useLoad } from "../components/useLoad.ts";
import { href } from "../route.ts";

interface ProjectSummary {
  name: string;
  revision: number;
  updated: string;
}

export function Projects({ context }: { context: AdminContext }) {
  const projects = useLoad(
    async () => (await context.client.call<ProjectSummary[]>("GET", `${context.accountPath}/projects`)).body,
    [context],
  );
  return (
    <section aria-labelledby="projects-title">
      <div class="heading">
        <h1 id="projects-title">Projects</h1>
        {!context.readOnly && (
          <a class="button primary" href={href("new-project")}>
            New project
          </a>
        )}
      </div>
      <ErrorNotice error={projects.error} />
      {projects.value && projects.value.length === 0 && <p class="empty">No projects yet.</p>}
      {projects.value && projects.value.length > 0 && (
        <Table
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
