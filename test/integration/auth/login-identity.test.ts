/**
 * The lock-out counts failures per identity the provider really uses: an
 * e-mail-based custom provider's users do not share one counter (the login
 * body has no `username`). The identity comes from `authentication.identityFields`
 * when declared, else from the provider's login form (its fields that are not
 * passwords).
 */
import { randomUUID } from "node:crypto";
import { expect } from "chai";
import { demoProject } from "../../fixtures/demo-project.ts";
import { adminClient, projectClient } from "../../support/http.ts";
import { type Platform, startPlatform } from "../../support/platform.ts";

/** Checks `payload.email` / `payload.password` against `config.users`; the form is declared only when `config.form`. */
const emailProviderCode = `
function emailCreate() {
  let users = {};
  let form = false;
  return {
    configure(config) { users = config.users; form = config.form === true; },
    getLoginInfo() {
      if (!form) return { fields: [{ name: "username", type: "text" }, { name: "password", type: "password" }], links: [] };
      return { fields: [{ name: "email", display: "E-mail", type: "email" }, { name: "password", type: "password" }], links: [] };
    },
    authenticate(payload) {
      if (users[payload.email] !== undefined && users[payload.email] === payload.password) {
        return { roleNames: ["Full access"], userIdentifier: payload.email };
      }
      return { errorMessage: "no" };
    }
  };
}`;

function emailProject(extra: Record<string, unknown>) {
  return demoProject({
    authentication: {
      provider: "custom",
      library: "email",
      createFunction: "emailCreate",
      ...extra,
    },
    libraries: { email: { code: emailProviderCode } },
  });
}

describe("login lock-out keyed on the provider's identity", () => {
  let platform: Platform;
  const users = { "real@example.com": "real-password", "other@example.com": "other-password" };

  before(async () => {
    platform = await startPlatform({
      LOGIN_FAILURES_BEFORE_LOCKOUT: "3",
      LOGIN_LOCKOUT_BASE_SECONDS: "30",
      LOGIN_LOCKOUT_MAX_SECONDS: "60",
    });
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    await admin.putAccount("acme");
    const projects = {
      // The login form names the e-mail field: derived from it.
      derived: emailProject({ config: { users, form: true } }),
      // The form says username/password, but the provider reads `email`: declared.
      declared: emailProject({ config: { users, form: false }, identityFields: ["email"] }),
    };
    for (const [name, definition] of Object.entries(projects)) {
      const put = await admin.putProject("acme", name, definition);
      expect(put.status, JSON.stringify(put.body)).to.be.oneOf([200, 201]);
    }
  });
  after(() => platform?.close());

  for (const project of ["derived", "declared"]) {
    describe(`identity ${project}`, () => {
      const client = () => projectClient(platform.baseUrl, "acme", project);

      it("failures with random e-mails do not lock out another user", async () => {
        for (let i = 0; i < 8; i++) {
          const r = await client().login({ email: `${randomUUID()}@example.com`, password: "guess" });
          expect(r.status, JSON.stringify(r.body)).to.equal(401);
        }
        const real = await client().login({ email: "real@example.com", password: "real-password" });
        expect(real.status, JSON.stringify(real.body)).to.equal(200);
      });

      it("failures for one e-mail (in any letter case) lock out that e-mail only", async () => {
        for (const email of ["other@example.com", "Other@Example.com", " OTHER@example.com"]) {
          expect((await client().login({ email, password: "guess" })).status).to.equal(401);
        }
        const locked = await client().login({ email: "other@example.com", password: "other-password" });
        expect(locked.status).to.equal(429);
        expect(locked.body.errorCode).to.equal(4291);
        const real = await client().login({ email: "real@example.com", password: "real-password" });
        expect(real.status).to.equal(200);
      });
    });
  }

  it("identityFields is validated: a list of 1 to 10 field names", async () => {
    const admin = adminClient(platform.baseUrl, platform.adminToken);
    for (const bad of [[], "email", [""], [42]]) {
      const r = await admin.putProject(
        "acme",
        "bad",
        emailProject({ config: { users }, identityFields: bad }),
      );
      expect(r.status, JSON.stringify(bad)).to.equal(400);
      expect(r.body.errorCode).to.equal(4001);
    }
  });
});
