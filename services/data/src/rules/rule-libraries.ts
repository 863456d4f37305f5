/**
 * The project's libraries in the rules' sandbox (docs/rules.md#libraries):
 * every entry of the definition's `libraries`, in definition order, loaded
 * after the rule program's dispatcher into the same isolate, so that rule code
 * (formulas, validations, events, `where` clauses) can call the functions and
 * read the values their top-level code defines. They share the sandbox's
 * limits with the rules; a library that fails while loading fails the
 * request's rules (500/5001, "could not be loaded").
 *
 * When a project has rules, each library must parse as a script; that is
 * checked when the definition is applied (domain/model/rule-library-check.ts).
 */
import type { ProgramSource } from "../sandbox/index.ts";

type Libraries = Readonly<Record<string, { code: string }>>;

/** The rule program's sources: the dispatcher first (it keeps the language's own functions), then the libraries. */
export function ruleProgramSources(key: string, dispatcher: string, libraries: Libraries): ProgramSource[] {
  return [
    { code: dispatcher, filename: `${key}.js` },
    ...Object.entries(libraries).map(([name, { code }]) => ({ code, filename: `${name}.js` })),
  ];
}
