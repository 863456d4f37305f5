/**
 * The JavaScript of one API version, compiled from its definition: the
 * resources whose GET answer is computed by code, the request and response
 * events, and the libraries loaded before them (docs/javascript.md). Every
 * reference is checked here (a name taken by a table, a role or library that
 * does not exist, code that does not parse), each problem with its JSON path.
 */
import { errors } from "../../../../../shared/errors.ts";
import type { LostParts } from "../definition/definition-salvage.ts";
import type { Report } from "../definition/problems.ts";
import type {
  EventDefinition,
  JavaScriptResourceDefinition,
  ProjectDefinition,
  VersionDefinition,
} from "../definition/project-definition.ts";
import { asyncBodySyntaxError } from "./rule-code.ts";

export interface JavaScriptResourceModel {
  name: string;
  /** The body of an async function of `request` and `principal`. */
  code: string;
  /** Only keys with one of these roles may call it; undefined: every key of the project. */
  roles: ReadonlySet<string> | undefined;
  description?: string;
}

export type EventType = EventDefinition["type"];

export interface EventModel {
  type: EventType;
  /** Position in the version's `events`. */
  index: number;
  /** How messages name it (`'audit'`, `#2`): see eventLabel. */
  label: string;
  code: string;
}

export interface VersionScripts {
  resources: Map<string, JavaScriptResourceModel>;
  requestEvents: EventModel[];
  responseEvents: EventModel[];
  /** Entries of the project's `libraries`, loaded in this order before any of the version's code. */
  libraries: string[];
}

export function isJavaScriptResource(definition: {
  type?: string;
}): definition is JavaScriptResourceDefinition {
  return definition.type === "javascript";
}

/** Who calls: a key's roles, or an account administrator (read/authorization.ts, Principal). */
export interface CallerRoles {
  roles: readonly string[];
  administrator?: object;
}

/** May the caller call the resource? (Its `roles`, when it lists any; an account administrator always.) */
export function mayCall(resource: JavaScriptResourceModel, principal: CallerRoles): boolean {
  const { roles } = resource;
  return !roles || principal.administrator !== undefined || principal.roles.some((role) => roles.has(role));
}

/** 403/4031 unless the caller may call the resource. */
export function requireCallable(resource: JavaScriptResourceModel, principal: CallerRoles): void {
  if (!mayCall(resource, principal))
    throw errors.forbidden(`The key's roles do not allow calling '${resource.name}'`);
}

/** How messages name an event: `'<name>'`, or `#<position in the version's events, from 1>`. */
function eventLabel(event: EventDefinition, index: number): string {
  return event.name !== undefined ? `'${event.name}'` : `#${index + 1}`;
}

export interface ScriptCheckContext {
  report: Report;
  lost: LostParts;
  /** Names of the version's resources so far (tables and table-based custom resources). */
  takenNames: ReadonlySet<string>;
}

/** Compiles and checks the JavaScript of version `versionName`. */
export function compileVersionScripts(
  versionName: string,
  version: VersionDefinition,
  definition: ProjectDefinition,
  { report, lost, takenNames }: ScriptCheckContext,
): VersionScripts {
  const at = ["apiVersions", versionName];
  const checkCode = (code: string, path: PropertyKey[]) => {
    const error = asyncBodySyntaxError(code);
    if (error !== undefined) report(path, error);
  };
  const resources = new Map<string, JavaScriptResourceModel>();
  for (const [name, def] of Object.entries(version.resources)) {
    if (!isJavaScriptResource(def)) continue;
    const path = [...at, "resources", name];
    if (takenNames.has(name))
      report(path, `resource name '${name}' is already used (tables are resources too)`);
    checkCode(def.code, [...path, "code"]);
    def.roles?.forEach((role, i) => {
      if (!Object.hasOwn(definition.roles, role) && !lost.has(["roles", role]))
        report([...path, "roles", i], `no role '${role}'`);
    });
    resources.set(name, {
      name,
      code: def.code,
      roles: def.roles ? new Set(def.roles) : undefined,
      description: def.description,
    });
  }
  const events = (version.events ?? []).map((def, index): EventModel => {
    checkCode(def.code, [...at, "events", index, "code"]);
    return { type: def.type, index, label: eventLabel(def, index), code: def.code };
  });
  const libraries = version.libraries ?? [];
  libraries.forEach((library, i) => {
    if (!Object.hasOwn(definition.libraries, library) && !lost.has(["libraries", library]))
      report([...at, "libraries", i], `no library '${library}' in 'libraries'`);
  });
  return {
    resources,
    requestEvents: events.filter((e) => e.type === "request"),
    responseEvents: events.filter((e) => e.type === "response"),
    libraries: [...new Set(libraries)],
  };
}
