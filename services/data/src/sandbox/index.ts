/**
 * The JavaScript sandbox of the data service (isolated-vm). Custom
 * authentication providers use it now; reactive logic rules will use
 * `SandboxProgram.evaluate` with `row` / `oldRow` bindings and host callbacks
 * such as `logicContext.insert`.
 */
export { SandboxError, type SandboxErrorKind, SandboxHostError, SandboxTimeoutError } from "./errors.ts";
export { createFetchJson, type FetchJsonOptions, type FetchJsonResponse } from "./fetch.ts";
export { classifyAddress, isAddressAllowed } from "./net-policy.ts";
export { SandboxPool, type SandboxPoolOptions, SandboxProgram } from "./pool.ts";
export type {
  CallOptions,
  EvaluateOptions,
  HostCallInfo,
  HostFunction,
  HostFunctionSpec,
  HostFunctions,
  ProgramSource,
  SandboxLogger,
  SandboxStats,
} from "./types.ts";
