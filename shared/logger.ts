/**
 * Structured JSON logging (pino). Secrets never reach a log line: keys, passwords,
 * Authorization headers and `auth` query parameters are redacted here, once.
 */
import { type DestinationStream, type Logger, pino } from "pino";

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
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Removes the value of every `auth` query parameter from a URL path+query before it is logged. */
export function redactUrl(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split("&")
    .map((part) => (/^auth(=|$)/i.test(part) ? "auth=[redacted]" : part))
    .join("&");
  return `${url.slice(0, q)}?${query}`;
}
