/**
 * A Redis reply of names and values one after the other (a stream entry's fields,
 * `ZRANGE … WITHSCORES`) as [name, value] pairs; a last name without its value is left out.
 */
export function pairsOf(flat: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  let name: string | undefined;
  for (const item of flat) {
    if (name === undefined) {
      name = item;
    } else {
      pairs.push([name, item]);
      name = undefined;
    }
  }
  return pairs;
}
