/**
 * The built-in `oidc` provider through the edge, against a real OpenID
 * Connect issuer process on loopback (test/support/oidc-issuer.ts) that
 * generates its keys and serves discovery and its key set; the operator allows
 * loopback egress (SANDBOX_ALLOW_LOOPBACK_FETCH) as for custom providers.
 * A verified token answers a Tessera key (roles and globals from its claims,
 * no longer-lived than the token); each kind of bad token is refused; the key
 * set is kept per its Cache-Control and fetched again once for an unknown kid.
 */
import { Writable } from "node:stream";
import { expect } from "chai";
import { SignJWT } from "jose";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, call, projectClient } from "../../support/http.ts";
import { type OidcIssuer, startOidcIssuer } from "../../support/oidc-issuer.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

const AUDIENCE = "tessera-demo";

function oidcProject(issuer: string) {
  return demoProject({
    authentication: {
      provider: "oidc",
      keyLifetimeSeconds: 3600,
      oidc: {
        issuer,
        audience: AUDIENCE,
        rolesClaim: "groups",
        roleMap: { sales: ["Region reader"], admins: ["Full access"] },
        globals: { region: "region" },
        clockSkewSeconds: 30,
      },
    },
  });
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Claims of a valid ID token for alice (a sales user of the west region), with `extra` over them. */
function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const now = nowSeconds();
  return {
    sub: "alice",
    aud: AUDIENCE,
    iat: now,
    exp: now + 600,
    groups: ["sales"],
    region: "west",
    ...extra,
  };
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** The log lines of both services, parsed. */
function logSink() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n")) if (line.trim()) lines.push(JSON.parse(line));
      done();
    },
  });
  return { stream, lines };
}

describe("oidc provider", function () {
  this.timeout(60_000);
  let platform: Platform;
  let issuer: OidcIssuer;
  let admin: ReturnType<typeof adminClient>;
  const logs = logSink();
  const client = (project = "oidc") => projectClient(platform.baseUrl, "acme", project);

  /** A failed login (401/4015, no key) whose logged reason names `reason` (jose's error code, say); the token is never logged. */
  async function expectRefused(body: Record<string, unknown>, reason: string) {
    const logged = logs.lines.length;
    const r = await client().login(body);
    expect([r.status, r.body.errorCode], JSON.stringify(r.body)).to.deep.equal([401, 4015]);
    expect(r.body).to.not.have.property("apikey");
    const written = logs.lines.slice(logged);
    const refusals = written.filter((l) => l.msg === "oidc provider refused a login");
    expect(refusals.map((l) => l.reason).join("\n")).to.contain(reason);
    for (const value of Object.values(body)) expect(JSON.stringify(written)).to.not.contain(String(value));
  }

  /** A project of its own (its own cached keys). */
  async function putOidcProject(name: string) {
    const r = await admin.putProject("acme", name, oidcProject(issuer.url));
    expect(r.status, JSON.stringify(r.body)).to.equal(201);
  }

  before(async () => {
    issuer = await startOidcIssuer();
    platform = await startPlatform(
      { SANDBOX_ALLOW_LOOPBACK_FETCH: "true", LOG_LEVEL: "warn" },
      { logSink: logs.stream },
    );
    admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    await putOidcProject("oidc");
    const full = await admin.keyWith("acme", "oidc", ["Full access"]);
    const rows = await client().post(full, "customer", [
      { name: "West One", region: "west" },
      { name: "East One", region: "east" },
    ]);
    expect(rows.status).to.equal(201);
  });

  after(async () => {
    await platform?.close();
    await issuer?.stop();
  });

  describe("logins", () => {
    it("a valid ID token answers a key: roles through the role map, globals from claims, the row filter applies", async () => {
      const r = await client().login({ id_token: await issuer.sign(claims()) });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(r.body.userIdentifier).to.equal("alice");
      expect(r.body.roles).to.deep.equal(["Region reader"]);
      const read = await client().get(r.body.apikey, "customer");
      expect(read.body.map((c: { name: string }) => c.name)).to.deep.equal(["West One"]);
    });

    it("an access token is accepted as well", async () => {
      const token = await issuer.sign(claims({ sub: "svc-7", groups: ["admins"] }));
      const r = await client().login({ access_token: token });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect([r.body.userIdentifier, r.body.roles]).to.deep.equal(["svc-7", ["Full access"]]);
    });

    it("the key lives no longer than the token", async () => {
      const exp = nowSeconds() + 120;
      const r = await client().login({ id_token: await issuer.sign(claims({ exp })) });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect(Date.parse(r.body.expiration)).to.equal(exp * 1000);
    });

    it("the login form asks for a token", async () => {
      const r = await call(platform.baseUrl, "GET", `${client().root}/@authentication`);
      expect(r.body.fields.map((f: { name: string }) => f.name)).to.deep.equal(["id_token"]);
    });

    it("a body without a token, or with both kinds, is refused", async () => {
      const token = await issuer.sign(claims());
      await expectRefused(
        { username: "someone-unseen", password: "pw-never-logged" },
        "no single id_token or access_token",
      );
      await expectRefused({ id_token: token, access_token: token }, "no single id_token or access_token");
    });
  });

  describe("refusals", () => {
    it("alg none", async () => {
      const token = `${base64url({ alg: "none", typ: "JWT" })}.${base64url({ iss: issuer.url, ...claims() })}.`;
      await expectRefused({ id_token: token }, "ERR_JOSE_ALG_NOT_ALLOWED");
    });

    it("an HMAC signature made with the issuer's public key", async () => {
      const pem = await issuer.publicPem();
      const token = await new SignJWT({ iss: issuer.url, ...claims() })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .sign(new TextEncoder().encode(pem));
      await expectRefused({ id_token: token }, "ERR_JOSE_ALG_NOT_ALLOWED");
    });

    it("an expired token", async () => {
      const now = nowSeconds();
      await expectRefused(
        { id_token: await issuer.sign(claims({ iat: now - 7200, exp: now - 3600 })) },
        "ERR_JWT_EXPIRED",
      );
    });

    it("a token not valid yet", async () => {
      await expectRefused(
        { id_token: await issuer.sign(claims({ nbf: nowSeconds() + 3600 })) },
        '"nbf" claim',
      );
    });

    it("a token without exp", async () => {
      await expectRefused({ id_token: await issuer.sign(claims({ exp: undefined })) }, '"exp" claim');
    });

    it("another issuer", async () => {
      await expectRefused(
        { id_token: await issuer.sign(claims({ iss: "https://evil.example" })) },
        '"iss" claim',
      );
    });

    it("another audience", async () => {
      await expectRefused({ id_token: await issuer.sign(claims({ aud: "someone-else" })) }, '"aud" claim');
    });

    it("a token issued in the future beyond the clock skew (within it: accepted)", async () => {
      await expectRefused(
        { id_token: await issuer.sign(claims({ iat: nowSeconds() + 3600 })) },
        "'iat' claim is in the future",
      );
      const within = await client().login({
        id_token: await issuer.sign(claims({ iat: nowSeconds() + 10 })),
      });
      expect(within.status, JSON.stringify(within.body)).to.equal(200);
    });

    it("an exp, nbf or iat that is not a finite number (1e400 parses to Infinity)", async () => {
      for (const [name, value] of [
        ["exp", "1e400"],
        ["nbf", "-1e400"],
        ["iat", "-1e400"],
      ] as const) {
        const text = JSON.stringify({ iss: issuer.url, ...claims(), [name]: "@" }).replace('"@"', value);
        await expectRefused(
          { id_token: await issuer.signPayload(text) },
          `'${name}' claim is not a finite number`,
        );
      }
    });

    it("a token whose parts are not canonical base64url (padding, white space, stray bits)", async () => {
      const token = await issuer.sign(claims());
      const [header, payload, signature] = token.split(".") as [string, string, string];
      // The signature's last character carries 2 bits: another with the same 2 bits decodes alike.
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
      const last = alphabet.indexOf(signature.at(-1)!);
      const stray = alphabet[Math.floor(last / 16) * 16 + (((last % 16) + 1) % 16)]!;
      const variants = [
        `${header}.${payload}.${signature}==`,
        `${header}.${payload}.${signature.slice(0, 10)}\n${signature.slice(10)}`,
        `${token} `,
        `${header}.${payload}.${signature.slice(0, -1)}${stray}`,
      ];
      for (const variant of variants) await expectRefused({ id_token: variant }, "canonical base64url");
      expect((await client().login({ id_token: token })).status).to.equal(200);
    });

    it("an issuer that cannot be reached: 503 naming the identity provider, with Retry-After", async () => {
      const unreachable = "http://127.0.0.1:1";
      const put = await admin.putProject("acme", "unreachable", oidcProject(unreachable));
      expect(put.status, JSON.stringify(put.body)).to.equal(201);
      const r = await client("unreachable").login({
        id_token: await issuer.sign(claims({ iss: unreachable })),
      });
      expect([r.status, r.body.errorCode], JSON.stringify(r.body)).to.deep.equal([503, 5031]);
      expect(r.body.errorMessage).to.include("identity provider").and.include(unreachable);
      expect(r.headers.get("retry-after")).to.equal("5");
      expect(r.body).to.not.have.property("apikey");
    });

    it("an unknown kid, after fetching the key set once more; a second one right after fetches nothing", async () => {
      // The key set is kept (max-age=600) from the logins above.
      expect((await client().login({ id_token: await issuer.sign(claims()) })).status).to.equal(200);
      const before = (await issuer.stats()).jwks;
      const unknown = () => issuer.sign(claims(), { key: "unpublished" });
      await expectRefused({ id_token: await unknown() }, "ERR_JWKS_NO_MATCHING_KEY");
      expect((await issuer.stats()).jwks).to.equal(before + 1);
      await expectRefused({ id_token: await unknown() }, "ERR_JWKS_NO_MATCHING_KEY");
      expect((await issuer.stats()).jwks).to.equal(before + 1);
    });
  });

  describe("the issuer's key set", () => {
    it("is kept as long as its Cache-Control says", async () => {
      await putOidcProject("kept");
      const before = (await issuer.stats()).jwks;
      for (let i = 0; i < 3; i++) {
        expect((await client("kept").login({ id_token: await issuer.sign(claims()) })).status).to.equal(200);
      }
      expect((await issuer.stats()).jwks).to.equal(before + 1);
    });

    it("is fetched on every login when its Cache-Control says no-store", async () => {
      await issuer.setJwksCacheControl("no-store");
      try {
        await putOidcProject("unkept");
        const before = (await issuer.stats()).jwks;
        for (let i = 0; i < 2; i++) {
          expect((await client("unkept").login({ id_token: await issuer.sign(claims()) })).status).to.equal(
            200,
          );
        }
        expect((await issuer.stats()).jwks).to.equal(before + 2);
      } finally {
        await issuer.setJwksCacheControl("max-age=600");
      }
    });

    it("a rotated-in key is found by fetching the key set once more", async () => {
      await putOidcProject("rotation");
      expect((await client("rotation").login({ id_token: await issuer.sign(claims()) })).status).to.equal(
        200,
      );
      await issuer.rotate();
      const before = (await issuer.stats()).jwks;
      const r = await client("rotation").login({ id_token: await issuer.sign(claims()) });
      expect(r.status, JSON.stringify(r.body)).to.equal(200);
      expect((await issuer.stats()).jwks).to.equal(before + 1);
    });
  });
});
