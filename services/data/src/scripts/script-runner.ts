/**
 * Runs the JavaScript of API versions in the data service's sandbox: the
 * answers of JavaScript resources, and the request and response events around
 * every request to a resource (docs/javascript.md). One sandbox program per
 * project version (script-program.ts), whose only host function is the
 * caller-bound read API (read-api.ts); each script runs in one sandbox call,
 * within the sandbox's limits of time and memory and the read API's limit of
 * reads per call.
 *
 * Failures are the request's: a script that throws, runs too long or out of
 * memory, or answers what it may not, is 500/5001 naming the script (the
 * message reaches the client; logs carry only its fingerprint); a sandbox that
 * cannot take the call is 503/5031. One exception: a request event that
 * throws refuses the request (400/4900) with the thrown message.
 */
import { ApiError, ErrorCode, errors } from "../../../../shared/errors.ts";
import { fingerprint } from "../../../../shared/loggable-error.ts";
import { type ProjectModel, programKey, type VersionModel } from "../domain/model/project-model.ts";
import type { EventModel, JavaScriptResourceModel } from "../domain/model/script-model.ts";
import type { ReadScope } from "../domain/read/resource-read.ts";
import {
  SandboxError,
  type SandboxLogger,
  type SandboxPool,
  type SandboxProgram,
  SandboxTimeoutError,
} from "../sandbox/index.ts";
import type { TenantRows } from "../store/tenant-rows.ts";
import { createReadApi, type ScriptCallContext } from "./read-api.ts";
import {
  answerProblem,
  collectChecksums,
  type RequestEventOutcome,
  requestEventOutcome,
  thrownRefusal,
  unknownChecksum,
} from "./script-answers.ts";
import { ENTRY, type ScriptKind, scriptProgramSources } from "./script-program.ts";

export interface ScriptRunnerOptions {
  pool: SandboxPool;
  tenants: TenantRows;
  /** `tessera.get` calls one script call may make. */
  readsPerCall: number;
  /** Wall-clock limit of each script call (default: the pool's). */
  timeoutMs?: number;
  /** Told of each failed call: the program, the script, the kind and a fingerprint, never the text. */
  logger?: SandboxLogger;
}

/** The request as scripts see it (`request`): never the key, in any form. */
export interface ScriptRequest {
  method: string;
  /** The resource's name as addressed. */
  resource: string;
  /** The key segment of the URL, decoded (`7,3` for a composite key), or null. */
  key: string | null;
  /** Query parameters, except `auth`: a text, or a list when repeated. */
  params: Record<string, string | string[]>;
  /** POST and PUT: the body (as the request events have left it). */
  body?: unknown;
  /** JavaScript resources: the page asked for, and the URL of the next one. */
  pagesize?: number;
  offset?: number;
  nextBatch?: string;
}

/** Whose request it is: project, version, principal, URLs. */
export interface ScriptTarget extends ReadScope {
  version: VersionModel;
}

export interface ScriptRunner {
  /**
   * The answer of a JavaScript resource: an array or an object. The caller's
   * right to call it is checked before (`requireCallable`), ahead of the events.
   */
  resource(target: ScriptTarget, resource: JavaScriptResourceModel, request: ScriptRequest): Promise<unknown>;
  /** Runs the version's request events in order: throws a refusal, or answers the body to use (writes). */
  requestEvents(target: ScriptTarget, request: ScriptRequest): Promise<unknown>;
  /**
   * Runs the version's response events in order on an answer. `written`: the
   * request's write is already committed (said in the error if an event fails).
   */
  responseEvents(
    target: ScriptTarget,
    request: ScriptRequest,
    answer: { statusCode: number; body: unknown },
    written: boolean,
  ): Promise<{ body: unknown; changed: boolean }>;
}

/** What a script call answers (script-program.ts): a value, or nothing. */
interface CallAnswer {
  value?: unknown;
}

export function createScriptRunner(options: ScriptRunnerOptions): ScriptRunner {
  const { pool } = options;
  const readApi = createReadApi(options);
  // By project model, then version: projects of the same definition share their version models
  // (domain/model/shared-models.ts), never their programs (each runs as its own account).
  const programs = new WeakMap<ProjectModel, Map<string, SandboxProgram>>();

  function programOf({ project, version }: ScriptTarget): SandboxProgram {
    let ofProject = programs.get(project);
    if (!ofProject) {
      ofProject = new Map();
      programs.set(project, ofProject);
    }
    let program = ofProject.get(version.name);
    if (!program || program.isRetired) {
      program = pool.program(
        programKey(project, `${version.name}/scripts`),
        scriptProgramSources(version.scripts, project.definition.libraries),
        { hostFunctions: { "tessera.get": readApi }, account: project.account },
      );
      ofProject.set(version.name, program);
    }
    return program;
  }

  /**
   * One script call; a sandbox failure becomes the request's error, naming
   * `what`. `refusal`: what the script throwing means instead (request events).
   */
  async function run(
    target: ScriptTarget,
    kind: ScriptKind,
    id: string,
    input: Record<string, unknown>,
    what: string,
    written: boolean,
    refusal?: (message: string) => RequestEventOutcome & { kind: "refuse" },
  ): Promise<{ answer: CallAnswer; context: ScriptCallContext }> {
    // Only what the read API needs: never anything of the key but its principal.
    const { project, version, principal: caller, addressing } = target;
    const context: ScriptCallContext = {
      project,
      version,
      principal: caller,
      addressing,
      checksums: new Map(),
    };
    const principal = { roles: caller.roles, globals: caller.globals };
    try {
      const answer = (await programOf(target).call(ENTRY, [kind, id, { ...input, principal }], {
        timeoutMs: options.timeoutMs,
        context,
      })) as CallAnswer;
      return { answer: answer ?? {}, context };
    } catch (e) {
      if (refusal && e instanceof SandboxError && e.scriptError)
        throw refusalError(refusal(e.scriptError.message));
      if (e instanceof SandboxError) {
        options.logger?.warn(
          { programKey: e.programKey, script: what, kind: e.kind, fingerprint: fingerprint(e.message) },
          "project script failed",
        );
      }
      throw scriptFailure(what, e, written);
    }
  }

  return {
    async resource(target, resource, request) {
      const what = `The JavaScript resource '${resource.name}'`;
      const { answer, context } = await run(target, "resource", resource.name, { request }, what, false);
      const problem = answerProblem(answer.value) ?? unknownChecksum(answer.value, context.checksums);
      if (problem !== undefined) throw answerFailure(what, problem, false);
      return answer.value;
    },

    async requestEvents(target, request) {
      let body = request.body;
      for (const event of target.version.scripts.requestEvents) {
        const what = eventName(event);
        const { answer } = await run(
          target,
          "request",
          String(event.index),
          { request: { ...request, body } },
          what,
          false,
          (message) => thrownRefusal(message, event.label),
        );
        const outcome = requestEventOutcome(answer.value, body !== undefined, event.label);
        switch (outcome.kind) {
          case "invalid":
            throw answerFailure(what, outcome.problem, false);
          case "refuse":
            throw refusalError(outcome);
          case "body":
            body = outcome.body;
        }
      }
      return body;
    },

    async responseEvents(target, request, { statusCode, body }, written) {
      const events = target.version.scripts.responseEvents;
      if (events.length === 0) return { body, changed: false };
      const given = collectChecksums(body, new Map());
      let current = body;
      let changed = false;
      for (const event of events) {
        const what = eventName(event);
        const response = { statusCode, body: current };
        const { answer, context } = await run(
          target,
          "response",
          String(event.index),
          { response, request },
          what,
          written,
        );
        if (!("value" in answer)) continue;
        // Its checksums: those of the answer it was given, and of what it read itself.
        for (const [href, checksum] of context.checksums) given.set(href, checksum);
        const problem = answerProblem(answer.value) ?? unknownChecksum(answer.value, given);
        if (problem !== undefined) throw answerFailure(what, problem, written);
        current = answer.value;
        changed = true;
      }
      return { body: current, changed };
    },
  };
}

function eventName(event: EventModel): string {
  return `The ${event.type} event ${event.label}`;
}

function refusalError({
  statusCode,
  errorCode,
  errorMessage,
}: RequestEventOutcome & { kind: "refuse" }): ApiError {
  return new ApiError(statusCode, errorCode, errorMessage);
}

const COMMITTED = " (the write was committed; only its answer failed)";

function answerFailure(what: string, problem: string, written: boolean): ApiError {
  return new ApiError(500, ErrorCode.internal, `${what} ${problem}${written ? COMMITTED : ""}`);
}

/** What a failed script call means for the request. */
function scriptFailure(what: string, err: unknown, written: boolean): ApiError {
  if (err instanceof ApiError) return err;
  const after = written ? COMMITTED : "";
  const failed = (message: string) =>
    new ApiError(500, ErrorCode.internal, `${what} ${message}${after}`, { cause: err });
  if (err instanceof SandboxTimeoutError) return failed(`ran longer than the limit of ${err.timeoutMs} ms`);
  if (err instanceof SandboxError) {
    switch (err.kind) {
      case "script":
        return failed(`failed: ${err.message}`);
      case "load":
        return failed(`could not be loaded: ${err.message}`);
      case "result":
        return failed(`answered what is not plain JSON data: ${err.message}`);
      case "argument":
        return failed(`could not be given its input: ${err.message}`);
      case "memory":
        return failed("used more memory than the sandbox allows");
      case "timeout":
        return failed("ran longer than the time limit");
      default:
        break;
    }
  }
  if (written) {
    return new ApiError(503, ErrorCode.unavailable, `The JavaScript sandbox is unavailable${COMMITTED}`, {
      cause: err,
    });
  }
  return errors.unavailable("The JavaScript sandbox", err);
}
