/**
 * The local gateway of `make run` (services/dev-stack/src/gateway.ts) in a
 * process of its own, so that it does not share the bench's event loop.
 * Env: PORT, AUTH_URL, DATA_URL.
 *
 * A load generator closes its connections with requests still in flight, at
 * the end of every slice. An exception that escapes the gateway's handlers then
 * would end the process (and, in `make run`, the whole stack); here it is
 * counted instead, so the run goes on and the bench reports it as a failed
 * check. GET /__bench/stats answers {"uncaught": n, "messages": [...]}.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { createGateway } from "../../../services/dev-stack/src/gateway.ts";
import { readyz } from "../lib/processes.ts";

const uncaught = new Map<string, number>();
process.on("uncaughtException", (err: Error & { code?: string }) => {
  const where =
    err.stack
      ?.split("\n")
      .find((l) => l.includes("/services/"))
      ?.trim() ?? "";
  const text = `${err.code ?? err.name}: ${err.message} ${where}`;
  uncaught.set(text, (uncaught.get(text) ?? 0) + 1);
});

const auth = process.env.AUTH_URL!;
const data = process.env.DATA_URL!;
const gateway = createGateway({
  upstreams: { auth, data },
  ready: async () => (await readyz(auth)) && (await readyz(data)),
});
const [handler] = gateway.listeners("request") as ((req: IncomingMessage, res: ServerResponse) => void)[];
gateway.removeAllListeners("request");
gateway.on("request", (req: IncomingMessage, res: ServerResponse) => {
  if (req.url === "/__bench/stats") {
    const count = [...uncaught.values()].reduce((a, b) => a + b, 0);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ uncaught: count, messages: [...uncaught.entries()].map(([m, n]) => `${n}× ${m}`) }),
    );
    return;
  }
  handler!(req, res);
});
gateway.keepAliveTimeout = 65_000;
gateway.listen(Number(process.env.PORT), "127.0.0.1");
process.once("SIGTERM", () => {
  gateway.close(() => process.exit(0));
  gateway.closeAllConnections();
});
