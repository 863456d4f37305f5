import { Writable } from "node:stream";
import { expect } from "chai";
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
});
