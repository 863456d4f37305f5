/**
 * Response formats of GET answers: JSON (the default), "JSON Object" (the
 * answer under a `data` attribute), CSV and XML. The URL parameter
 * `responseformat` beats the original product's headers, which beat the API
 * version's default. Errors are always JSON: the error middleware writes them,
 * and a formatted body and its Content-Type are only set once the whole text
 * is ready.
 */
import type { Context } from "koa";
import { errors } from "../../../../shared/errors.ts";
import type { VersionResponseFormat } from "../domain/definition/project-definition.ts";
import type { VersionModel } from "../domain/model/project-model.ts";
import { type QueryParams, single } from "../domain/read/query-params.ts";
import { nextBatchOf } from "../domain/read/representation.ts";
import { type CsvColumn, toCsv } from "./csv-writer.ts";
import { toXml } from "./xml-writer.ts";

export const RESPONSE_FORMATS = ["json", "jsonObject", "csv", "xml"] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** The original product's header names, all accepted (they must agree when several are sent). */
export const FORMAT_HEADERS = [
  "X-CALiveAPICreator-ResponseFormat",
  "X-EspressoLogic-ResponseFormat",
  "X-liveapicreatorLogic-ResponseFormat",
] as const;

/** The format headers as one `Vary` addition (one read and write of the header instead of one per name). */
const VARY_FORMAT_HEADERS: string[] = [...FORMAT_HEADERS];

export const CONTENT_TYPES: Record<ResponseFormat, string> = {
  json: "application/json; charset=utf-8",
  jsonObject: "application/json; charset=utf-8",
  csv: "text/csv; charset=utf-8; header=present",
  xml: "application/xml; charset=utf-8",
};

/** A format's name in any letter case (`JSONOBJECT` is `jsonObject`). */
function parseFormat(value: string, where: string): ResponseFormat {
  const asked = value.trim().toLowerCase();
  const format = RESPONSE_FORMATS.find((f) => f.toLowerCase() === asked);
  if (format === undefined) {
    throw errors.malformed(`${where} must be one of ${RESPONSE_FORMATS.join(", ")} (not '${value}')`);
  }
  return format;
}

/**
 * The format a request asks for, or `fallback` (the API version's default)
 * when it names none. `header` reads a request header (undefined when absent),
 * so this stays a pure function of the request.
 */
export function requestedFormat(
  params: QueryParams,
  header: (name: string) => string | undefined,
  fallback: VersionResponseFormat = "json",
): ResponseFormat {
  const fromUrl = single(params, "responseformat");
  if (fromUrl !== undefined) return parseFormat(fromUrl, "Parameter 'responseformat'");
  const fromHeaders = new Set<ResponseFormat>();
  for (const name of FORMAT_HEADERS) {
    const value = header(name);
    if (value !== undefined) fromHeaders.add(parseFormat(value, `Header '${name}'`));
  }
  if (fromHeaders.size > 1) {
    throw errors.malformed(`The headers ${FORMAT_HEADERS.join(", ")} ask for different formats`);
  }
  return fromHeaders.values().next().value ?? fallback;
}

/** The format of a GET answer; `version`: the API version's default applies (absent: JSON). */
export function formatOf(ctx: Context, params: QueryParams, version?: VersionModel): ResponseFormat {
  ctx.vary(VARY_FORMAT_HEADERS);
  const headers = ctx.headers;
  return requestedFormat(
    params,
    (name) => {
      const value = headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(", ") : value;
    },
    version?.defaultResponseFormat,
  );
}

/**
 * For answers that exist only as JSON (writes, @docs): any other format the
 * request asks for is a 400, before anything happens. The version's default
 * format is not asked for: these answer JSON under any default.
 */
export function requireJson(ctx: Context, params: QueryParams, what: string): void {
  const format = formatOf(ctx, params);
  if (format !== "json") throw errors.malformed(`${what} answers only in JSON (not ${format})`);
}

export interface FormatOptions {
  /** The CSV columns; without them CSV is refused for this endpoint. */
  csvColumns?: () => CsvColumn[];
  /** The API version answered for: its XML root element (absent: `response`). */
  version?: VersionModel;
}

type Row = Record<string, unknown>;

/** Sets the answer in the format asked for. CSV and XML pages also name the next page in `Link: <…>; rel="next"`. */
export function respond(
  ctx: Context,
  format: ResponseFormat,
  value: unknown,
  options: FormatOptions = {},
): void {
  if (format === "json") {
    ctx.body = value;
    return;
  }
  if (format === "jsonObject") {
    // The answer as JSON has it (a page's next_batch entry included), under `data`.
    ctx.body = { data: value };
    return;
  }
  const next = nextBatchOf(value);
  let text: string;
  if (format === "csv") {
    if (!options.csvColumns) throw errors.malformed("This endpoint has no CSV form; use json or xml");
    const rows = (Array.isArray(value) ? value : [value]) as Row[];
    text = toCsv(options.csvColumns(), next === undefined ? rows : rows.slice(0, -1));
  } else {
    text = toXml(value, options.version?.xmlRootElement);
  }
  if (next !== undefined) ctx.set("Link", `<${next}>; rel="next"`);
  ctx.type = CONTENT_TYPES[format];
  ctx.body = text;
}
