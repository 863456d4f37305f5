/**
 * A webhook receiver for tests: a real HTTP server on loopback that checks each
 * delivery's Standard Webhooks signature and records it. It can be taken down
 * (the port refuses connections) and brought back on the same port, answer
 * another status (with a body of its own), or hold requests unanswered (a
 * receiver that hangs) until released.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { verifyWebhook } from "../../services/data/src/hooks/signature.ts";

/**
 * Platform settings of webhook tests: receivers on loopback allowed (the operator's switch), new
 * events looked for every 20 ms, and room for the rules' first runs on a loaded machine.
 */
export const WEBHOOK_TEST_SETTINGS: Record<string, string> = {
  SANDBOX_ALLOW_LOOPBACK_FETCH: "true",
  SANDBOX_TIMEOUT_MS: "10000",
  WEBHOOK_POLL_MS: "20",
};

export interface ReceivedDelivery {
  id: string;
  timestamp: number;
  signed: boolean;
  /** The `webhook-signature` header as it came. */
  signature: string;
  // biome-ignore lint/suspicious/noExplicitAny: a delivery's JSON body, read freely by tests
  body: any;
  /** The status the receiver answered. */
  status: number;
  /** When it arrived (ms). */
  at: number;
}

/** A body the receiver answers with, and its content type. */
export interface AnswerBody {
  body: string | Buffer;
  contentType: string;
}

export interface Receiver {
  url: string;
  /** Every request that came with a body, in order of arrival (answered or not yet). */
  received: ReceivedDelivery[];
  /** The ids answered 2xx, each once. */
  delivered(): Set<string>;
  /** Requests held unanswered now. */
  held(): number;
  /** The ids of the held requests whose senders still wait for the answer (their connections open). */
  waiting(): string[];
  /** The secret it checks signatures with ("" until set). */
  readonly secret: string;
  setSecret(secret: string): void;
  /** The status to answer from now on (200 by default), with `body`; `hold`: keep requests open until `release`. */
  answer(status: number | "hold", body?: AnswerBody): void;
  /** Answers every held request with `status`. */
  release(status?: number): void;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(path = "/hook"): Promise<Receiver> {
  let secret = "";
  let mode: number | "hold" = 200;
  let answerBody: AnswerBody | undefined;
  const received: ReceivedDelivery[] = [];
  const holding: { res: ServerResponse; record: ReceivedDelivery; gone: boolean }[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const id = String(req.headers["webhook-id"] ?? "");
      const timestamp = Number(req.headers["webhook-timestamp"]);
      const signature = String(req.headers["webhook-signature"] ?? "");
      const record: ReceivedDelivery = {
        id,
        timestamp,
        signed: secret !== "" && verifyWebhook(secret, id, timestamp, text, signature),
        signature,
        body: text ? JSON.parse(text) : undefined,
        status: 0,
        at: Date.now(),
      };
      received.push(record);
      if (mode === "hold") {
        const held = { res, record, gone: false };
        holding.push(held);
        // A sender that went away (a process killed) waits for nothing: an answer written into its
        // connection would reach no one, yet count as delivered.
        res.once("close", () => {
          held.gone = !res.writableEnded;
        });
        return;
      }
      record.status = mode;
      if (answerBody) res.writeHead(mode, { "content-type": answerBody.contentType }).end(answerBody.body);
      else res.writeHead(mode).end();
    });
  };
  let server = http.createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const closeServer = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return {
    url: `http://127.0.0.1:${port}${path}`,
    received,
    delivered: () => new Set(received.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.id)),
    held: () => holding.length,
    waiting: () => holding.filter((h) => !h.gone).map((h) => h.record.id),
    get secret() {
      return secret;
    },
    setSecret: (s) => {
      secret = s;
    },
    answer: (status, body) => {
      mode = status;
      answerBody = body;
    },
    release: (status = 200) => {
      for (const { res, record, gone } of holding.splice(0)) {
        if (gone || (res.socket?.destroyed ?? true)) continue;
        record.status = status;
        res.writeHead(status).end();
      }
    },
    down: closeServer,
    up: async () => {
      server = http.createServer(handle);
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
    close: closeServer,
  };
}
