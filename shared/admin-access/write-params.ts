/**
 * The query parameters admin writes take: only a project's PUT and a
 * project's import from Live API Creator take one (`dryRun`). Any other parameter on a write — a misspelt `dryrun` included —
 * is refused with 400/4001 before the handler runs, so a request that meant
 * something else changes nothing. Reads keep their own parameters (paging).
 */
import { errors } from "../errors.ts";

const WRITE_PARAMS: { method: string; path: RegExp; params: readonly string[] }[] = [
  { method: "PUT", path: /^\/admin\/v1\/accounts\/[^/]+\/projects\/[^/]+\/?$/i, params: ["dryRun"] },
  {
    method: "POST",
    path: /^\/admin\/v1\/accounts\/[^/]+\/projects\/[^/]+\/import\/lac\/?$/i,
    params: ["dryRun"],
  },
];
const READ_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function parameterName(part: string): string {
  const [raw = ""] = part.split("=", 1);
  try {
    return decodeURIComponent(raw.replaceAll("+", " "));
  } catch {
    throw errors.malformed("A query parameter's name is not valid percent-encoding");
  }
}

/** 400/4001 when a write's query string names a parameter the write does not take. */
export function checkWriteParams(method: string, path: string, querystring: string): void {
  if (READ_METHODS.has(method) || querystring === "") return;
  const taken = WRITE_PARAMS.find((w) => w.method === method && w.path.test(path))?.params ?? [];
  for (const part of querystring.split("&")) {
    if (part === "") continue;
    const name = parameterName(part);
    if (!taken.includes(name)) {
      throw errors.malformed(
        taken.length === 0
          ? `Unknown query parameter '${name}': this request takes none`
          : `Unknown query parameter '${name}': this request takes only ${taken.map((t) => `'${t}'`).join(", ")}`,
      );
    }
  }
}
