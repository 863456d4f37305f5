/**
 * What Tessera makes of the answers of JavaScript resources and events, and
 * what it refuses. Pure functions: the runner turns their verdicts into
 * errors.
 *
 * `@metadata.checksum` is what optimistic locking rests on: a client sends it
 * back to update the object named by `@metadata.href`. So no script may hand
 * a client a checksum that Tessera did not give it for that same href (a
 * forged one, `override`, or one moved to another object); it may drop
 * `@metadata`, or keep it as it was.
 */
import { isPlainObject } from "../domain/model/column-values.ts";

/** The statuses and error codes a request event may refuse with (and the code when it names none). */
export const REFUSAL_STATUS = { min: 400, max: 499 } as const;
export const REFUSAL_CODES = { min: 4900, max: 4999, default: 4900 } as const;
const MAX_MESSAGE = 1000;

export type RequestEventOutcome =
  | { kind: "pass" }
  | { kind: "body"; body: unknown }
  | { kind: "refuse"; statusCode: number; errorCode: number; errorMessage: string }
  /** The answer breaks the rules of request events: `problem` says how. */
  | { kind: "invalid"; problem: string };

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/**
 * A request event's answer: nothing (pass), `{body}` (pass with this body;
 * writes with a body only) or `{reject: {statusCode, errorCode?, errorMessage?}}`.
 */
export function requestEventOutcome(value: unknown, hasBody: boolean, label: string): RequestEventOutcome {
  if (value === undefined || value === null) return { kind: "pass" };
  if (!isPlainObject(value)) {
    return { kind: "invalid", problem: `answered ${describe(value)}; expected nothing, {reject} or {body}` };
  }
  const fields = Object.keys(value);
  const unknown = fields.find((f) => f !== "reject" && f !== "body");
  if (unknown !== undefined) {
    return {
      kind: "invalid",
      problem: `answered an object with '${unknown}'; expected nothing, {reject} or {body}`,
    };
  }
  if (fields.length !== 1) return { kind: "invalid", problem: "answered both 'reject' and 'body'" };
  if ("body" in value) {
    if (!hasBody) return { kind: "invalid", problem: "answered a body, but only a POST or PUT has one" };
    return { kind: "body", body: value.body };
  }
  return refusal(value.reject, label);
}

function refusal(reject: unknown, label: string): RequestEventOutcome {
  if (!isPlainObject(reject)) return { kind: "invalid", problem: `answered 'reject' as ${describe(reject)}` };
  const unknown = Object.keys(reject).find((f) => !["statusCode", "errorCode", "errorMessage"].includes(f));
  if (unknown !== undefined) {
    return {
      kind: "invalid",
      problem: `answered 'reject' with '${unknown}'; it takes statusCode, errorCode and errorMessage`,
    };
  }
  const { statusCode, errorCode = REFUSAL_CODES.default, errorMessage } = reject;
  if (!inRange(statusCode, REFUSAL_STATUS)) {
    return {
      kind: "invalid",
      problem: `refused with statusCode ${JSON.stringify(statusCode)}; a request event refuses with ${REFUSAL_STATUS.min} to ${REFUSAL_STATUS.max}`,
    };
  }
  if (!inRange(errorCode, REFUSAL_CODES)) {
    return {
      kind: "invalid",
      problem: `refused with errorCode ${JSON.stringify(errorCode)}; a request event's codes are ${REFUSAL_CODES.min} to ${REFUSAL_CODES.max}`,
    };
  }
  if (errorMessage !== undefined && (typeof errorMessage !== "string" || errorMessage.length > MAX_MESSAGE)) {
    return {
      kind: "invalid",
      problem: `refused with an errorMessage that is not a text of at most ${MAX_MESSAGE} characters`,
    };
  }
  return {
    kind: "refuse",
    statusCode,
    errorCode,
    errorMessage: errorMessage || `Refused by the request event ${label}`,
  };
}

/**
 * A request event that threw refuses the request as a `{reject}` without
 * status or code would (400/4900), with the thrown error's message (its
 * message only: never its name or a stack), or the default message when the
 * error had none.
 */
export function thrownRefusal(message: string, label: string): RequestEventOutcome & { kind: "refuse" } {
  return {
    kind: "refuse",
    statusCode: REFUSAL_STATUS.min,
    errorCode: REFUSAL_CODES.default,
    errorMessage: message.trim().slice(0, MAX_MESSAGE) || `Refused by the request event ${label}`,
  };
}

function inRange(value: unknown, range: { min: number; max: number }): value is number {
  return Number.isInteger(value) && (value as number) >= range.min && (value as number) <= range.max;
}

/** A body a resource or a response event may answer: an array or an object. */
export function answerProblem(value: unknown): string | undefined {
  return typeof value === "object" && value !== null
    ? undefined
    : `answered ${describe(value)}; expected an array or an object`;
}

/** Walks every object of a JSON value (iteratively: answers may be deep). */
function forEachObject(value: unknown, visit: (object: Record<string, unknown>) => void): void {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (Array.isArray(current)) {
      for (const item of current) if (typeof item === "object" && item !== null) stack.push(item);
    } else if (isPlainObject(current)) {
      visit(current);
      for (const item of Object.values(current))
        if (typeof item === "object" && item !== null) stack.push(item);
    }
  }
}

/** Adds `href → checksum` of every object of `value` whose `@metadata` has both. */
export function collectChecksums(value: unknown, into: Map<string, string>): Map<string, string> {
  forEachObject(value, (object) => {
    const meta = object["@metadata"];
    if (isPlainObject(meta) && typeof meta.href === "string" && typeof meta.checksum === "string")
      into.set(meta.href, meta.checksum);
  });
  return into;
}

/**
 * The first `@metadata.checksum` of `value` that `known` does not hold for its
 * object's `@metadata.href`, described as what a script answered, or
 * undefined when all are known.
 */
export function unknownChecksum(value: unknown, known: ReadonlyMap<string, string>): string | undefined {
  let found: string | undefined;
  forEachObject(value, (object) => {
    if (found !== undefined) return;
    const meta = object["@metadata"];
    if (!isPlainObject(meta) || meta.checksum === undefined) return;
    const href = meta.href;
    if (typeof href !== "string") found = "answered a @metadata.checksum without its @metadata.href";
    else if (known.get(href) !== meta.checksum)
      found = `answered a @metadata.checksum that is not the one Tessera gave for ${href}`;
  });
  return found;
}
