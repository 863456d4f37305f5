/** The open-file limit the dev stack starts FerretDB under (services/dev-stack/src/file-limit.ts, config.ts). */
import { expect } from "chai";
import { DEFAULT_FERRETDB_FILE_LIMIT, parseDevStackConfig } from "../../../services/dev-stack/src/config.ts";
import {
  type FileLimitFacts,
  hardFileLimit,
  planFileLimit,
  underFileLimit,
} from "../../../services/dev-stack/src/file-limit.ts";

/** A machine where prlimit may set any limit up to `settable`. */
const machine = (
  hard: number | null,
  settable: number,
  more: Partial<FileLimitFacts> = {},
): FileLimitFacts => ({
  hard,
  ceiling: 1_048_576,
  prlimit: true,
  canSet: (n) => n <= settable,
  ...more,
});

describe("dev stack: FerretDB's open-file limit", () => {
  it("reads FERRETDB_FILE_LIMIT once validated, 64,000 by default (MongoDB's recommendation)", () => {
    expect(parseDevStackConfig({}).FERRETDB_FILE_LIMIT).to.equal(DEFAULT_FERRETDB_FILE_LIMIT);
    expect(DEFAULT_FERRETDB_FILE_LIMIT).to.equal(64_000);
    expect(parseDevStackConfig({ FERRETDB_FILE_LIMIT: "200000" }).FERRETDB_FILE_LIMIT).to.equal(200_000);
    for (const bad of ["0", "1023", "lots", "1.5", String(2 ** 20 + 1)])
      expect(() => parseDevStackConfig({ FERRETDB_FILE_LIMIT: bad }), bad).to.throw(/FERRETDB_FILE_LIMIT/);
  });

  it("raises the limit to the one asked where this process may (root with CAP_SYS_RESOURCE)", () => {
    expect(planFileLimit(64_000, machine(20_000, 1_048_576))).to.deep.equal({
      prlimit: true,
      limit: 64_000,
      note: undefined,
    });
  });

  it("stops at fs.nr_open, and says so", () => {
    const plan = planFileLimit(200_000, machine(20_000, 1_048_576, { ceiling: 131_072 }));
    expect(plan).to.include({ prlimit: true, limit: 131_072 });
    expect(plan.note).to.match(/nr_open is 131072/);
  });

  it("falls back to the hard limit where it may not raise it, and says why", () => {
    const plan = planFileLimit(64_000, machine(20_000, 20_000));
    expect(plan).to.include({ prlimit: true, limit: 20_000 });
    expect(plan.note).to.match(/may not raise its hard limit of 20000/);
  });

  it("lowers the limit when asked for less than the hard limit (no permission needed)", () => {
    expect(planFileLimit(4096, machine(20_000, 20_000))).to.include({ prlimit: true, limit: 4096 });
  });

  it("starts FerretDB as is where prlimit is missing or fails", () => {
    expect(planFileLimit(64_000, machine(20_000, 0, { prlimit: false }))).to.include({
      prlimit: false,
      limit: 20_000,
    });
    expect(planFileLimit(64_000, machine(null, 0))).to.include({ prlimit: false, limit: null });
  });

  it("runs FerretDB under prlimit with equal soft and hard limits", () => {
    expect(underFileLimit({ prlimit: true, limit: 64_000 }, "/bin/ferretdb", ["--a"])).to.deep.equal([
      "prlimit",
      ["--nofile=64000:64000", "--", "/bin/ferretdb", "--a"],
    ]);
    expect(underFileLimit({ prlimit: false, limit: 20_000 }, "/bin/ferretdb", ["--a"])).to.deep.equal([
      "/bin/ferretdb",
      ["--a"],
    ]);
  });

  it("reads the hard limit from /proc/self/limits", () => {
    const limits =
      "Limit                     Soft Limit           Hard Limit           Units     \n" +
      "Max open files            1024                 20000                files     \n";
    expect(hardFileLimit(limits)).to.equal(20_000);
    expect(hardFileLimit("")).to.equal(null);
  });
});
