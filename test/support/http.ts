/** Minimal HTTP helpers for integration tests: every call goes through the edge. */
import http from "node:http";
export interface Reply<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export async function call<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; rawBody?: string } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { ...options.headers };
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  }
  const response = await fetch(`${baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

export function keyHeader(key: string, scheme = "Tessera"): Record<string, string> {
  return { authorization: `${scheme} ${key}:1` };
}

/** Admin API client. */
export function adminClient(baseUrl: string, token: string) {
  const h = { authorization: `Bearer ${token}` };
  const send = (method: string, path: string, body?: unknown) =>
    call(baseUrl, method, `/admin/v1${path}`, { body, headers: h });
  return {
    send,
    putAccount: (a: string) => send("PUT", `/accounts/${a}`, {}),
    putProject: (a: string, p: string, definition: unknown) =>
      send("PUT", `/accounts/${a}/projects/${p}`, definition),
    putUser: (a: string, p: string, u: string, body: unknown) =>
      send("PUT", `/accounts/${a}/projects/${p}/users/${u}`, body),
    createKey: (a: string, p: string, body: unknown) =>
      send("POST", `/accounts/${a}/projects/${p}/apikeys`, body),
    /** A manual key with these roles (and globals): the key itself. */
    keyWith: async (a: string, p: string, roles: string[], globals?: Record<string, unknown>) =>
      (await send("POST", `/accounts/${a}/projects/${p}/apikeys`, { name: roles.join("+"), roles, globals }))
        .body.apikey as string,
    listKeys: (a: string, p: string) => send("GET", `/accounts/${a}/projects/${p}/apikeys`),
    deleteKey: (a: string, p: string, id: string) =>
      send("DELETE", `/accounts/${a}/projects/${p}/apikeys/${id}`),
  };
}

/** Data/auth API client for one project version. */
export function projectClient(baseUrl: string, account: string, project: string, version = "v1") {
  const root = `/rest/${account}/${project}/${version}`;
  return {
    root,
    login: (body: unknown, query = "") => call(baseUrl, "POST", `${root}/@authentication${query}`, { body }),
    get: (key: string | undefined, path: string, headers: Record<string, string> = {}) =>
      call(baseUrl, "GET", `${root}/${path}`, { headers: { ...(key ? keyHeader(key) : {}), ...headers } }),
    post: (key: string | undefined, path: string, body: unknown) =>
      call(baseUrl, "POST", `${root}/${path}`, { body, headers: key ? keyHeader(key) : {} }),
    put: (key: string | undefined, path: string, body: unknown) =>
      call(baseUrl, "PUT", `${root}/${path}`, { body, headers: key ? keyHeader(key) : {} }),
    delete: (key: string | undefined, path: string) =>
      call(baseUrl, "DELETE", `${root}/${path}`, { headers: key ? keyHeader(key) : {} }),
  };
}

/**
 * Like `call`, but from a chosen local address (any of 127.0.0.0/8 works on
 * loopback), so a test can be several clients with different addresses.
 */
export function callFrom<T = any>(
  localAddress: string,
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Reply<T>> {
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {
    ...(body === undefined ? {} : { "content-type": "application/json" }),
    ...options.headers,
  };
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(path, baseUrl), { method, headers, localAddress }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => {
        let parsed: unknown = text;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: keep the text
        }
        const replyHeaders = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (typeof value === "string") replyHeaders.set(name, value);
        }
        resolve({ status: res.statusCode ?? 0, body: parsed as T, headers: replyHeaders });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}
