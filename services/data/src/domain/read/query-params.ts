/**
 * Strict query-string parsing: every parameter may repeat; malformed
 * percent-encoding is a 400, not a silent guess.
 */
import { errors } from "../../../../../shared/errors.ts";

export type QueryParams = Map<string, string[]>;

/** Objects per page (also per nested level): the default and the largest a client may ask for. */
export const PAGESIZE_DEFAULT = 20;
export const PAGESIZE_MAX = 5000;

export function parseQueryString(raw: string): QueryParams {
  const params: QueryParams = new Map();
  if (!raw) return params;
  for (const part of raw.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const name = decode(eq < 0 ? part : part.slice(0, eq));
    const value = eq < 0 ? "" : decode(part.slice(eq + 1));
    const list = params.get(name) ?? [];
    list.push(value);
    params.set(name, list);
  }
  return params;
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    throw errors.malformed("The query string is not valid percent-encoding");
  }
}

export function single(params: QueryParams, name: string): string | undefined {
  const values = params.get(name);
  if (!values || values.length === 0) return undefined;
  if (values.length > 1) throw errors.malformed(`Parameter '${name}' may be given only once`);
  return values[0];
}

export function intParam(
  params: QueryParams,
  name: string,
  fallback: number,
  min: number,
  max: number,
): number {
  const text = single(params, name);
  if (text === undefined) return fallback;
  if (!/^\d{1,9}$/.test(text) || Number(text) < min || Number(text) > max) {
    throw errors.malformed(`Parameter '${name}' must be a whole number from ${min} to ${max}`);
  }
  return Number(text);
}

export function flag(params: QueryParams, name: string): boolean {
  const text = single(params, name);
  return text !== undefined && text !== "false";
}

export function encodeQuery(params: [string, string][]): string {
  return params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join("&");
}
