/**
 * Response formats of GET answers: JSON (the default), CSV and XML. The URL
 * parameter `responseformat` beats the original product's headers, which beat
 * the default. Errors are always JSON: the error middleware writes them, and a
 * formatted body and its Content-Type are only set once the whole text is ready.
 */
import type { Context } from "koa";
import { errors } from "../../../../shared/errors.ts";
import { type QueryParams, single } from "../domain/query-params.ts";
import { nextBatchOf } from "../domain/representation.ts";
import { type CsvColumn, toCsv } from "./csv-writer.ts";
import { toXml } from "./xml-writer.ts";

export const RESPONSE_FORMATS = ["json", "csv", "xml"] as const;
export type ResponseFormat = (typeof RESPONSE_FORMATS)[number];

/** The original product's header names, all accepted (they must agree when several are sent). */
export const FORMAT_HEADERS = [
  "X-CALiveAPICreator-ResponseFormat",
  "X-EspressoLogic-ResponseFormat",
  "X-liveapicreatorLogic-ResponseFormat",
] as const;

export const CONTENT_TYPES: Record<ResponseFormat, string> = {
  json: "application/json; charset=utf-8",
  csv: "text/csv; charset=utf-8; header=present",
  xml: "application/xml; charset=utf-8",
};

function parseFormat(value: string, where: string): ResponseFormat {
  const format = value.trim().toLowerCase();
  if (!(RESPONSE_FORMATS as readonly string[]).includes(format)) {
    throw errors.malformed(`${where} must be one of ${RESPONSE_FORMATS.join(", ")} (not '${value}')`);
  }
  return format as ResponseFormat;
}

/**
 * The format a request asks for. `header` reads a request header (undefined when
 * absent), so this stays a pure function of the request.
 */
export function requestedFormat(
  params: QueryParams,
  header: (name: string) => string | undefined,
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
  return fromHeaders.values().next().value ?? "json";
}

export function formatOf(ctx: Context, params: QueryParams): ResponseFormat {
  for (const name of FORMAT_HEADERS) ctx.vary(name);
  const headers = ctx.headers;
  return requestedFormat(params, (name) => {
    const value = headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(", ") : value;
  });
}

/** For answers that exist only as JSON (writes, @docs): any other format is a 400, before anything happens. */
export function requireJson(ctx: Context, params: QueryParams, what: string): void {
  const format = formatOf(ctx, params);
  if (format !== "json") throw errors.malformed(`${what} answers only in JSON (not ${format})`);
}

export interface FormatOptions {
  /** The CSV columns; without them CSV is refused for this endpoint. */
  csvColumns?: () => CsvColumn[];
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
  const next = nextBatchOf(value);
  let text: string;
  if (format === "csv") {
    if (!options.csvColumns) throw errors.malformed("This endpoint has no CSV form; use json or xml");
    const rows = (Array.isArray(value) ? value : [value]) as Row[];
    text = toCsv(options.csvColumns(), next === undefined ? rows : rows.slice(0, -1));
  } else {
    text = toXml(value);
  }
  if (next !== undefined) ctx.set("Link", `<${next}>; rel="next"`);
  ctx.type = CONTENT_TYPES[format];
  ctx.body = text;
}
