/**
 * The auth service's client of the data service's internal API takes no answer
 * on trust: each is parsed with its contract's schema (shared/contracts/internal-api.ts).
 * An answer out of contract is the data service failing (503/5031), never a value
 * handed on. A real HTTP server on loopback plays a data service that answers wrong.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "chai";
import { createDataServiceClient } from "../../../services/auth/src/clients/data-service-client.ts";
import { ApiError, ErrorCode } from "../../../shared/errors.ts";

interface Answer {
  status: number;
  body: string;
  headers?: Record<string, string>;
}

const SETTINGS = {
  account: "acme",
  name: "demo",
  uid: "6f1c2b0e",
  revision: 1,
  versions: ["v1"],
  roles: ["Full access"],
  provider: "builtin",
  keyLifetimeSeconds: 3600,
  identityFields: ["username"],
};

describe("auth service: the data service client parses every answer with its contract", () => {
  let server: Server;
  let answer: Answer;
  let baseUrl: string;

  before(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(answer.status, { "content-type": "application/json", ...answer.headers });
        res.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const client = () => createDataServiceClient(baseUrl, "token", 5_000);
  const answering = (status: number, body: unknown, headers?: Record<string, string>) => {
    answer = { status, body: typeof body === "string" ? body : JSON.stringify(body), headers };
  };
  async function failure(promise: Promise<unknown>): Promise<ApiError> {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(ApiError);
      return err as ApiError;
    }
    expect.fail("the call succeeded");
  }

  it("an answer in contract is handed on", async () => {
    answering(200, SETTINGS);
    expect(await client().settings("acme", "demo", "r1")).to.deep.equal(SETTINGS);
  });

  it("settings with a field of the wrong type or missing: 503/5031", async () => {
    for (const body of [
      { ...SETTINGS, revision: "1" },
      { ...SETTINGS, uid: undefined },
      { ...SETTINGS, provider: "ldap" },
      [],
      null,
    ]) {
      answering(200, body);
      const err = await failure(client().settings("acme", "demo", "r1"));
      expect([err.statusCode, err.errorCode], JSON.stringify(body)).to.deep.equal([503, 5031]);
    }
  });

  it("a successful verdict without its user identifier, or a verdict neither ok nor failed: 503/5031", async () => {
    for (const verdict of [
      { ok: true, roles: [], globals: {} },
      { ok: "yes", message: "fine" },
      { ok: false },
    ]) {
      answering(200, { project: SETTINGS, verdict });
      const body = { payload: { username: "a" }, enablePasswordChange: false };
      const err = await failure(client().authenticate("acme", "demo", body, "r1"));
      expect([err.statusCode, err.errorCode], JSON.stringify(verdict)).to.deep.equal([503, 5031]);
    }
  });

  it("an administrator with a role the contract does not know: 503/5031", async () => {
    answering(200, { login: "ann", role: "owner", accountUid: "u1", credentialStamp: "s1" });
    const err = await failure(client().admin("acme", "ann", "r1"));
    expect([err.statusCode, err.errorCode]).to.deep.equal([503, 5031]);
  });

  it("an answer that is not JSON: 503/5031", async () => {
    answering(200, "<html>gateway</html>");
    const err = await failure(client().account("acme", "r1"));
    expect([err.statusCode, err.errorCode]).to.deep.equal([503, 5031]);
  });

  it("a 404 is null; a 429 is passed on, its body's parts that are not of their type left out", async () => {
    answering(404, { statusCode: 404, errorCode: 4041, errorMessage: "No such project" });
    expect(await client().loginInfo("acme", "demo", "r1")).to.equal(null);
    answering(429, { errorCode: "4291", errorMessage: "Slow down" }, { "Retry-After": "3" });
    const err = await failure(client().loginInfo("acme", "demo", "r1"));
    expect([err.statusCode, err.errorCode, err.message]).to.deep.equal([
      429,
      ErrorCode.rateLimited,
      "Slow down",
    ]);
  });
});
