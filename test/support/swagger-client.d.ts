/** The part of swagger-client (it ships no types) the generated-client test uses. */
declare module "swagger-client" {
  interface ExecuteOptions {
    spec: unknown;
    operationId: string;
    parameters?: Record<string, unknown>;
    requestBody?: unknown;
    securities?: { authorized: Record<string, unknown> };
    userFetch?: (url: string, init: RequestInit) => Promise<Response>;
  }
  interface Answer {
    status: number;
    headers: Record<string, string>;
    // biome-ignore lint/suspicious/noExplicitAny: JSON as the client parsed it
    body: any;
  }
  const SwaggerClient: {
    /** The document with its `$ref`s resolved (what execute needs to see the parameters). */
    resolve(options: { spec: unknown }): Promise<{ spec: unknown; errors: unknown[] }>;
    execute(options: ExecuteOptions): Promise<Answer>;
  };
  export default SwaggerClient;
}
