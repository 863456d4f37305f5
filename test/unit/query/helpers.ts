/** Shared helpers of the query-language unit tests. */
import { expect } from "chai";
import { ApiError, ErrorCode } from "../../../shared/errors.ts";

/** Runs `fn`, expects a 400/4002 and returns its message; `position` is the 1-based position it must name. */
export function expectBadFilter(
  fn: () => unknown,
  expected: { position?: number; includes?: string | string[] } = {},
): string {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  expect(caught, "expected a 400/4002 error").to.be.instanceOf(ApiError);
  const error = caught as ApiError;
  expect(error.statusCode).to.equal(400);
  expect(error.errorCode).to.equal(ErrorCode.badFilter);
  if (expected.position !== undefined) expect(error.message).to.include(`at position ${expected.position}:`);
  for (const part of [expected.includes ?? []].flat()) expect(error.message).to.include(part);
  return error.message;
}

/** A deep copy of an AST without positions and sources, for structural comparison. */
export function strip(value: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === "pos" || key === "source" ? undefined : v)));
}

/** JSON with RegExp shown as /source/flags, for comparing compiled queries. */
export function show(query: unknown): unknown {
  return JSON.parse(
    JSON.stringify(query, (_key, v) => (v instanceof RegExp ? `/${v.source}/${v.flags}` : v)),
  );
}
