/**
 * The local edge: Debian's nginx (installed by `make run` as Redis is) with the configuration
 * rendered from the routing table (shared/routing/nginx.ts), in a folder of its own: its
 * configuration, pid file, error log and temporary files. Used by `make run`, the integration
 * tests and the bench; stop() ends it, and it does not outlive the process that started it.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import path from "node:path";
import { type EdgeOptions, nginxConfig } from "../../../shared/routing/nginx.ts";
import { stopper, tieToThisProcess, waitForPort } from "./stores.ts";

export interface Edge {
  url: string;
  /** The folder holding nginx.conf, error.log and the pid file. */
  dir: string;
  pid: number | undefined;
  /** Renders the configuration again (e.g. other replicas) and has nginx take it up gracefully. */
  reload(upstreams: EdgeOptions["upstreams"]): Promise<void>;
  /** The edge's error log so far (for a test's failure message). */
  errors(): string;
  stop(): Promise<void>;
}

/** Debian puts nginx in /usr/sbin, which is not on every user's PATH. */
export function nginxBinary(): string {
  if (process.env.NGINX) return process.env.NGINX;
  return existsSync("/usr/sbin/nginx") ? "/usr/sbin/nginx" : "nginx";
}

export async function startEdge(
  dir: string,
  options: Omit<EdgeOptions, "runDir" | "user" | "listen"> & { host?: string; port: number },
): Promise<Edge> {
  mkdirSync(dir, { recursive: true });
  const { host = "127.0.0.1", port, ...rest } = options;
  // Started by root, nginx would run its workers as nobody, who may not write this folder.
  const user = process.getuid?.() === 0 ? userInfo().username : undefined;
  const render = (upstreams: EdgeOptions["upstreams"]) =>
    nginxConfig({ ...rest, upstreams, listen: `${host}:${port}`, runDir: dir, user });
  const conf = path.join(dir, "nginx.conf");
  const errorLog = path.join(dir, "error.log");
  writeFileSync(conf, render(rest.upstreams));
  const child = spawn(nginxBinary(), ["-p", dir, "-c", conf, "-e", errorLog, "-g", "daemon off;"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (text: string) => {
    stderr += text;
  });
  const failed = await new Promise<Error | undefined>((resolve) => {
    child.once("error", (err) =>
      resolve(new Error(`nginx could not start (${err.message}): run 'make run' or apt-get install nginx`)),
    );
    waitForPort(port, child, "nginx", 15_000).then(
      () => resolve(undefined),
      (err: Error) => resolve(err),
    );
  });
  const errors = () => `${stderr}${existsSync(errorLog) ? readFileSync(errorLog, "utf8") : ""}`;
  if (failed) {
    child.kill("SIGKILL");
    throw new Error(`${failed.message}\n${errors()}`);
  }
  tieToThisProcess(child);
  const stop = stopper(child);
  return {
    url: `http://${host}:${port}`,
    dir,
    pid: child.pid,
    async reload(upstreams) {
      writeFileSync(conf, render(upstreams));
      const reloaded = spawn(nginxBinary(), ["-p", dir, "-c", conf, "-e", errorLog, "-s", "reload"], {
        stdio: "ignore",
      });
      const code = await new Promise((resolve) => reloaded.once("exit", resolve));
      if (code !== 0) throw new Error(`nginx did not take the new configuration:\n${errors()}`);
    },
    errors,
    stop,
  };
}
