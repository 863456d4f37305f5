/**
 * Where a request really came from. `X-Forwarded-For`, `-Host` and `-Proto` are
 * believed only when the connection comes from a trusted proxy (TRUSTED_PROXIES);
 * anyone else could write anything there. proxy-addr walks `X-Forwarded-For`
 * from the right, past trusted proxies only, to the first address that is not one.
 */
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { Context, Middleware, Next } from "koa";
import { LRUCache } from "lru-cache";
import proxyAddr from "proxy-addr";

export type TrustedProxies = readonly string[];

/** Addresses whose trust a compiled list remembers, the most recently seen (most requests come from a few: the edge's). */
const REMEMBERED_ADDRESSES = 1000;

/**
 * Throws on an entry that is not an address, a CIDR range or one of proxy-addr's names. The
 * answer for an address does not depend on its hop (a compiled list has no hop count), so it is
 * remembered: parsing an address costs a few microseconds, and each request asks two or three times.
 */
export function compileTrustedProxies(entries: TrustedProxies): (address: string, hop: number) => boolean {
  const trusted = proxyAddr.compile([...entries]);
  const known = new LRUCache<string, boolean>({ max: REMEMBERED_ADDRESSES });
  return (address, hop) => {
    let answer = known.get(address);
    if (answer === undefined) {
      answer = trusted(address, hop);
      known.set(address, answer);
    }
    return answer;
  };
}

/** `::ffff:192.0.2.1` and `192.0.2.1` are one client. */
function plainAddress(address: string): string {
  return address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
}

const firstValue = (header: string | string[] | undefined): string =>
  (Array.isArray(header) ? header[0] : header)?.split(",")[0]?.trim() ?? "";

export interface RequestOrigin {
  /** The client's address: the socket's, or what trusted proxies say. */
  address: string;
  /** `protocol://host` the client used. */
  origin: string;
}

export function requestOrigin(
  req: IncomingMessage,
  trust: (address: string, hop: number) => boolean,
): RequestOrigin {
  const viaTrustedProxy = trust(req.socket.remoteAddress ?? "", 0);
  const forwardedHost = viaTrustedProxy ? firstValue(req.headers["x-forwarded-host"]) : "";
  const forwardedProto = viaTrustedProxy ? firstValue(req.headers["x-forwarded-proto"]).toLowerCase() : "";
  const encrypted = (req.socket as TLSSocket).encrypted === true;
  const protocol =
    forwardedProto === "https" || forwardedProto === "http" ? forwardedProto : encrypted ? "https" : "http";
  const host = forwardedHost || req.headers.host || "";
  return { address: plainAddress(proxyAddr(req, trust)), origin: `${protocol}://${host}` };
}

export interface ForwardedState {
  /** `protocol://host` the client used (see requestOrigin). */
  origin: string;
}

/** Sets `ctx.ip` to the real client address and `ctx.state.origin`; the app must keep `app.proxy` false. */
export function forwardedRequest(trusted: TrustedProxies): Middleware {
  const trust = compileTrustedProxies(trusted);
  return async (ctx: Context, next: Next) => {
    const { address, origin } = requestOrigin(ctx.req, trust);
    ctx.request.ip = address;
    (ctx.state as ForwardedState).origin = origin;
    await next();
  };
}

/** The origin the client used, as the forwardedRequest middleware established it. */
export function originOf(ctx: Context): string {
  return (ctx.state as Partial<ForwardedState>).origin ?? `${ctx.protocol}://${ctx.host}`;
}
