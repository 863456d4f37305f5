/** A Server-Sent Events client over a real HTTP connection, for the live-query tests. */
import http from "node:http";

export interface SseEvent {
  id?: string;
  event: string;
  // biome-ignore lint/suspicious/noExplicitAny: JSON read freely by tests
  data: any;
}

export interface SseStream {
  status: number;
  /** The error body when the answer is not a stream. */
  // biome-ignore lint/suspicious/noExplicitAny: JSON read freely by tests
  body?: any;
  /** Every event received so far, in order. */
  events: SseEvent[];
  /** Heartbeat comment lines received so far. */
  heartbeats: number;
  /** Resolves with the first event (from the start) that satisfies `match`; rejects if the stream ends first. */
  next(match: (e: SseEvent) => boolean): Promise<SseEvent>;
  /** Resolves once `count` heartbeats arrived in all. */
  heartbeat(count: number): Promise<void>;
  /** Resolves once the server ended the stream. */
  ended: Promise<void>;
  close(): void;
  /** Starts reading (a stream opened with `paused`). */
  resume(): void;
}

/** Opens `url` with `Accept: text/event-stream` and the given headers. */
export function openSse(
  url: string,
  headers: Record<string, string>,
  options: { paused?: boolean } = {},
): Promise<SseStream> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: "text/event-stream", ...headers } }, (res) => {
      res.setEncoding("utf8");
      if (res.statusCode !== 200 || !String(res.headers["content-type"]).startsWith("text/event-stream")) {
        let text = "";
        res.on("data", (c: string) => {
          text += c;
        });
        res.on("end", () => resolve({ ...noStream(), status: res.statusCode ?? 0, body: JSON.parse(text) }));
        return;
      }
      const waiters: {
        match: (e: SseEvent) => boolean;
        resolve: (e: SseEvent) => void;
        reject: (e: Error) => void;
      }[] = [];
      const beats: { count: number; resolve: () => void }[] = [];
      let ended = false;
      let endStream: () => void = () => {};
      const stream: SseStream = {
        status: 200,
        events: [],
        heartbeats: 0,
        next(match) {
          const seen = stream.events.find(match);
          if (seen) return Promise.resolve(seen);
          if (ended) return Promise.reject(new Error("the stream ended"));
          return new Promise((res2, rej2) => waiters.push({ match, resolve: res2, reject: rej2 }));
        },
        heartbeat(count) {
          if (stream.heartbeats >= count) return Promise.resolve();
          return new Promise((r) => beats.push({ count, resolve: r }));
        },
        ended: new Promise((r) => {
          endStream = r;
        }),
        close: () => req.destroy(),
        resume: () => res.resume(),
      };
      if (options.paused) res.pause();
      let buffer = "";
      res.on("data", (chunk: string) => {
        buffer += chunk;
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const event = parseBlock(block);
          if (!event) {
            if (block.startsWith(":")) stream.heartbeats++;
            for (const b of beats.filter((b) => stream.heartbeats >= b.count)) {
              beats.splice(beats.indexOf(b), 1);
              b.resolve();
            }
            continue;
          }
          stream.events.push(event);
          for (const w of waiters.filter((w) => w.match(event))) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(event);
          }
        }
      });
      const finish = () => {
        if (ended) return;
        ended = true;
        for (const w of waiters.splice(0)) w.reject(new Error("the stream ended"));
        endStream();
      };
      res.on("end", finish);
      res.on("close", finish);
      res.on("error", finish);
      resolve(stream);
    });
    req.on("error", reject);
  });
}

function parseBlock(block: string): SseEvent | null {
  let id: string | undefined;
  let event = "message";
  const data: string[] = [];
  for (const line of block.split("\n")) {
    if (line.startsWith("id: ")) id = line.slice(4);
    else if (line.startsWith("event: ")) event = line.slice(7);
    else if (line.startsWith("data: ")) data.push(line.slice(6));
  }
  if (data.length === 0) return null;
  return { id, event, data: JSON.parse(data.join("\n")) };
}

function noStream(): SseStream {
  return {
    status: 0,
    events: [],
    heartbeats: 0,
    next: () => Promise.reject(new Error("not a stream")),
    heartbeat: () => Promise.reject(new Error("not a stream")),
    ended: Promise.resolve(),
    close: () => {},
    resume: () => {},
  };
}
