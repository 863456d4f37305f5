/**
 * Child processes of the benchmark: every server under load runs in its own
 * Node process (as in `make run`), so the load generator in the bench process
 * never shares an event loop with the server it measures.
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface NodeChild {
  name: string;
  url: string;
  process: ChildProcess;
  /** SIGTERM (graceful: the services drain and exit 0), SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

const running = new Set<ChildProcess>();

// A crash or Ctrl-C of the bench must not leave servers behind.
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

export async function readyz(url: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const r = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
    await r.body?.cancel();
    return r.ok;
  } catch {
    return false;
  }
}

/** Starts `node [nodeArgs] script` with `env`, then waits until `url`/readyz answers 200. */
export async function startNode(options: {
  name: string;
  script: string;
  url: string;
  env: NodeJS.ProcessEnv;
  nodeArgs?: string[];
  timeoutMs?: number;
}): Promise<NodeChild> {
  const { name, script, url, env, nodeArgs = [], timeoutMs = 60_000 } = options;
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env,
    stdio: ["ignore", "inherit", "inherit"],
  });
  running.add(child);
  child.once("exit", () => running.delete(child));
  const deadline = Date.now() + timeoutMs;
  while (!(await readyz(url))) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${name} exited (${child.signalCode ?? child.exitCode}) before it was ready`);
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`${name} was not ready at ${url} within ${timeoutMs} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    name,
    url,
    process: child,
    stop: (graceMs = 15_000) =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
        child.once("exit", () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill("SIGTERM");
      }),
  };
}
