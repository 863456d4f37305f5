/**
 * The sandbox program of one API version's JavaScript: the version's
 * libraries, then a dispatcher that holds the code of every JavaScript
 * resource and event as text and compiles each on first use, on its own, with
 * the AsyncFunction constructor (so one script's text can never reach into
 * another's, or into the dispatcher). One sandbox call runs one script:
 *
 *   ENTRY("resource", name, {request, principal})            → {value}
 *   ENTRY("request", index, {request, principal})            → {value?}
 *   ENTRY("response", index, {response, request, principal}) → {value?}
 *
 * A request event that returns nothing but changed `request.body` in place
 * answers `{value: {body}}`; a response event that returns nothing answers
 * the body it changed in place, or nothing at all when it changed nothing (so
 * an unchanged answer does not travel back out of the sandbox).
 */

import { present } from "../../../../shared/present.ts";
import type { VersionScripts } from "../domain/model/script-model.ts";
import type { ProgramSource } from "../sandbox/index.ts";

export const ENTRY = "__tesseraScripts";

export type ScriptKind = "resource" | "request" | "response";

/** The parameter names each kind of script sees. */
const SCRIPT_PARAMETERS: Record<ScriptKind, string[]> = {
  resource: ["request", "principal"],
  request: ["request", "principal"],
  response: ["response", "request", "principal"],
};

function dispatcher(scripts: VersionScripts): string {
  const code: Record<ScriptKind, Record<string, string>> = {
    resource: Object.fromEntries([...scripts.resources.values()].map((r) => [r.name, r.code])),
    request: Object.fromEntries(scripts.requestEvents.map((e) => [String(e.index), e.code])),
    response: Object.fromEntries(scripts.responseEvents.map((e) => [String(e.index), e.code])),
  };
  // A string literal of JSON text: JSON.parse makes every name an own property, whatever it is.
  const codeLiteral = JSON.stringify(JSON.stringify(code));
  return `const ${ENTRY} = (function () {
  "use strict";
  const AsyncFunction = (async function () {}).constructor;
  const stringify = JSON.stringify;
  const hasOwn = Object.hasOwn;
  const code = JSON.parse(${codeLiteral});
  const parameters = ${JSON.stringify(SCRIPT_PARAMETERS)};
  const compiled = new Map();
  function compile(kind, id) {
    const key = kind + ":" + id;
    let fn = compiled.get(key);
    if (fn === undefined) {
      if (!hasOwn(code, kind) || !hasOwn(code[kind], id)) throw new Error("No " + kind + " script " + id);
      fn = new AsyncFunction(...parameters[kind], code[kind][id]);
      compiled.set(key, fn);
    }
    return fn;
  }
  return async function (kind, id, input) {
    const fn = compile(kind, id);
    if (kind === "resource") return { value: await fn(input.request, input.principal) };
    if (kind === "request") {
      const before = input.request.body === undefined ? undefined : stringify(input.request.body);
      const value = await fn(input.request, input.principal);
      if (value !== undefined && value !== null) return { value };
      if (before !== undefined && stringify(input.request.body) !== before) return { value: { body: input.request.body } };
      return {};
    }
    const before = stringify(input.response.body);
    const value = await fn(input.response, input.request, input.principal);
    if (value !== undefined) return { value };
    if (stringify(input.response.body) !== before) return { value: input.response.body };
    return {};
  };
})();
`;
}

/** The program's sources: the version's libraries in order, then the dispatcher. */
export function scriptProgramSources(
  scripts: VersionScripts,
  libraries: Record<string, { code: string }>,
): ProgramSource[] {
  return [
    ...scripts.libraries.map((name) => ({
      code: present(libraries[name], `library '${name}'`).code,
      filename: `${name}.js`,
    })),
    { code: dispatcher(scripts), filename: "tessera-scripts.js" },
  ];
}
