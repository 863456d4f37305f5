import type { IncomingMessage } from "node:http";
import { expect } from "chai";
import {
  authConfigSchema,
  ConfigError,
  dataConfigSchema,
  parseConfig,
} from "../../../shared/config/config.ts";
import { compileTrustedProxies, requestOrigin } from "../../../shared/http/forwarding.ts";

/** Just the parts of a request requestOrigin reads. */
function request(remoteAddress: string, headers: Record<string, string>, encrypted = false): IncomingMessage {
  return {
    socket: { remoteAddress, encrypted },
    connection: { remoteAddress },
    headers,
  } as unknown as IncomingMessage;
}

describe("forwarded headers from trusted proxies only", () => {
  const trust = compileTrustedProxies(["10.0.0.0/8", "loopback"]);
  const forged = {
    "x-forwarded-for": "203.0.113.7",
    "x-forwarded-host": "evil.example",
    "x-forwarded-proto": "https",
    host: "api.example.com",
  };

  it("an untrusted peer: its socket address and its Host, whatever it forwards", () => {
    expect(requestOrigin(request("198.51.100.4", forged), trust)).to.deep.equal({
      address: "198.51.100.4",
      origin: "http://api.example.com",
    });
  });

  it("a trusted peer: the client it forwards for, and the host and protocol it says", () => {
    expect(requestOrigin(request("10.1.2.3", forged), trust)).to.deep.equal({
      address: "203.0.113.7",
      origin: "https://evil.example",
    });
  });

  it("walks X-Forwarded-For from the right past trusted proxies only", () => {
    const headers = { "x-forwarded-for": "192.0.2.66, 198.51.100.9, 10.9.9.9", host: "h" };
    expect(requestOrigin(request("10.1.2.3", headers), trust).address).to.equal("198.51.100.9");
  });

  it("IPv4-mapped IPv6 addresses are plain IPv4; a TLS socket is https", () => {
    expect(requestOrigin(request("::ffff:198.51.100.4", { host: "h" }, true), trust)).to.deep.equal({
      address: "198.51.100.4",
      origin: "https://h",
    });
  });

  it("ignores a forwarded protocol other than http or https", () => {
    const headers = { "x-forwarded-proto": "javascript", host: "h" };
    expect(requestOrigin(request("127.0.0.1", headers), trust).origin).to.equal("http://h");
  });

  it("TRUSTED_PROXIES is validated at start-up, without echoing values", () => {
    const base = { ADMIN_TOKEN: "a", SERVICE_TOKEN: "s", MONGO_URL: "mongodb://x" };
    expect(parseConfig(authConfigSchema, base).TRUSTED_PROXIES).to.deep.equal([]);
    expect(
      parseConfig(dataConfigSchema, { ...base, TRUSTED_PROXIES: " 10.0.0.0/8, ::1 ,uniquelocal" })
        .TRUSTED_PROXIES,
    ).to.deep.equal(["10.0.0.0/8", "::1", "uniquelocal"]);
    for (const bad of ["10.0.0.0/33", "proxy.example.com", "10.0.0.1,everyone"]) {
      expect(() => parseConfig(authConfigSchema, { ...base, TRUSTED_PROXIES: bad }), bad)
        .to.throw(ConfigError, /TRUSTED_PROXIES: entry \d is not/)
        .with.property("message")
        .that.does.not.contain(bad.split(",").at(-1));
    }
  });
});
