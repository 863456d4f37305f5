import { Writable } from "node:stream";
import { expect } from "chai";
import { ApiError } from "../../../shared/errors.ts";
import { fingerprint, loggableError } from "../../../shared/loggable-error.ts";
import { createLogger, redactUrl } from "../../../shared/logger.ts";

describe("logging never carries secrets", () => {
  it("strips every auth parameter from a URL", () => {
    expect(redactUrl("/rest/a/p/v1/customer?auth=tsk_secret:1&filter=x")).to.equal(
      "/rest/a/p/v1/customer?auth=[redacted]&filter=x",
    );
    expect(redactUrl("/x?filter=a&AUTH=k&auth=k2")).to.equal("/x?filter=a&auth=[redacted]&auth=[redacted]");
    expect(redactUrl("/x?author=me")).to.equal("/x?author=me");
    expect(redactUrl("/x")).to.equal("/x");
  });

  it("strips a parameter whose name only decodes to auth (as the data service reads names)", () => {
    for (const name of ["a%75th", "%61%75%74%68", "AU%54H", "%41uth"]) {
      const url = `/rest/a/p/v1/customer?filter=x&${name}=tsk_secret:1`;
      expect(redactUrl(url), name).to.not.contain("tsk_secret");
      expect(redactUrl(url)).to.contain("filter=x");
    }
    // Undecodable names are kept out of the log rather than guessed at.
    expect(redactUrl("/x?%E0%A4%A=tsk_secret")).to.not.contain("tsk_secret");
    expect(redactUrl("/x?a%75thor=me")).to.equal("/x?a%75thor=me");
  });

  it("redacts keys, passwords and Authorization headers in log objects", () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(chunk.toString());
        cb();
      },
    });
    createLogger("test", "info", sink).info({
      password: "hunter2",
      apikey: "tsk_x",
      req: { headers: { authorization: "Tessera tsk_y:1" } },
      body: { newPassword: "n3w", new_password: "n3w2" },
    });
    const text = lines.join("");
    for (const secret of ["hunter2", "tsk_x", "tsk_y", "n3w"]) expect(text).to.not.contain(secret);
    expect(text).to.contain("[redacted]");
  });

  describe("errors are logged without their message", () => {
    it("name, a fingerprint of the message and the stack frames", () => {
      let err: Error;
      try {
        JSON.parse("hunter2");
        throw new Error("unreachable");
      } catch (e) {
        err = e as Error;
      }
      const logged = loggableError(err);
      expect(JSON.stringify(logged)).to.not.contain("hunter2");
      expect(logged).to.include({ name: "SyntaxError", fingerprint: fingerprint(err.message) });
      expect(logged.fingerprint).to.match(/^[0-9a-f]{12}$/);
      expect(logged.frames?.[0]).to.match(/^at /);
    });

    it("a message with lines that look like stack frames does not slip through", () => {
      const logged = loggableError(new Error("first line\n    at hunter2 (secret.js:1:1)\nlast"));
      expect(JSON.stringify(logged)).to.not.contain("hunter2");
      expect(logged.frames?.length).to.be.greaterThan(0);
    });

    it("an API error keeps its codes; causes are described the same way; non-errors too", () => {
      const cause = Object.assign(new Error("Rule failed: row-secret"), { kind: "script" });
      const logged = loggableError(new ApiError(503, 5031, "quoted row-secret", { cause }));
      expect(JSON.stringify(logged)).to.not.contain("row-secret");
      expect(logged).to.include({ name: "ApiError", statusCode: 503, errorCode: 5031 });
      expect(logged.cause).to.include({
        name: "Error",
        kind: "script",
        fingerprint: fingerprint(cause.message),
      });
      expect(loggableError("row-secret")).to.deep.equal({
        name: "string",
        fingerprint: fingerprint("row-secret"),
      });
    });
  });
});
