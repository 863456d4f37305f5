/**
 * The one reader of JSON request bodies of every service: 415 unless declared JSON,
 * 413 over the limit, 400/4001 when the bytes are not strict UTF-8, nest too deep,
 * hold a lone surrogate or a `__proto__` property, or do not parse (json-text.ts).
 */
import type { Context } from "koa";
import getRawBody from "raw-body";
import { errors } from "../errors.ts";
import { parseJsonBytes } from "./json-text.ts";

export async function readJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  const type = ctx.get("content-type");
  if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) throw errors.unsupportedMediaType();
  let bytes: Buffer;
  try {
    bytes = await getRawBody(ctx.req, { limit: limitBytes });
  } catch (err) {
    if ((err as { type?: string }).type === "entity.too.large") {
      // The rest of the body is read and dropped, so that the client (or the edge) still
      // sending it is not reset before it reads the 413.
      ctx.req.resume();
      throw errors.tooLarge(limitBytes);
    }
    throw errors.malformed("The request body could not be read");
  }
  const parsed = parseJsonBytes(bytes);
  if ("problem" in parsed) throw errors.malformed(parsed.problem);
  return parsed.value;
}

/** A JSON body that may be left out: a request with no content at all (and no type) reads as `{}`. */
export async function readOptionalJsonBody(ctx: Context, limitBytes: number): Promise<unknown> {
  const length = ctx.get("content-length");
  const chunked = ctx.get("transfer-encoding") !== "";
  if (!chunked && (length === "" || length === "0") && ctx.get("content-type") === "") return {};
  return readJsonBody(ctx, limitBytes);
}
