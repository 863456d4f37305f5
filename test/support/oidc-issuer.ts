/**
 * Starts the test OpenID Connect issuer (oidc-issuer-process.ts) as a real
 * process on loopback and talks to it: tokens signed with its keys, key
 * rotation, the key set's `Cache-Control`, and how often its documents were
 * fetched.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { call } from "./http.ts";

const SCRIPT = path.resolve(import.meta.dirname, "oidc-issuer-process.ts");

export interface OidcIssuer {
  /** The issuer URL (`http://127.0.0.1:<port>`), also its tokens' `iss`. */
  url: string;
  /** A token with these claims (`iss` the issuer's unless given), signed with the current published key or one never published. */
  sign(claims: Record<string, unknown>, options?: { key?: "published" | "unpublished" }): Promise<string>;
  /** A token whose payload is exactly `payload` (JSON text of the test's making), signed with the current key. */
  signPayload(payload: string): Promise<string>;
  /** Publishes a new key and signs with it from now on. */
  rotate(): Promise<void>;
  setJwksCacheControl(value: string): Promise<void>;
  stats(): Promise<{ discovery: number; jwks: number }>;
  /** The current signing key's public key, SPKI PEM. */
  publicPem(): Promise<string>;
  stop(): Promise<void>;
}

export async function startOidcIssuer(): Promise<OidcIssuer> {
  const child = spawn(process.execPath, [SCRIPT], { stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const firstLine = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`the test issuer exited with ${code}`)));
  });
  const url = `http://127.0.0.1:${(JSON.parse(firstLine) as { port: number }).port}`;
  const control = async (method: string, what: string, body?: unknown) => {
    const r = await call(url, method, `/control/${what}`, { body });
    if (r.status !== 200) throw new Error(`the test issuer answered ${r.status} to ${what}`);
    return r.body;
  };
  return {
    url,
    sign: async (claims, options = {}) => (await control("POST", "sign", { claims, key: options.key })).token,
    signPayload: async (payload) => (await control("POST", "sign", { payload })).token,
    rotate: async () => {
      await control("POST", "rotate");
    },
    setJwksCacheControl: async (value) => {
      await control("POST", "cache-control", { value });
    },
    stats: () => control("GET", "stats"),
    publicPem: async () => (await control("GET", "public-pem")).pem,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
    },
  };
}
