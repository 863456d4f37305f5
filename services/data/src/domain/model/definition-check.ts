/**
 * A project definition as sent, checked whole: its structure parsed first
 * (definition/project-definition.ts), then the model compiled from it — from
 * what could be saved of it when the structure is wrong — so that one answer
 * lists every structural and semantic problem, each once.
 */
import type { Problem } from "../definition/problems.ts";
import { type ProjectDefinition, parseDefinitionStructure } from "../definition/project-definition.ts";
import { checkFilterText } from "./filter-check.ts";
import { compileProject, type FilterChecker, UNSERVED_IDENTITY } from "./project-model.ts";

/**
 * Parses a definition. When its structure is wrong, the answer lists every
 * structural problem and also every semantic problem of the parts that did
 * parse (see definition-salvage.ts), each once: one answer lists what to fix.
 * `checkFilter` checks filter texts there (the checker the admin API uses by default).
 */
export function parseProjectDefinition(
  input: unknown,
  checkFilter: FilterChecker = checkFilterText,
): { ok: true; definition: ProjectDefinition } | { ok: false; problems: Problem[] } {
  const structure = parseDefinitionStructure(input);
  if (structure.ok) return structure;
  const { problems, salvaged } = structure;
  if (salvaged) {
    const compiled = compileProject(UNSERVED_IDENTITY, salvaged.definition, checkFilter, salvaged.lost);
    if (!compiled.ok) problems.push(...compiled.problems.map((p) => inSentRules(p, salvaged.ruleIndexes)));
  }
  return { ok: false, problems };
}

/** A problem of the salvaged definition, with its rule numbered as in the definition as sent. */
function inSentRules(problem: Problem, ruleIndexes: number[]): Problem {
  const path = problem.path.replace(/^\$\.rules\[(\d+)\]/, (whole, i) => {
    const sent = ruleIndexes[Number(i)];
    return sent === undefined ? whole : `$.rules[${sent}]`;
  });
  return { ...problem, path };
}
