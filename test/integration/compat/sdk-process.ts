/**
 * The original product's Node SDK (npm caliveapicreator 1.3.x), unchanged, driven in a
 * process of its own (sdk-worker.ts explains why): `connect` with the project URL and a
 * user name and password (or an API key), then endpoint(...).get/post/put/del, each
 * settling here as its promise settles there. Shared by the compat tests.
 */
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface Meta {
  href: string;
  checksum?: string;
  resource?: string;
  verb?: string;
  next_batch?: string;
}
export type Row = { "@metadata": Meta } & Record<string, unknown>;
export interface WriteResult {
  statusCode: number;
  txsummary: Row[];
}
export interface ApiError {
  statusCode: number;
  errorCode: number;
  errorMessage: string;
}
type Params = Record<string, string | number | boolean> | string;
export interface Endpoint {
  get(filters?: Params): Promise<Row[]>;
  post(body: unknown, filters?: Params): Promise<WriteResult>;
  put(body: unknown, filters?: Params): Promise<WriteResult>;
  del(body: { "@metadata": Meta }, filters?: Params): Promise<WriteResult>;
}
export interface Connection {
  apiKey: string | null;
  endpoint(pathOrHref: string): Endpoint;
}

/**
 * The SDK in a child process (sdk-worker.ts explains why). Each SDK call is
 * made there exactly as written here; its promise settles here the same way.
 */
export class SdkProcess {
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  #next = 1;

  constructor() {
    this.#child = fork(fileURLToPath(new URL("./sdk-worker.ts", import.meta.url)), [], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    this.#child.on("message", (m: { id: number; ok: boolean; value?: unknown; reason?: unknown }) => {
      const p = this.#pending.get(m.id);
      this.#pending.delete(m.id);
      if (m.ok) p?.resolve(m.value);
      else p?.reject(m.reason);
    });
  }

  #send<T>(message: Record<string, unknown>): Promise<T> {
    const id = this.#next++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      this.#child.send({ id, ...message });
    });
  }

  /** `apicreator.connect(url, key)` or `apicreator.connect(url, username, password)`, then its connection promise. */
  async connect(...args: string[]): Promise<Connection> {
    const { handle, apiKey } = await this.#send<{ handle: number; apiKey: string | null }>({
      op: "connect",
      args,
    });
    const call =
      (endpoint: string, method: string) =>
      (...rest: unknown[]) =>
        this.#send<never>({ op: "call", handle, endpoint, method, args: rest });
    return {
      apiKey,
      endpoint: (endpoint) => ({
        get: call(endpoint, "get"),
        post: call(endpoint, "post"),
        put: call(endpoint, "put"),
        del: call(endpoint, "del"),
      }),
    };
  }

  close(): void {
    this.#child.disconnect();
  }
}

/** The error body an SDK promise was rejected with (fails when it was fulfilled). */
export async function rejection(p: Promise<unknown>): Promise<ApiError> {
  return p.then(
    () => {
      throw new Error("expected the SDK promise to be rejected");
    },
    (e: ApiError) => e,
  );
}
