/**
 * `tessera.get(resource, options)`: the read API of JavaScript resources and
 * events. It runs in the data service on behalf of the sandboxed code, bound
 * to the call that made it: the caller's project, version, principal and URLs
 * come from the call's context, never from the code, which can only name a
 * resource of its own version and the parameters of a GET. The read is the
 * REST API's own (domain/read/resource-read.ts), so the caller's roles, row filters
 * and column lists apply exactly as to a GET.
 *
 * The answer is `{rows, next}`: the page's objects as a GET answers them
 * (without the trailing `next_batch` element) and, when more exist, the
 * parameters that read the next page (`{offset, pagekey?}`), else null.
 */
import { ApiError } from "../../../../shared/errors.ts";
import { isPlainObject, parseKeySegment } from "../domain/model/column-values.ts";
import type { VersionModel } from "../domain/model/project-model.ts";
import type { QueryParams } from "../domain/read/query-params.ts";
import { nextBatchOf, type WireObject } from "../domain/read/representation.ts";
import { type ReadScope, readFromParams } from "../domain/read/resource-read.ts";
import type { HostFunction } from "../sandbox/index.ts";
import { SandboxHostError } from "../sandbox/index.ts";
import type { TenantRows } from "../store/tenant-rows.ts";
import { collectChecksums } from "./script-answers.ts";

/** What the data service knows about the sandbox call a host function serves (its `context`). */
export interface ScriptCallContext extends ReadScope {
  version: VersionModel;
  /** href → checksum of every object the code was given: the only checksums its answer may carry. */
  checksums: Map<string, string>;
}

/** GET parameters the options may carry (each a text, number or boolean; the filters and orders also a list). */
const PARAMETERS = ["filter", "order", "sysfilter", "sysorder", "pagesize", "offset", "pagekey", "nometa"];
const REPEATABLE = new Set(["filter", "order", "sysfilter", "sysorder"]);
/** Options naming an object by its key values (one value, or a list in key order). */
const KEYS = ["key", "parent"];

export interface ReadCall {
  resource: string;
  /** The key of one object, as a URL's key segment. */
  key?: string;
  params: QueryParams;
}

function fail(message: string): never {
  throw new SandboxHostError(`tessera.get: ${message}`);
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => ["string", "number", "boolean"].includes(typeof v);

/** Key values as a URL's key segment: each percent-encoded, joined by `,`. */
function keySegmentOf(name: string, value: unknown): string {
  const values = Array.isArray(value) ? value : [value];
  if (values.length === 0 || !values.every(isScalar))
    fail(`'${name}' must be a value, or a list of values in key order`);
  return values.map((v) => encodeURIComponent(String(v))).join(",");
}

/** The resource and parameters of `tessera.get(resource, options)`; throws SandboxHostError. */
export function parseReadCall(args: unknown[]): ReadCall {
  const [resource, given] = args;
  const options = given ?? {};
  if (typeof resource !== "string" || resource === "") fail("the first argument must be a resource name");
  if (args.length > 2) fail("takes a resource name and an options object");
  if (!isPlainObject(options)) fail("the options must be an object");
  const params: QueryParams = new Map();
  let key: string | undefined;
  for (const [name, value] of Object.entries(options)) {
    if (value === undefined || value === null) continue;
    if (KEYS.includes(name)) {
      const segment = keySegmentOf(name, value);
      if (name === "key") key = segment;
      else params.set(name, [segment]);
      continue;
    }
    if (!PARAMETERS.includes(name)) fail(`unknown option '${name}' (${[...KEYS, ...PARAMETERS].join(", ")})`);
    const values = Array.isArray(value) && REPEATABLE.has(name) ? value : [value];
    if (!values.every(isScalar)) fail(`option '${name}' must be a text, a number or a boolean`);
    params.set(name, values.map(String));
  }
  return { resource, key, params };
}

/** The page as `{rows, next}`. */
export function pageAnswer(page: WireObject[]): { rows: WireObject[]; next: Record<string, string> | null } {
  const nextBatch = nextBatchOf(page);
  if (nextBatch === undefined) return { rows: page, next: null };
  const query = new URL(nextBatch).searchParams;
  const next: Record<string, string> = {};
  for (const name of ["offset", "pagekey"]) {
    const value = query.get(name);
    if (value !== null) next[name] = value;
  }
  return { rows: page.slice(0, -1), next };
}

const READS = "tessera.get.reads";

export function createReadApi(options: { tenants: TenantRows; readsPerCall: number }): HostFunction {
  return async (args, info) => {
    const reads = ((info.callState.get(READS) as number | undefined) ?? 0) + 1;
    info.callState.set(READS, reads);
    if (reads > options.readsPerCall) fail(`more than ${options.readsPerCall} reads in one call`);
    const context = info.context as ScriptCallContext;
    const call = parseReadCall(args);
    const resource = context.version.resources.get(call.resource);
    if (!resource) fail(`no resource '${call.resource}' in version '${context.version.name}'`);
    if (info.signal.aborted) fail("the call is over");
    try {
      const key = call.key === undefined ? undefined : parseKeySegment(resource.table, call.key);
      const page = await readFromParams(options.tenants, context, resource, key, call.params);
      collectChecksums(page, context.checksums);
      return pageAnswer(page);
    } catch (e) {
      // What a GET would have answered with a 4xx, the code sees as the error's message.
      if (e instanceof ApiError && e.statusCode < 500) fail(e.message);
      throw e;
    }
  };
}
