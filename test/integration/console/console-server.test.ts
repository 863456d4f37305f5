/**
 * The console's server, through the edge as production routes it: the built
 * files under /console/ with the security headers (CSP and friends) on every
 * answer, errors in the documented shape, nothing outside the build reachable.
 */
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
