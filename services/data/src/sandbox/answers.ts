/**
 * The one format of an answer crossing the isolate boundary, in both directions (a sandboxed
 * call's result to the host, a host function's outcome back to the script): tagged text,
 * "R<json>" a value, "R" alone undefined, "E<json>" an error. bootstrap.js writes and reads the
 * same tags inside the isolate.
 */

/** The answer for an undefined value. */
export const UNDEFINED_ANSWER = "R";

/** The answer for a value, given its JSON text (undefined: the value is undefined). */
export function valueAnswer(json: string | undefined): string {
  return json === undefined ? UNDEFINED_ANSWER : `R${json}`;
}

/** The answer for an error, described by `details`. */
export function errorAnswer(details: Record<string, unknown>): string {
  return `E${JSON.stringify(details)}`;
}

/** An answer taken apart: a value's JSON text (undefined: undefined), an error's, or neither. */
export type AnswerParts =
  | { kind: "value"; json: string | undefined }
  | { kind: "error"; json: string }
  | { kind: "unreadable" };

export function answerParts(answer: string): AnswerParts {
  const tag = answer.charAt(0);
  const body = answer.slice(1);
  if (tag === "R") return { kind: "value", json: body === "" ? undefined : body };
  if (tag === "E") return { kind: "error", json: body };
  return { kind: "unreadable" };
}
