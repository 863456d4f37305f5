/**
 * The console's server, through the edge as production routes it: the built
 * files under /console/ with the security headers (CSP and friends) on every
 * answer, errors in the documented shape, nothing outside the build reachable.
 */
import { request } from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { expect } from "chai";
import { CONTENT_SECURITY_POLICY } from "../../../services/console/src/security-headers.ts";
import { call } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

describe("console server", () => {
  let platform: Platform;
  before(async () => {
    platform = await startPlatform({}, { console: true });
  });
  after(() => platform.close());

  it("serves the console at /console/ with a strict Content-Security-Policy", async () => {
    const r = await fetch(`${platform.baseUrl}/console/`);
    expect(r.status).to.equal(200);
    expect(r.headers.get("content-type")).to.equal("text/html; charset=utf-8");
    const csp = r.headers.get("content-security-policy")!;
    expect(csp).to.equal(CONTENT_SECURITY_POLICY);
    for (const directive of [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
      "require-trusted-types-for 'script'",
    ]) {
      expect(csp).to.include(directive);
    }
    expect(csp).to.not.match(/unsafe-inline|unsafe-eval|\*/);
    expect(r.headers.get("x-frame-options")).to.equal("DENY");
    expect(r.headers.get("x-content-type-options")).to.equal("nosniff");
    expect(r.headers.get("referrer-policy")).to.equal("no-referrer");
    expect(r.headers.get("cache-control")).to.equal("no-cache");
    const html = await r.text();
    // Only external scripts and styles: nothing the policy would have to allow inline.
    expect(html).to.match(/<script type="module" crossorigin src="\/console\/assets\/[^"]+\.js"><\/script>/);
    expect(html).to.not.match(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).to.not.match(/<style|\sstyle=/);
  });

  it("serves the hashed assets for good, and answers 304 to a matching If-None-Match", async () => {
    const html = await (await fetch(`${platform.baseUrl}/console/`)).text();
    const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)![1]!;
    const r = await fetch(`${platform.baseUrl}${script}`);
    expect(r.status).to.equal(200);
    expect(r.headers.get("content-type")).to.equal("text/javascript; charset=utf-8");
    expect(r.headers.get("cache-control")).to.equal("public, max-age=31536000, immutable");
    expect(r.headers.get("content-security-policy")).to.equal(CONTENT_SECURITY_POLICY);
    const again = await fetch(`${platform.baseUrl}${script}`, {
      headers: { "if-none-match": r.headers.get("etag")! },
    });
    expect(again.status).to.equal(304);
  });

  /** A GET as it is on the wire (fetch would decode the body). */
  const raw = (url: string, acceptEncoding?: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const req = request(
        url,
        { headers: acceptEncoding ? { "accept-encoding": acceptEncoding } : {} },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end();
    });

  it("serves the build's brotli or gzip copy to a browser that accepts it, the same content", async () => {
    const html = await (await fetch(`${platform.baseUrl}/console/`)).text();
    for (const asset of html.match(/\/console\/assets\/[^"]+\.(js|css)/g)!) {
      const plain = await raw(`${platform.baseUrl}${asset}`);
      expect(plain.headers["content-encoding"], asset).to.equal(undefined);
      expect(plain.headers.vary, asset).to.include("Accept-Encoding");
      const br = await raw(`${platform.baseUrl}${asset}`, "gzip, deflate, br");
      expect(br.headers["content-encoding"], asset).to.equal("br");
      expect(br.headers["cache-control"]).to.equal("public, max-age=31536000, immutable");
      expect(brotliDecompressSync(br.body).equals(plain.body), asset).to.equal(true);
      expect(br.body.length, asset).to.be.below(plain.body.length / 2);
      const gzip = await raw(`${platform.baseUrl}${asset}`, "gzip");
      expect(gzip.headers["content-encoding"], asset).to.equal("gzip");
      expect(gunzipSync(gzip.body).equals(plain.body), asset).to.equal(true);
      expect(gzip.headers.etag, "each encoding has its own ETag").to.not.equal(br.headers.etag);
      const refused = await raw(`${platform.baseUrl}${asset}`, "br;q=0, gzip;q=0");
      expect(refused.headers["content-encoding"], asset).to.equal(undefined);
      const again = await fetch(`${platform.baseUrl}${asset}`, {
        headers: { "accept-encoding": "br", "if-none-match": String(br.headers.etag) },
      });
      expect(again.status).to.equal(304);
    }
    const page = await raw(`${platform.baseUrl}/console/`, "br");
    expect(page.headers["content-encoding"]).to.equal("br");
    expect(page.headers["cache-control"]).to.equal("no-cache");
  });

  it("redirects /console to /console/", async () => {
    const r = await fetch(`${platform.baseUrl}/console`, { redirect: "manual" });
    expect(r.status).to.equal(301);
    expect(r.headers.get("location")).to.equal("/console/");
  });

  it("answers unknown files and other methods with the documented error body, headers included", async () => {
    const missing = await call(platform.baseUrl, "GET", "/console/nothing.js");
    expect(missing.status).to.equal(404);
    expect(missing.body).to.include({ statusCode: 404, errorCode: 4041 });
    expect(missing.body.requestId).to.be.a("string");
    expect(missing.headers.get("content-security-policy")).to.equal(CONTENT_SECURITY_POLICY);
    const post = await call(platform.baseUrl, "POST", "/console/", { body: {} });
    expect(post.status).to.equal(405);
    expect(post.body).to.include({ statusCode: 405, errorCode: 4051 });
  });

  it("reaches no file outside the build, however the path is spelled", async () => {
    for (const p of [
      "/console/../package.json",
      "/console/%2e%2e/package.json",
      "/console/%2e%2e%2fpackage.json",
      "/console/assets/..%2f..%2f..%2fsrc%2fmain.ts",
      "/console/..%5c..%5cpackage.json",
      "/console/ui/src/main.tsx",
    ]) {
      const r = await call(platform.baseUrl, "GET", p);
      // The edge (nginx, as ingress-nginx) refuses a path that climbs above the root with 400.
      expect(r.status, p).to.be.oneOf([404, 400]);
      expect(JSON.stringify(r.body), p).to.not.include("tessera");
    }
  });
});
