/**
 * The built console (services/console/dist), read into memory once at start-up:
 * requests are answered from this table and never reach the file system, so no
 * request path can name a file outside the build.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

/** The encodings the build writes beside a file (`.br`, `.gz`), best first. */
export const PRECOMPRESSED = [
  { encoding: "br", suffix: ".br" },
  { encoding: "gzip", suffix: ".gz" },
] as const;

export type Encoding = (typeof PRECOMPRESSED)[number]["encoding"];

export interface EncodedBody {
  body: Buffer;
  etag: string;
}

export interface StaticFile {
  body: Buffer;
  contentType: string;
  etag: string;
  /** The same content compressed at build, by encoding (none for a file the build did not compress). */
  encoded: Partial<Record<Encoding, EncodedBody>>;
  /** Names with a content hash (Vite's `assets/`) never change: they may be cached for good. */
  immutable: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
  ".txt": "text/plain; charset=utf-8",
};

const etagOf = (body: Buffer) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/**
 * Maps each URL path under `mount` (e.g. `/console/`) to its file; the directory's
 * `index.html` is also served at `mount` itself. Fails when the build is missing.
 */
export function loadStaticFiles(dir: string, mount: string): Map<string, StaticFile> {
  if (
    !statSync(dir, { throwIfNoEntry: false })?.isDirectory() ||
    !statSync(path.join(dir, "index.html"), { throwIfNoEntry: false })
  ) {
    throw new Error(`The console is not built (no ${path.join(dir, "index.html")}): run \`make console\``);
  }
  const table = new Map<string, StaticFile>();
  for (const file of filesUnder(dir)) {
    const relative = path.relative(dir, file).split(path.sep).join("/");
    const contentType = CONTENT_TYPES[path.extname(file).toLowerCase()];
    if (!contentType) continue;
    const body = readFileSync(file);
    const encoded: StaticFile["encoded"] = {};
    for (const { encoding, suffix } of PRECOMPRESSED) {
      const compressed = statSync(file + suffix, { throwIfNoEntry: false })
        ? readFileSync(file + suffix)
        : undefined;
      if (compressed) encoded[encoding] = { body: compressed, etag: etagOf(compressed) };
    }
    const entry: StaticFile = {
      body,
      contentType,
      etag: etagOf(body),
      encoded,
      immutable: relative.startsWith("assets/"),
    };
    table.set(mount + relative, entry);
    if (relative === "index.html") table.set(mount, entry);
  }
  return table;
}
