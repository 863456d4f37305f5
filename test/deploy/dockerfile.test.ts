/**
 * Static checks of deploy/Dockerfile (the build itself is exercised by `make images`
 * with podman, and the images run by `make test-deploy`): one
 * target per service with the right entrypoint, production dependencies only,
 * tini as PID 1, a numeric non-root user that matches the manifests, a
 * HEALTHCHECK, a pinned base image and an allow-list build context.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { expect } from "chai";
import { treeImports } from "../support/import-graph.ts";
import { byName, deployDir, render, repoRoot, type Workload } from "./support.ts";

interface Stage {
  name: string;
  from: string;
  instructions: { op: string; args: string }[];
}

/** Splits a Dockerfile into stages of (instruction, arguments), joining continuation lines. */
function parseDockerfile(text: string): { args: Map<string, string>; stages: Stage[] } {
  const logical = text
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
  const args = new Map<string, string>();
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, op, rest] = /^(\w+)\s+(.*)$/.exec(line) ?? [];
    if (!op) continue;
    if (op.toUpperCase() === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest!.trim())!;
      stages.push({ from: m[1]!, name: m[2] ?? String(stages.length), instructions: [] });
    } else if (stages.length === 0 && op.toUpperCase() === "ARG") {
      const [k, v] = rest!.split("=");
      args.set(k!.trim(), v?.trim() ?? "");
    } else {
      stages.at(-1)?.instructions.push({ op: op.toUpperCase(), args: rest!.trim() });
    }
  }
  return { args, stages };
}

const dockerfile = parseDockerfile(readFileSync(path.join(deployDir, "Dockerfile"), "utf8"));
const stage = (name: string) => {
  const s = dockerfile.stages.find((x) => x.name === name);
  if (!s) throw new Error(`deploy/Dockerfile has no stage ${name}`);
  return s;
};
/** Instructions of a stage including the stages it is built FROM. */
const effective = (name: string): Stage["instructions"] => {
  const s = stage(name);
  const parent = dockerfile.stages.find((x) => x.name === s.from);
  return [...(parent ? effective(parent.name) : []), ...s.instructions];
};
const last = (name: string, op: string) =>
  effective(name)
    .filter((i) => i.op === op)
    .at(-1)?.args;

const SERVICES = [
  { target: "auth", port: 8081, cmd: ["node", "services/auth/src/main.ts"], sources: "services/auth" },
  {
    target: "data",
    port: 8082,
    cmd: ["node", "--no-node-snapshot", "services/data/src/main.ts"],
    sources: "services/data",
  },
  // The console's image holds its server's code and the built files, not the browser code's sources.
  {
    target: "console",
    port: 8083,
    cmd: ["node", "services/console/src/main.ts"],
    sources: "services/console/src",
  },
];

describe("deploy/Dockerfile", () => {
  it("builds on a Node 24 image pinned to an exact version (never latest)", () => {
    const image = dockerfile.args.get("NODE_IMAGE");
    expect(image).to.match(/^node:24\.\d+\.\d+-[a-z]+-slim(@sha256:[0-9a-f]{64})?$/);
    for (const s of dockerfile.stages) expect(s.from, s.name).to.not.match(/:latest\b/);
  });

  it("builds the service named by --build-arg SERVICE when no --target is given", () => {
    const final = dockerfile.stages.at(-1)!;
    expect(final.from).to.equal("$" + "{SERVICE}");
    expect(dockerfile.args.get("SERVICE")).to.be.oneOf(SERVICES.map((svc) => svc.target));
    for (const svc of SERVICES) expect(dockerfile.stages.map((s) => s.name)).to.include(svc.target);
  });

  it("installs production dependencies only, with npm ci from the lock file", () => {
    const deps = stage("deps").instructions;
    expect(deps.some((i) => i.op === "COPY" && /package\.json package-lock\.json/.test(i.args))).to.equal(
      true,
    );
    expect(deps.some((i) => i.op === "RUN" && /npm ci --omit=dev/.test(i.args))).to.equal(true);
    const runtimeCopies = effective("runtime").filter((i) => i.op === "COPY");
    expect(runtimeCopies.filter((i) => /node_modules/.test(i.args)).map((i) => i.args)).to.deep.equal([
      "--from=deps --chown=root:root /app/node_modules ./node_modules",
    ]);
  });

  for (const svc of SERVICES) {
    describe(`target ${svc.target}`, () => {
      it("runs its entrypoint under tini", () => {
        expect(JSON.parse(last(svc.target, "ENTRYPOINT")!)).to.deep.equal(["/usr/bin/tini", "--"]);
        expect(JSON.parse(last(svc.target, "CMD")!)).to.deep.equal(svc.cmd);
        expect(existsSync(path.join(repoRoot, svc.cmd.at(-1)!)), svc.cmd.at(-1)).to.equal(true);
      });

      it("runs as a numeric non-root user, the one the manifests run as", () => {
        const user = last(svc.target, "USER")!;
        expect(user).to.match(/^[1-9]\d*:[1-9]\d*$/);
        const [uid] = user.split(":").map(Number);
        const d = byName(render("base").objects, "Deployment", `tessera-${svc.target}`) as Workload;
        expect(d.spec.template.spec.securityContext?.runAsUser).to.equal(uid);
      });

      it(`listens on ${svc.port} on all interfaces and has a HEALTHCHECK on /healthz`, () => {
        const env = effective(svc.target)
          .filter((i) => i.op === "ENV")
          .map((i) => i.args)
          .join(" ");
        expect(env).to.match(new RegExp(`PORT=${svc.port}\\b`));
        expect(env).to.match(/HOST=0\.0\.0\.0/);
        expect(last(svc.target, "EXPOSE")).to.equal(String(svc.port));
        expect(last(svc.target, "HEALTHCHECK")).to.match(/\/healthz/);
      });

      it("copies only its own service and shared/ into the image", () => {
        const copies = effective(svc.target)
          .filter((i) => i.op === "COPY" && !i.args.includes("--from="))
          .map((i) => i.args.replace(/--chown=\S+\s+/, "").split(/\s+/)[0]);
        expect(copies).to.deep.equal(["package.json", "shared", svc.sources]);
      });
    });
  }

  it("copies into the console's build stage every folder outside the console that its browser code imports", () => {
    const ui = path.join(repoRoot, "services/console/ui/src");
    const outside = new Set(
      treeImports(ui)
        .filter((i) => i.target.startsWith(".."))
        .map((i) => path.relative(repoRoot, path.resolve(ui, i.target)).split(path.sep)[0]!),
    );
    expect([...outside], "the console imports shared/ (names, contracts)").to.include("shared");
    const copied = stage("console-build")
      .instructions.filter((i) => i.op === "COPY" && !i.args.includes("--from"))
      .map((i) => i.args.split(/\s+/)[0]);
    for (const folder of outside) expect(copied, folder).to.include(folder);
  });

  it("builds the console's files in a stage of its own and copies only the result into the console image", () => {
    const build = stage("console-build").instructions;
    expect(
      build.some(
        (i) => i.op === "RUN" && /vite build --config services\/console\/ui\/vite\.config\.ts/.test(i.args),
      ),
    ).to.equal(true);
    const fromBuild = effective("console").filter(
      (i) => i.op === "COPY" && i.args.includes("--from=console-build"),
    );
    expect(fromBuild.map((i) => i.args)).to.deep.equal([
      "--from=console-build --chown=root:root /app/services/console/dist ./services/console/dist",
    ]);
    for (const svc of SERVICES.filter((x) => x.target !== "console")) {
      expect(
        effective(svc.target).some((i) => i.args.includes("console")),
        svc.target,
      ).to.equal(false);
    }
  });

  it("puts the scripts the data service runs inside isolates (.js next to their owners) into its image", () => {
    const scripts = readdirSync(path.join(repoRoot, "services/data/src"), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(".js"))
      .map((f) => `services/data/src/${f}`);
    expect(scripts).to.include.members([
      "services/data/src/sandbox/bootstrap.js",
      "services/data/src/rules/program-dispatcher.js",
      "services/data/src/providers/custom-provider-holder.js",
    ]);
    const copies = effective("data")
      .filter((i) => i.op === "COPY" && !i.args.includes("--from="))
      .map((i) => i.args.replace(/--chown=\S+\s+/, "").split(/\s+/)[0]);
    for (const script of scripts)
      expect(
        copies.some((dir) => script.startsWith(`${dir}/`)),
        script,
      ).to.equal(true);
    // Nothing in the build context's filter drops them again.
    const ignored = readFileSync(path.join(deployDir, "Dockerfile.dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#") && !l.startsWith("!") && l !== "*");
    expect(ignored.filter((l) => /\.js$|services\/data/.test(l))).to.deep.equal([]);
  });

  it("has an allow-list build context (deploy/Dockerfile.dockerignore)", () => {
    const lines = readFileSync(path.join(deployDir, "Dockerfile.dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith("#"));
    expect(lines[0]).to.equal("*");
    expect(lines).to.include.members([
      "!package.json",
      "!package-lock.json",
      "!shared/**",
      "!services/auth/**",
      "!services/data/**",
      "!services/console/**",
      "services/console/dist",
    ]);
    // A local build never reaches the image build: the console is built inside it.
    expect(lines.indexOf("services/console/dist")).to.be.greaterThan(lines.indexOf("!services/console/**"));
    expect(lines.some((l) => /node_modules|\.tools|\.data|\.git/.test(l) && l.startsWith("!"))).to.equal(
      false,
    );
  });
});
