/**
 * The check of the project's libraries when rules load them into their sandbox
 * (docs/rules.md#libraries; the loading itself is rules/rule-libraries.ts):
 * each library must parse as a script.
 */
import type { Report } from "../definition/problems.ts";
import { scriptSyntaxError } from "./rule-code.ts";

type Libraries = Readonly<Record<string, { code: string }>>;

/** Reports every library that does not parse, when rules will load them. */
export function checkRuleLibraries(libraries: Libraries, hasRules: boolean, report: Report): void {
  if (!hasRules) return;
  for (const [name, { code }] of Object.entries(libraries)) {
    const error = scriptSyntaxError(code);
    if (error !== undefined)
      report(["libraries", name, "code"], `does not parse (rules load every library): ${error}`);
  }
}
