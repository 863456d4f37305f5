/**
 * What a host function's outcome becomes on its way back to sandboxed code:
 * an answer (answers.ts), a value or an error whose message the script sees.
 * Used by the isolate worker, and by the data service for host functions it
 * runs for a sandbox host process.
 */

import { loggableError } from "../../../../shared/loggable-error.ts";
import { safeText } from "../../../../shared/safe-text.ts";
import { answerParts, errorAnswer, valueAnswer } from "./answers.ts";
import { SandboxHostError } from "./errors.ts";
import type { SandboxLogger } from "./types.ts";

/** The answer for `value`; throws SandboxHostError when its JSON is over `maxBytes`. */
export function hostValueAnswer(name: string, value: unknown, maxBytes: number): string {
  if (value === undefined) return valueAnswer(undefined);
  const text = JSON.stringify(value) as string | undefined;
  if (typeof text === "string" && text.length > maxBytes) {
    throw new SandboxHostError(`The answer of ${name} is larger than ${maxBytes} bytes`);
  }
  return valueAnswer(text);
}

/**
 * The answer for a failure: a SandboxHostError's message reaches the script;
 * anything else is logged here and reaches it only as "Host function <name> failed".
 */
export function hostFailureAnswer(
  name: string,
  e: unknown,
  logger: SandboxLogger,
  programKey: string,
): string {
  if (e instanceof SandboxHostError) return errorAnswer({ message: safeText(e.message, 1000) });
  logger.warn(
    // The message of a store or driver error can quote the values a query carried.
    { programKey, hostFunction: name, error: loggableError(e) },
    "sandbox host function failed",
  );
  return errorAnswer({ message: `Host function ${name} failed` });
}

/** The value of an answer made by `hostValueAnswer`, or the SandboxHostError of one made by `hostFailureAnswer`. */
export function hostAnswerValue(answer: string): unknown {
  const parts = answerParts(answer);
  if (parts.kind === "value") return parts.json === undefined ? undefined : JSON.parse(parts.json);
  let message = "Host function failed";
  try {
    if (parts.kind === "error")
      message = String((JSON.parse(parts.json) as { message?: unknown }).message ?? message);
  } catch {
    // keep the generic message
  }
  throw new SandboxHostError(message);
}
