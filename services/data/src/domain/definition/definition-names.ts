/**
 * The names a project definition introduces, checked against the name grammar
 * (shared/names.ts, docs/names.md). A PUT needs every one to be valid; a stored
 * definition with names from before the grammar still loads (read-only), and the
 * operator's name check lists them.
 */
import { type NameKind, nameProblem } from "../../../../../shared/names.ts";
import { jsonPath, type Problem } from "./problems.ts";
import type { ProjectDefinition } from "./project-definition.ts";

type Path = (string | number)[];
interface Named {
  kind: NameKind;
  name: string;
  path: Path;
}

function namesOf(record: Record<string, unknown> | undefined, kind: NameKind, at: Path): Named[] {
  return Object.keys(record ?? {}).map((name) => ({ kind, name, path: [...at, name] }));
}

type Subresources = Record<string, { attributes?: Record<string, string>; subresources?: Subresources }>;

function resourceNames(resources: Subresources | undefined, at: Path): Named[] {
  return Object.entries(resources ?? {}).flatMap(([name, resource]) => [
    { kind: "resource" as const, name, path: [...at, name] },
    ...namesOf(resource.attributes, "column", [...at, name, "attributes"]),
    ...resourceNames(resource.subresources, [...at, name, "subresources"]),
  ]);
}

/** Every name the definition introduces, with its kind and where it stands. */
function definitionNames(definition: ProjectDefinition): Named[] {
  const tables = Object.entries(definition.tables).flatMap(([name, table]) => [
    { kind: "table" as const, name, path: ["tables", name] },
    ...namesOf(table.columns, "column", ["tables", name, "columns"]),
    ...Object.entries(table.parents ?? {}).flatMap(([role, parent]) => [
      { kind: "table" as const, name: role, path: ["tables", name, "parents", role] },
      ...(parent.children
        ? [
            {
              kind: "table" as const,
              name: parent.children,
              path: ["tables", name, "parents", role, "children"],
            },
          ]
        : []),
    ]),
  ]);
  const versions = Object.entries(definition.apiVersions).flatMap(([name, version]) => [
    { kind: "version" as const, name, path: ["apiVersions", name] },
    ...resourceNames(version.resources as Subresources, ["apiVersions", name, "resources"]),
  ]);
  return [
    ...tables,
    ...versions,
    ...namesOf(definition.roles, "role", ["roles"]),
    ...namesOf(definition.libraries, "library", ["libraries"]),
  ];
}

/** The definition's names that break the grammar, each a problem at its JSON path. */
export function definitionNameProblems(definition: ProjectDefinition): Problem[] {
  return definitionNames(definition).flatMap(({ kind, name, path }) => {
    const problem = nameProblem(kind, name);
    return problem === undefined ? [] : [{ path: jsonPath(path), message: `${kind} name ${problem}` }];
  });
}
