/**
 * The server's JSON Schema of a project definition (GET /admin/v1/definition-schema):
 * fetched once per page, as every administrator gets the same one. Asked of the
 * server that will check the definition, it is always the schema that server uses.
 */
import { useEffect, useState } from "preact/hooks";
import { definitionSchema } from "../admin-api.ts";
import type { Client } from "../api.ts";
import type { JsonSchema } from "./json-schema.ts";

let asked: Promise<JsonSchema> | undefined;

function loadDefinitionSchema(client: Client): Promise<JsonSchema> {
  asked ??= definitionSchema<JsonSchema>(client).catch((err: unknown) => {
    asked = undefined; // asked again next time
    throw err;
  });
  return asked;
}

/** The schema once it is there; why it is not, if it cannot be had (the editor works without it). */
export function useDefinitionSchema(client: Client): {
  schema: JsonSchema | undefined;
  failure: string | undefined;
} {
  const [state, setState] = useState<{ schema?: JsonSchema; failure?: string }>({});
  useEffect(() => {
    let alive = true;
    loadDefinitionSchema(client).then(
      (schema) => alive && setState({ schema }),
      (err: unknown) => alive && setState({ failure: (err as Error).message }),
    );
    return () => {
      alive = false;
    };
  }, [client]);
  return { schema: state.schema, failure: state.failure };
}
