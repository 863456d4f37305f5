/**
 * The JavaScript sandbox of the data service (isolated-vm). Custom
 * authentication providers and reactive logic rules use it through the
 * `SandboxPool` and `SandboxProgram` interfaces. The service runs the isolates
 * in sandbox host processes (`ProcessSandboxPool`), so that an isolate whose
 * memory and thread isolated-vm cannot give back is reclaimed with its
 * process; `IsolatePool` runs them in this process (tests of pure sandbox
 * behaviour, sync host functions).
 */

export { createSandbox, type Sandbox, type SandboxAccounts } from "./create-sandbox.ts";
export { SandboxError, type SandboxErrorKind, SandboxHostError, SandboxTimeoutError } from "./errors.ts";
export { FairShare, type FairShareLimits, FairShareRefusal } from "./fair-share.ts";
export { FairSharePool } from "./fair-share-pool.ts";
export { createFetchJson, type FetchJsonOptions, type FetchJsonResponse } from "./fetch.ts";
export type { SandboxPoolOptions } from "./limits.ts";
export { IsolatePool, type IsolatePoolOptions, IsolateProgram } from "./pool.ts";
export { ProcessSandboxPool, type ProcessSandboxPoolOptions, type RestartReason } from "./process-pool.ts";
export type {
  CallOptions,
  EvaluateOptions,
  HostCallInfo,
  HostFunction,
  HostFunctionSpec,
  HostFunctions,
  ProgramOptions,
  ProgramSource,
  SandboxLogger,
  SandboxPool,
  SandboxProgram,
  SandboxStats,
} from "./types.ts";
