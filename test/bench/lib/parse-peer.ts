/**
 * Parse Server as the bench's peer: installed on first use (`parse-server@9` with npm into
 * `.bench-tools/parse-server`, git-ignored; it is not a dependency of Tessera) and started by
 * test/bench/servers/parse.ts as a process of its own on loopback, on the bench's store in a
 * database of its own, with random application keys. The peer scenarios (parse-insert,
 * parse-read-login) measure Tessera's rows against its rows in the same run.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import type { NodeChild } from "./processes.ts";
import { repoRoot } from "./stack.ts";
import type { BenchContext } from "./types.ts";

const PARSE_VERSION = "9";
const PARSE_DIR = path.join(repoRoot, ".bench-tools", "parse-server");
const APP_ID = "tessera-bench";
/** The class both peer scenarios use, with the fields of Tessera's one-table project (`oneTableProject`). */
export const PARSE_CLASS = "Item";

export interface ParsePeer {
  /** `http://127.0.0.1:<port>`; Parse's API is under `/parse`. */
  url: string;
  version: string;
  /** A client's headers: application id and REST key. */
  headers: Record<string, string>;
  /** The master key's headers (schemas). */
  masterHeaders: Record<string, string>;
  stop(): Promise<void>;
}

/** Installs parse-server into PARSE_DIR unless it is there; the reason when it cannot. */
async function installParse(log: (line: string) => void): Promise<string | undefined> {
  if (existsSync(path.join(PARSE_DIR, "node_modules", "parse-server", "package.json"))) return undefined;
  log(`installing parse-server@${PARSE_VERSION} into ${path.relative(repoRoot, PARSE_DIR)} (first run only)`);
  const args = ["install", "--prefix", PARSE_DIR, "--no-save", "--no-audit", "--no-fund"];
  const npm = spawn("npm", [...args, `parse-server@${PARSE_VERSION}`], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  npm.stderr.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString("utf8")).slice(-2000);
  });
  const code = await new Promise<number | null>((resolve) => {
    npm.once("error", () => resolve(null));
    npm.once("exit", resolve);
  });
  return code === 0 ? undefined : `npm could not install parse-server@${PARSE_VERSION}: ${stderr.trim()}`;
}

/** `url` with its database name replaced by `database` (hosts and options kept). */
function withDatabase(url: string, database: string): string {
  const match = /^(mongodb(?:\+srv)?:\/\/[^/?]*)(?:\/[^?]*)?(\?.*)?$/.exec(url);
  if (!match) throw new Error("MONGO_URL is not a mongodb:// URL");
  return `${match[1]}/${database}${match[2] ?? ""}`;
}

/**
 * Parse Server on the bench's store, in the database `<tenant prefix><database>`, with PARSE_CLASS
 * made and one object of it; a string (the reason, for `ctx.pending`) when it cannot be installed,
 * does not start or cannot create an object.
 */
export async function startParsePeer(ctx: BenchContext, database: string): Promise<ParsePeer | string> {
  const { stack } = ctx;
  const notInstalled = await installParse(ctx.log);
  if (notInstalled) return notInstalled;
  const restKey = randomBytes(18).toString("base64url");
  const masterKey = randomBytes(18).toString("base64url");
  let parse: NodeChild;
  try {
    parse = await stack.startServer("parse server", "test/bench/servers/parse.ts", {
      ...process.env,
      PARSE_SERVER_DIR: PARSE_DIR,
      PARSE_DATABASE_URI: withDatabase(stack.mongoUrl, `${stack.dataEnv.TENANT_DB_PREFIX}${database}`),
      PARSE_APP_ID: APP_ID,
      PARSE_MASTER_KEY: masterKey,
      PARSE_REST_KEY: restKey,
      PARSE_EMBEDDED_STORE: process.env.MONGO_URL ? "0" : "1",
    });
  } catch (err) {
    return `Parse Server did not start on this store (its error is in the log above): ${err}`;
  }
  const peer: ParsePeer = {
    url: parse.url,
    version: PARSE_VERSION,
    headers: { "X-Parse-Application-Id": APP_ID, "X-Parse-REST-API-Key": restKey },
    masterHeaders: { "X-Parse-Application-Id": APP_ID, "X-Parse-Master-Key": masterKey },
    stop: async () => {
      delete stack.cpuGroups.parse;
      await parse.stop();
    },
  };
  // Rows measured while it runs count its process's CPU (Parse's own, beside the store's).
  stack.cpuGroups.parse = parse.process.pid;
  const notMade = await makeItemClass(peer);
  if (notMade === undefined) return peer;
  await peer.stop();
  return notMade;
}

/** A JSON request to Parse: its status and parsed answer (the answer's text when it is not JSON). */
export async function parseRequest(
  peer: ParsePeer,
  method: "GET" | "POST",
  route: string,
  options: { body?: unknown; master?: boolean } = {},
): Promise<{ status: number; body: unknown }> {
  const reply = await fetch(`${peer.url}/parse${route}`, {
    method,
    headers: {
      ...(options.master ? peer.masterHeaders : peer.headers),
      ...(options.body !== undefined && { "content-type": "application/json" }),
    },
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await reply.text();
  try {
    return { status: reply.status, body: JSON.parse(text) };
  } catch {
    return { status: reply.status, body: text };
  }
}

/**
 * Makes PARSE_CLASS (clients may not create classes; the master key may) and one object of it;
 * the reason when Parse cannot, else undefined.
 */
async function makeItemClass(peer: ParsePeer): Promise<string | undefined> {
  const schema = await parseRequest(peer, "POST", `/schemas/${PARSE_CLASS}`, {
    master: true,
    body: { className: PARSE_CLASS, fields: { name: { type: "String" }, qty: { type: "Number" } } },
  });
  const created = await parseRequest(peer, "POST", `/classes/${PARSE_CLASS}`, {
    body: { name: "first", qty: 1 },
  });
  if (created.status === 201) return undefined;
  const answers = `schema ${schema.status} ${JSON.stringify(schema.body)}; create ${created.status} ${JSON.stringify(created.body)}`;
  return `Parse Server started but cannot create an object on this store: ${answers}`;
}
