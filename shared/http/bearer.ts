/** Constant-time check of `Authorization: Bearer <token>` against the accepted tokens. */
import { createHash, timingSafeEqual } from "node:crypto";
import type { Context } from "koa";

const digest = (s: string) => createHash("sha256").update(s).digest();

/** True when the header reads `Bearer <one of the accepted tokens>`. */
export function isBearerToken(authorization: string | undefined, accepted: readonly string[]): boolean {
  const [, token] = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "") ?? [];
  if (token === undefined) return false;
  const given = digest(token);
  let ok = false;
  for (const token of accepted) ok = timingSafeEqual(given, digest(token)) || ok;
  return ok;
}

export function hasBearerToken(ctx: Context, accepted: readonly string[]): boolean {
  return isBearerToken(ctx.get("authorization"), accepted);
}
