/**
 * Structured JSON logging (pino). Secrets never reach a log line: keys, passwords,
 * Authorization headers and `auth` query parameters are redacted here, once, and
 * so is anything shaped like a generated key wherever it stands (a key pasted
 * into a path, say).
 * Errors are logged through shared/loggable-error.ts (never their message).
 */
import { type DestinationStream, type Logger, pino } from "pino";
import { redactKeys } from "./key-format.ts";

export type { Logger };

const redactPaths = [
  "password",
  "newPassword",
  "new_password",
  "apikey",
  "authorization",
  "*.password",
  "*.newPassword",
  "*.new_password",
  "*.apikey",
  "*.authorization",
  "*.Authorization",
  "req.headers.authorization",
  "req.headers.cookie",
];

export function createLogger(service: string, level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { service },
    redact: { paths: redactPaths, censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { streamWrite: redactKeys },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A query parameter's name as the data service reads it; undefined when it does not decode. */
function decodedName(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    return undefined;
  }
}

/**
 * Removes the value of every parameter whose name decodes to `auth` (`a%75th`
 * too, in any letter case) from a URL path+query before it is logged; a name
 * that does not decode loses its value as well.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split("&")
    .map((part) => {
      const eq = part.indexOf("=");
      const raw = eq < 0 ? part : part.slice(0, eq);
      const name = decodedName(raw);
      if (name === undefined) return `${raw}=[redacted]`;
      return name.toLowerCase() === "auth" ? "auth=[redacted]" : part;
    })
    .join("&");
  return `${url.slice(0, q)}?${query}`;
}
