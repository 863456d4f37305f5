/**
 * GET /admin/v1/definition-schema: the JSON Schema of a project definition
 * (domain/definition/definition-json-schema.ts), for every administrator and the operator
 * (docs/admin-api.md#definition-schema).
 */
import type Router from "@koa/router";
import { definitionJsonSchema } from "../../domain/definition/definition-json-schema.ts";

export function addDefinitionSchemaRoutes(router: Router): void {
  router.get("/definition-schema", (ctx) => {
    ctx.body = definitionJsonSchema();
  });
}
