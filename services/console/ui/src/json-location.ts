/**
 * Where a problem's JSON path (`$.tables.customer.key[0]`, `$.roles["a b"].tables`)
 * is in the definition's text: the span of its value, or of the deepest part of
 * the path that exists (a missing property is reported at its object).
 */
import { findNodeAtLocation, type JSONPath, parseTree } from "jsonc-parser";

export function parseJsonPath(path: string): JSONPath | undefined {
  if (!path.startsWith("$")) return undefined;
  const segments: JSONPath = [];
  const forms: [RegExp, (text: string) => string | number][] = [
    [/^\.([^.[]+)/, (text) => text],
    [/^\[(\d+)\]/, (text) => Number(text)],
    [/^\[("(?:[^"\\]|\\.)*")\]/, (text) => JSON.parse(text) as string],
  ];
  let rest = path.slice(1);
  while (rest) {
    const [step] = forms.flatMap(([pattern, value]) => {
      const m = pattern.exec(rest);
      return m?.[1] === undefined ? [] : [{ segment: value(m[1]), length: m[0].length }];
    });
    if (!step) return undefined;
    segments.push(step.segment);
    rest = rest.slice(step.length);
  }
  return segments;
}

/** Segments as a JSON path, written as the server writes them (`$.roles["a b"].tables`). */
export function formatJsonPath(segments: JSONPath): string {
  return segments.reduce<string>(
    (acc, part) =>
      typeof part === "number"
        ? `${acc}[${part}]`
        : /^[A-Za-z_][A-Za-z0-9_]*$/.test(part)
          ? `${acc}.${part}`
          : `${acc}[${JSON.stringify(part)}]`,
    "$",
  );
}

export interface TextSpan {
  offset: number;
  length: number;
  line: number;
}

export function locate(text: string, path: string): TextSpan | undefined {
  const segments = parseJsonPath(path);
  const root = parseTree(text);
  if (!segments || !root) return undefined;
  for (let n = segments.length; n >= 0; n--) {
    const node = findNodeAtLocation(root, segments.slice(0, n));
    if (node) {
      const at = node.parent?.type === "property" ? node.parent : node;
      return {
        offset: at.offset,
        length: at.length,
        line: text.slice(0, at.offset).split("\n").length,
      };
    }
  }
  return undefined;
}
