// Prepares a fresh isolate before any user code runs; see bootstrap.ts for the contract.
// This file is one function expression statement: the host evaluates it in the isolate and calls it once.
(function bootstrap(hostRequest, hostSync, hostLog, optionsJson) {
  // biome-ignore lint/suspicious/noRedundantUseStrict: the isolate runs this as a script, not a module
  "use strict";
  const G = globalThis;
  const JSONparse = JSON.parse;
  const JSONstringify = JSON.stringify;
  const opts = JSONparse(optionsJson);

  const ObjectFreeze = Object.freeze;
  const ObjectDefineProperty = Object.defineProperty;
  const ObjectKeys = Object.keys;
  const ObjectGetPrototypeOf = Object.getPrototypeOf;
  const ObjectPrototype = Object.prototype;
  const ArrayIsArray = Array.isArray;
  const ReflectApply = Reflect.apply;
  const StringCtor = String;
  const NumberCtor = Number;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const PromiseCtor = Promise;
  const MapCtor = Map;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapClear = Map.prototype.clear;
  const mapDelete = Map.prototype.delete;
  const stringSlice = String.prototype.slice;
  const stringCharCodeAt = String.prototype.charCodeAt;
  const arrayJoin = Array.prototype.join;
  const arrayPush = Array.prototype.push;
  const AsyncFunction = (async () => {}).constructor;
  const globalIsFinite = G.isFinite;
  const fromCharCode = String.fromCharCode;

  // Nothing that schedules work outside a call, and no shared memory or WebAssembly.
  for (const name of ["WebAssembly", "SharedArrayBuffer", "Atomics", "FinalizationRegistry", "console"]) {
    delete G[name];
  }

  const HOST_ERROR_NAME = "TesseraHostError";
  class HostError extends ErrorCtor {}
  ObjectDefineProperty(HostError.prototype, "name", { value: HOST_ERROR_NAME });

  function decodeHostAnswer(name, answer) {
    const tag = ReflectApply(stringSlice, answer, [0, 1]);
    const body = ReflectApply(stringSlice, answer, [1]);
    if (tag === "R") return body === "" ? undefined : JSONparse(body);
    let message = "Host function " + name + " failed";
    try {
      message = JSONparse(body).message;
    } catch {}
    throw new HostError(message);
  }

  // The call now running (0: none). Requests of an earlier call are never settled.
  let activeCall = 0;
  let callSeq = 0;
  let requestSeq = 0;
  const pending = new MapCtor();

  function callHostAsync(name, args) {
    if (activeCall === 0) return new PromiseCtor(() => {});
    const argsJson = JSONstringify(args);
    const id = ++requestSeq;
    const call = activeCall;
    return new PromiseCtor((resolve, reject) => {
      ReflectApply(mapSet, pending, [id, { call, name, resolve, reject }]);
      hostRequest(id, name, argsJson);
    });
  }

  function deliver(id, answer) {
    const request = ReflectApply(mapGet, pending, [id]);
    if (request === undefined) return;
    ReflectApply(mapDelete, pending, [id]);
    if (request.call !== activeCall) return;
    try {
      request.resolve(decodeHostAnswer(request.name, answer));
    } catch (e) {
      request.reject(e);
    }
  }

  function callHostSync(name, args) {
    if (activeCall === 0) throw new HostError("Host functions are only available during a call");
    return decodeHostAnswer(name, hostSync(name, JSONstringify(args)));
  }

  // Host functions, as frozen namespace objects on the global (tessera.fetchJson, ...).
  const hostRoots = new MapCtor();
  for (const { path, sync } of opts.hostFunctions) {
    const parts = path.split(".");
    const fnName = parts.pop();
    const fn = sync
      ? {
          [fnName](...args) {
            return callHostSync(path, args);
          },
        }[fnName]
      : {
          [fnName](...args) {
            return callHostAsync(path, args);
          },
        }[fnName];
    if (parts.length === 0) {
      ObjectDefineProperty(G, fnName, { value: fn, writable: false, configurable: false, enumerable: false });
      continue;
    }
    let ns = ReflectApply(mapGet, hostRoots, [parts[0]]);
    if (ns === undefined) {
      ns = {};
      ReflectApply(mapSet, hostRoots, [parts[0], ns]);
    }
    let target = ns;
    for (let i = 1; i < parts.length; i++) target = target[parts[i]] ??= {};
    target[fnName] = fn;
  }
  function deepFreeze(o) {
    for (const k of ObjectKeys(o)) if (typeof o[k] === "object") deepFreeze(o[k]);
    return ObjectFreeze(o);
  }
  hostRoots.forEach((ns, root) => {
    deepFreeze(ns);
    ObjectDefineProperty(G, root, { value: ns, writable: false, configurable: false, enumerable: false });
  });

  // A bounded console: each line goes to the host log; at most maxConsoleLines per call.
  let consoleLines = 0;
  function describe(v) {
    if (typeof v === "string") return v;
    try {
      const t = JSONstringify(v);
      if (typeof t === "string") return t;
    } catch {}
    try {
      return StringCtor(v);
    } catch {
      return "[unprintable]";
    }
  }
  function logger(level) {
    // biome-ignore lint/complexity/useArrowFunction: console.* stay ordinary functions, as they were
    return function (...args) {
      if (++consoleLines > opts.maxConsoleLines) return;
      const parts = [];
      for (let i = 0; i < args.length && i < 20; i++) ReflectApply(arrayPush, parts, [describe(args[i])]);
      let text = ReflectApply(arrayJoin, parts, [" "]);
      if (text.length > 1000) text = ReflectApply(stringSlice, text, [0, 1000]) + "…";
      hostLog(level, text);
    };
  }
  ObjectDefineProperty(G, "console", {
    value: ObjectFreeze({
      log: logger("info"),
      info: logger("info"),
      debug: logger("debug"),
      warn: logger("warn"),
      error: logger("error"),
    }),
    writable: true,
    configurable: true,
    enumerable: false,
  });

  // setTimeout / clearTimeout, bounded by the host (delay and count per call); timers never outlive their call.
  let timerSeq = 0;
  let timersThisCall = 0;
  const liveTimers = new MapCtor();
  function setTimeout(fn, ms, ...args) {
    if (typeof fn !== "function") throw new TypeErrorCtor("setTimeout expects a function");
    if (++timersThisCall > opts.maxTimersPerCall) {
      throw new ErrorCtor("setTimeout: more than " + opts.maxTimersPerCall + " timers in one call");
    }
    const delay = NumberCtor(ms);
    const id = ++timerSeq;
    ReflectApply(mapSet, liveTimers, [id, true]);
    ReflectApply(
      PromiseCtor.prototype.then,
      callHostAsync("$timer", [globalIsFinite(delay) && delay > 0 ? delay : 0]),
      [
        () => {
          if (ReflectApply(mapDelete, liveTimers, [id])) ReflectApply(fn, undefined, args);
        },
        () => {
          ReflectApply(mapDelete, liveTimers, [id]);
        },
      ],
    );
    return id;
  }
  function clearTimeout(id) {
    ReflectApply(mapDelete, liveTimers, [id]);
  }
  ObjectDefineProperty(G, "setTimeout", {
    value: setTimeout,
    writable: true,
    configurable: true,
    enumerable: false,
  });
  ObjectDefineProperty(G, "clearTimeout", {
    value: clearTimeout,
    writable: true,
    configurable: true,
    enumerable: false,
  });

  // btoa / atob (Latin-1), which providers use for Basic authentication headers.
  const B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  function btoa(input) {
    const s = StringCtor(input);
    let out = "";
    for (let i = 0; i < s.length; i += 3) {
      const a = ReflectApply(stringCharCodeAt, s, [i]),
        b = ReflectApply(stringCharCodeAt, s, [i + 1]),
        c = ReflectApply(stringCharCodeAt, s, [i + 2]);
      if (a > 255 || b > 255 || c > 255)
        throw new ErrorCtor("btoa: the string contains characters outside Latin-1");
      const n = (a << 16) | ((b || 0) << 8) | (c || 0);
      out +=
        B64[(n >> 18) & 63] +
        B64[(n >> 12) & 63] +
        (i + 1 < s.length ? B64[(n >> 6) & 63] : "=") +
        (i + 2 < s.length ? B64[n & 63] : "=");
    }
    return out;
  }
  function atob(input) {
    const s = StringCtor(input)
      .replace(/[\t\n\f\r ]/g, "")
      .replace(/={1,2}$/, "");
    if (s.length % 4 === 1 || /[^A-Za-z0-9+/]/.test(s))
      throw new ErrorCtor("atob: the string is not valid base64");
    let out = "",
      bits = 0,
      acc = 0;
    for (let i = 0; i < s.length; i++) {
      acc = (acc << 6) | B64.indexOf(s[i]);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += fromCharCode((acc >> bits) & 255);
      }
    }
    return out;
  }
  ObjectDefineProperty(G, "btoa", { value: btoa, writable: true, configurable: true, enumerable: false });
  ObjectDefineProperty(G, "atob", { value: atob, writable: true, configurable: true, enumerable: false });

  // Results: plain JSON only (no functions, symbols, bigints, cycles), capped in size.
  class ResultError extends ErrorCtor {}
  function serialize(value) {
    if (value === undefined) return "R";
    let text;
    try {
      text = JSONstringify(value, (key, v) => {
        const t = typeof v;
        if (t === "function")
          throw new ResultError(
            "the result contains a function" + (key === "" ? "" : " (at key " + JSONstringify(key) + ")"),
          );
        if (t === "symbol") throw new ResultError("the result contains a symbol");
        if (t === "bigint") throw new ResultError("the result contains a BigInt");
        return v;
      });
    } catch (e) {
      if (e instanceof ResultError) throw e;
      const why =
        e instanceof TypeErrorCtor
          ? "the result is not plain JSON data (cyclic?)"
          : "the result could not be serialized";
      throw new ResultError(why + ": " + describeMessage(e));
    }
    if (typeof text !== "string") return "R";
    if (text.length > opts.maxResultChars)
      throw new ResultError("the result is larger than " + opts.maxResultChars + " characters of JSON");
    return "R" + text;
  }

  function describeMessage(e) {
    try {
      if (e instanceof ErrorCtor) return StringCtor(e.message);
      if (e === null || (typeof e !== "object" && typeof e !== "function"))
        return "a non-Error value was thrown: " + StringCtor(e);
      if (typeof e.message === "string") return "a non-Error object was thrown: " + e.message;
      return "a non-Error object was thrown";
    } catch {
      return "an unreadable value was thrown";
    }
  }

  function describeError(e, result) {
    let name = "Error";
    try {
      if (e instanceof ErrorCtor && typeof e.name === "string") name = e.name;
      else if (!(e instanceof ErrorCtor)) name = "NonError";
    } catch {}
    let message = describeMessage(e);
    if (typeof message !== "string") message = "unknown error";
    if (message.length > 2000) message = ReflectApply(stringSlice, message, [0, 2000]);
    if (name.length > 100) name = ReflectApply(stringSlice, name, [0, 100]);
    return "E" + JSONstringify({ name, message, result: result === true });
  }

  // Compiled expressions / bodies, per isolate.
  const compiled = new MapCtor();
  const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
  function compile(kind, code, names) {
    const key = kind + "\u0000" + ReflectApply(arrayJoin, names, [","]) + "\u0000" + code;
    let fn = ReflectApply(mapGet, compiled, [key]);
    if (fn === undefined) {
      for (const n of names) if (!IDENT.test(n)) throw new TypeErrorCtor("invalid binding name");
      const body = kind === "expression" ? "return (\n" + code + "\n);" : code;
      fn = new AsyncFunction(...names, body);
      if (compiled.size >= opts.maxCompiled) ReflectApply(mapClear, compiled, []);
      ReflectApply(mapSet, compiled, [key, fn]);
    }
    return fn;
  }

  function isPlainObject(v) {
    if (v === null || typeof v !== "object" || ArrayIsArray(v)) return false;
    const p = ObjectGetPrototypeOf(v);
    return p === ObjectPrototype || p === null;
  }

  async function run(mode, target, payloadJson) {
    const payload = JSONparse(payloadJson);
    if (mode === "call") {
      const parts = target.split(".");
      let receiver;
      let value = await ReflectApply(compile("expression", parts[0], []), undefined, []);
      for (let i = 1; i < parts.length; i++) {
        if (value === null || value === undefined) throw new TypeErrorCtor(target + " is not defined");
        receiver = value;
        value = value[parts[i]];
      }
      if (typeof value !== "function") throw new TypeErrorCtor(target + " is not a function");
      return ReflectApply(value, receiver, payload);
    }
    // mode "expression" | "body": payload = [names, values]
    const names = payload[0];
    const values = payload[1];
    for (let i = 0; i < names.length; i++) {
      const ns = ReflectApply(mapGet, hostRoots, [names[i]]);
      if (ns !== undefined && isPlainObject(values[i])) {
        for (const k of ObjectKeys(ns)) values[i][k] = ns[k];
      }
    }
    return ReflectApply(compile(mode, target, names), undefined, values);
  }

  async function invoke(mode, target, payloadJson) {
    const call = ++callSeq;
    activeCall = call;
    consoleLines = 0;
    timersThisCall = 0;
    ReflectApply(mapClear, liveTimers, []);
    try {
      let value;
      try {
        value = await run(mode, target, payloadJson);
      } catch (e) {
        return describeError(e, false);
      }
      try {
        return serialize(value);
      } catch (e) {
        return describeError(e, true);
      }
    } finally {
      if (activeCall === call) activeCall = 0;
      ReflectApply(mapClear, liveTimers, []);
      ReflectApply(mapClear, pending, []);
    }
  }

  return [invoke, deliver];
});
