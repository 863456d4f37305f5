/**
 * A small OpenID Connect issuer, run as a process of its own by the tests
 * (test/support/oidc-issuer.ts): it generates its signing keys at start, serves
 * its discovery document and key set over loopback, and signs tokens for the
 * tests. Prints `{"port": N}` on stdout once it listens.
 *
 * - GET  /.well-known/openid-configuration, GET /jwks (with `Cache-Control` as
 *   set; counted).
 * - POST /control/sign `{claims, key?: "published" | "unpublished", alg?}` → `{token}`;
 *   `iss` defaults to the issuer. `{payload}` instead of claims: that exact text is signed (a
 *   number JSON.stringify cannot write, `1e400`, say).
 * - POST /control/rotate: a new published key, used to sign from then on → `{kid}`.
 * - POST /control/cache-control `{value}`: the key set's `Cache-Control` from now on.
 * - GET  /control/stats → `{discovery, jwks}` requests served; GET /control/public-pem: the signing key's SPKI.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { CompactSign, type CryptoKey, exportJWK, exportSPKI, generateKeyPair, type JWK, SignJWT } from "jose";

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  jwk: JWK;
}

let serial = 0;
async function newKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const kid = `key-${++serial}-${Date.now().toString(36)}`;
  return {
    kid,
    privateKey,
    publicKey,
    jwk: { ...(await exportJWK(publicKey)), kid, alg: "RS256", use: "sig" },
  };
}

const published: SigningKey[] = [await newKey()];
const unpublished = await newKey();
let current = published[0]!;
let jwksCacheControl = "max-age=600";
const stats = { discovery: 0, jwks: 0 };

function readBody(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  return new Promise((resolve) => {
    let text = "";
    req.on("data", (c) => {
      text += c;
    });
    req.on("end", () => resolve(text ? (JSON.parse(text) as Record<string, unknown>) : {}));
  });
}

const server = http.createServer(async (req, res) => {
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const json = (value: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(200, { "content-type": "application/json", ...headers });
    res.end(JSON.stringify(value));
  };
  switch (`${req.method} ${req.url}`) {
    case "GET /.well-known/openid-configuration":
      stats.discovery++;
      return json({
        issuer: base,
        jwks_uri: `${base}/jwks`,
        id_token_signing_alg_values_supported: ["RS256"],
      });
    case "GET /jwks":
      stats.jwks++;
      return json({ keys: published.map((k) => k.jwk) }, { "cache-control": jwksCacheControl });
    case "POST /control/sign": {
      const { claims, key, alg, payload } = (await readBody(req)) as {
        claims: Record<string, unknown>;
        key?: string;
        alg?: string;
        payload?: string;
      };
      const signer = key === "unpublished" ? unpublished : current;
      const header = { alg: alg ?? "RS256", kid: signer.kid, typ: "JWT" };
      const token =
        payload === undefined
          ? await new SignJWT({ iss: base, ...claims }).setProtectedHeader(header).sign(signer.privateKey)
          : await new CompactSign(new TextEncoder().encode(payload))
              .setProtectedHeader(header)
              .sign(signer.privateKey);
      return json({ token });
    }
    case "POST /control/rotate":
      current = await newKey();
      published.push(current);
      return json({ kid: current.kid });
    case "POST /control/cache-control":
      jwksCacheControl = String((await readBody(req)).value);
      return json({});
    case "GET /control/stats":
      return json(stats);
    case "GET /control/public-pem":
      return json({ pem: await exportSPKI(current.publicKey) });
    default:
      res.writeHead(404).end();
  }
});

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
