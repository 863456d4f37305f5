/**
 * The project definition's structure as a JSON Schema (draft 2020-12), generated
 * from the very zod schema a PUT is checked with (project-definition.ts), so it
 * cannot differ from what the server accepts. Served to editors (the console's
 * definition editor completes and checks with it) by GET /admin/v1/definition-schema.
 * It describes the definition as sent (`io: "input"`: fields with defaults are
 * optional); the checks across parts (a key column that is not a column, a rule's
 * unknown table) are the server's alone, and a dry run reports them.
 */
import { z } from "zod";
import { projectDefinitionSchema } from "./project-definition.ts";

let generated: Record<string, unknown> | undefined;

export function definitionJsonSchema(): Record<string, unknown> {
  generated ??= {
    ...z.toJSONSchema(projectDefinitionSchema, { io: "input", unrepresentable: "any" }),
    title: "Tessera project definition",
  };
  return generated;
}
