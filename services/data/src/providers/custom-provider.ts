/**
 * Custom authentication providers: a project library (JavaScript) whose create
 * function returns `{getConfigInfo?, configure?, getLoginInfo?, authenticate}`
 * (docs/providers.md; the original product's provider API: docs/contract.md §2),
 * run in the data service's sandbox.
 *
 * Per isolate, on first use: the create function is called (it may be async),
 * then `configure(config)`. The provider object then stays in the warm isolate
 * and serves `getLoginInfo()` and `authenticate(payload, enablePasswordChange)`.
 * `getConfigInfo()` is accepted for compatibility but never called.
 * Library code, create function name and config are all part of the program's
 * code hash, so changing any of them gives fresh isolates.
 *
 * Provider code can call `tessera.fetchJson(url, {method, headers, body,
 * timeoutMs})` to reach the project's `allowedHosts`.
 *
 * Failures: a provider that throws, times out, runs out of memory or answers
 * garbage gives `{ok: false}` (logged by kind and a fingerprint of the error
 * text, which can quote the credentials). Only a
 * sandbox that cannot take the call at all (shut down, at capacity, queue
 * full) is an error: 503 (`errors.unavailable`).
 */
import { errors } from "../../../../shared/errors.ts";
import { fingerprint } from "../../../../shared/loggable-error.ts";
import { isPlainObject } from "../domain/model/column-values.ts";
import { createFetchJson, type FetchJsonOptions } from "../sandbox/fetch.ts";
import {
  SandboxError,
  type SandboxErrorKind,
  type SandboxLogger,
  type SandboxPool,
  type SandboxProgram,
} from "../sandbox/index.ts";
import { isolateFunction } from "../sandbox/isolate-script.ts";
import {
  DEFAULT_LOGIN_INFO,
  GENERIC_LOGIN_FAILURE,
  mapAuthenticateResult,
  mapLoginInfo,
} from "./custom-provider-result.ts";
import type { AuthenticateRequest, AuthProvider, LoginInfo, ProviderVerdict } from "./provider.ts";

export { GENERIC_LOGIN_FAILURE } from "./custom-provider-result.ts";

export interface CustomProviderOptions {
  pool: SandboxPool;
  /** The project's account: whose share of the sandbox the provider's calls take (default: the program key). */
  account?: string;
  /** Sandbox key of this project's provider, e.g. `<account>/<project>/auth`. */
  programKey: string;
  /** The code of the library named by `authentication.library`. */
  libraryCode: string;
  /** The library's name (shown in stack traces). */
  libraryName?: string;
  /** `authentication.createFunction`: a global function of the library. */
  createFunction: string;
  /** `authentication.config`, handed to the provider's `configure`. */
  config: Record<string, unknown>;
  /** Role names the project defines; other roles a provider names are dropped. */
  projectRoles: Iterable<string>;
  /** `authentication.exposeProviderMessages`: show the provider's `errorMessage` to the client. */
  exposeProviderMessages: boolean;
  /** `authentication.allowedHosts`: hosts `tessera.fetchJson` may reach. */
  allowedHosts: string[];
  logger: SandboxLogger;
  /** Wall-clock limit of each provider call (default: the pool's `timeoutMs`). */
  timeoutMs?: number;
  /** Limits of `tessera.fetchJson` (and a resolver, for tests). */
  fetch?: Omit<FetchJsonOptions, "allowedHosts" | "allowLoopback" | "logger">;
}

export interface CustomAuthProvider extends AuthProvider {
  /** Loads the library and runs create + configure now, so that the first login is fast and errors show early. */
  warm(): Promise<void>;
  readonly program: SandboxProgram;
}

/** Failures whose message the sandbox writes itself, without text from the program or its data. */
const SANDBOX_OWN_MESSAGES = new Set<SandboxErrorKind>(["timeout", "memory", "unavailable"]);

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const HOLDER = "__tesseraProvider$";

/** custom-provider-holder.js, read once at start. */
const PROVIDER_HOLDER = isolateFunction(import.meta.dirname, "custom-provider-holder.js");

/** The script that runs after the library: creates and configures the provider once per isolate. */
function providerScript(createFunction: string, config: Record<string, unknown>): string {
  // `createFunction` is an identifier (checked); it is looked up where the library defined it.
  const lookup = `function () { return typeof ${createFunction} === "function" ? ${createFunction} : undefined; }`;
  // JSON.stringify of a string is a valid JavaScript string literal.
  const args = [lookup, JSON.stringify(createFunction), JSON.stringify(JSON.stringify(config))].join(", ");
  return `const ${HOLDER} = (${PROVIDER_HOLDER})(${args});\n`;
}

const AUTHENTICATE = `const p = await ${HOLDER}();
if (typeof p.authenticate !== "function") throw new Error("The provider has no authenticate function");
return await p.authenticate(payload, enablePasswordChange);`;

const LOGIN_INFO = `const p = await ${HOLDER}();
return typeof p.getLoginInfo === "function" ? { defined: true, value: await p.getLoginInfo() } : { defined: false };`;

const WARM = `await ${HOLDER}(); return true;`;

export function createCustomProvider(options: CustomProviderOptions): CustomAuthProvider {
  const { pool, programKey, logger } = options;
  if (!IDENTIFIER.test(options.createFunction) || options.createFunction.startsWith("__tessera")) {
    throw new TypeError(`Invalid create function name: ${options.createFunction}`);
  }
  const projectRoles = new Set(options.projectRoles);
  const fetchJson = createFetchJson({
    ...options.fetch,
    allowedHosts: options.allowedHosts,
    allowLoopback: pool.allowLoopbackFetch,
    logger,
  });
  const program = pool.program(
    programKey,
    [
      { code: options.libraryCode, filename: `${options.libraryName ?? "library"}.js` },
      { code: providerScript(options.createFunction, options.config), filename: "tessera-provider.js" },
    ],
    { hostFunctions: { "tessera.fetchJson": fetchJson }, account: options.account },
  );
  const callOptions = { timeoutMs: options.timeoutMs };

  /** Runs provider code; SandboxError("unavailable") becomes 503, other failures are returned. */
  async function run(
    code: string,
    bindings: Record<string, unknown>,
  ): Promise<{ ok: true; value: unknown } | { ok: false; error: SandboxError }> {
    try {
      return { ok: true, value: await program.evaluate(code, bindings, { ...callOptions, kind: "body" }) };
    } catch (e) {
      if (e instanceof SandboxError) {
        if (e.kind === "unavailable") throw errors.unavailable("The authentication sandbox", e);
        return { ok: false, error: e };
      }
      throw e;
    }
  }

  /**
   * What provider code threw (or returned, or failed to load) can quote what it was
   * given: the credentials, the configuration. Such text is logged as a fingerprint;
   * the sandbox's own words about limits (time, memory) are logged as they are.
   */
  const codeFailure = (error: SandboxError) => ({
    provider: options.createFunction,
    kind: error.kind,
    fingerprint: fingerprint(error.message),
    ...(SANDBOX_OWN_MESSAGES.has(error.kind) ? { reason: error.message } : {}),
  });

  function failure(details: Record<string, unknown>): ProviderVerdict {
    logger.warn({ programKey, ...details }, "custom authentication provider: login failed");
    return { ok: false, message: GENERIC_LOGIN_FAILURE };
  }

  return {
    program,

    async authenticate(request: AuthenticateRequest): Promise<ProviderVerdict> {
      const payload = isPlainObject(request.payload) ? request.payload : {};
      const enablePasswordChange = request.enablePasswordChange === true;
      const outcome = await run(AUTHENTICATE, { payload, enablePasswordChange });
      if (!outcome.ok) {
        return failure(codeFailure(outcome.error));
      }
      const mapped = mapAuthenticateResult(outcome.value, {
        projectRoles,
        exposeProviderMessages: options.exposeProviderMessages,
        enablePasswordChange,
        payload,
        now: Date.now(),
      });
      if (mapped.malformed) {
        return failure({ reason: `the provider's answer is unusable: ${mapped.notes.join("; ")}` });
      }
      if (!mapped.verdict.ok) {
        logger.debug({ programKey }, "custom authentication provider refused a login");
      } else if (mapped.notes.length > 0) {
        logger.warn({ programKey, notes: mapped.notes }, "custom authentication provider: answer adjusted");
      }
      return mapped.verdict;
    },

    async getLoginInfo(): Promise<LoginInfo> {
      const outcome = await run(LOGIN_INFO, {});
      if (!outcome.ok) {
        logger.warn({ programKey, ...codeFailure(outcome.error) }, "getLoginInfo failed");
        throw errors.unavailable("The authentication provider", outcome.error);
      }
      const answer = outcome.value as { defined?: boolean; value?: unknown };
      if (!answer?.defined) return structuredClone(DEFAULT_LOGIN_INFO);
      const mapped = mapLoginInfo(answer.value);
      if ("problem" in mapped) {
        logger.warn({ programKey, reason: mapped.problem }, "getLoginInfo answered something unusable");
        throw errors.unavailable("The authentication provider");
      }
      return mapped.info;
    },

    async warm(): Promise<void> {
      const outcome = await run(WARM, {});
      if (!outcome.ok) throw errors.unavailable("The authentication provider", outcome.error);
    },
  };
}
