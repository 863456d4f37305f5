import { expect } from "chai";
import {
  identityFieldsOfLoginForm,
  loginIdentity,
} from "../../../services/auth/src/domain/login-identity.ts";

describe("login identity", () => {
  it("reads the identity fields only, ignoring letter case, blanks and the password", () => {
    const fields = ["email"];
    const a = loginIdentity({ email: "Ann@Example.com ", password: "x" }, fields);
    expect(loginIdentity({ email: "ann@example.com", password: "y" }, fields)).to.equal(a);
    expect(loginIdentity({ email: "bob@example.com", password: "x" }, fields)).to.not.equal(a);
  });

  it("keeps several fields apart (no ambiguity from joining them)", () => {
    const fields = ["tenant", "user"];
    expect(loginIdentity({ tenant: "a,b", user: "c" }, fields)).to.not.equal(
      loginIdentity({ tenant: "a", user: "b,c" }, fields),
    );
  });

  it("a missing field is not an inherited property", () => {
    expect(loginIdentity({}, ["__proto__"])).to.equal(loginIdentity({}, ["constructor"]));
  });

  it("without identity fields, the whole credential set (in any key order) is the identity", () => {
    expect(loginIdentity({ a: 1, b: { d: 2, c: 3 } }, undefined)).to.equal(
      loginIdentity({ b: { c: 3, d: 2 }, a: 1 }, undefined),
    );
    expect(loginIdentity({ a: 1 }, undefined)).to.not.equal(loginIdentity({ a: 2 }, undefined));
  });

  it("derives the identity fields from a login form: every field that is not a password", () => {
    const form = (types: string[]) => ({
      fields: types.map((type, i) => ({ name: `f${i}`, display: `f${i}`, type })),
      links: [],
    });
    expect(identityFieldsOfLoginForm(form(["email", "password", "text"]))).to.deep.equal(["f0", "f2"]);
    expect(identityFieldsOfLoginForm(form(["Password"]))).to.equal(undefined);
  });
});
