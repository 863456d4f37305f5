/** Reads a JSON request body: 415 unless declared JSON, 413 over the limit, 400/4001 when it does not parse. */
import type { Context } from "koa";
import getRawBody from "raw-body";
import { errors } from "../errors.ts";

export async function readJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  const type = ctx.get("content-type");
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) throw errors.unsupportedMediaType();
  let text: string;
  try {
    text = await getRawBody(ctx.req, { limit: limitBytes, encoding: "utf8" });
  } catch (err) {
    if ((err as { type?: string }).type === "entity.too.large") {
      // The rest of the body is never read: the connection cannot be reused.
      ctx.set("Connection", "close");
      throw errors.tooLarge(limitBytes);
    }
    throw errors.malformed("The request body could not be read");
  }
  try {
    return JSON.parse(text);
  } catch {
    throw errors.malformed("The request body is not valid JSON");
  }
}
