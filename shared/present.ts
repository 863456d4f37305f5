/**
 * Values the code knows are there (a relationship's table in a compiled model, a regular
 * expression's required group after a match, …): `present` says which invariant holds and checks it,
 * instead of a non-null assertion that would let a broken invariant surface later as a TypeError.
 */

/** `value`, or an Error naming the broken invariant `what` when it is null or undefined. */
export function present<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`internal: ${what} is missing`);
  return value;
}
