/**
 * The problems of a definition's text found while it is typed, each with its span in
 * the text: the first JSON syntax error (jsonc-parser, comments and trailing commas
 * refused as JSON.parse refuses them), or, when the text parses, where it breaks the server's
 * definition schema (json-schema.ts). The editor shows them inline and in its list.
 */
import { findNodeAtLocation, type ParseError, parse, parseTree, printParseErrorCode } from "jsonc-parser";
import { formatJsonPath } from "../json-location.ts";
import { type JsonSchema, schemaProblems } from "./json-schema.ts";

export interface TextProblem {
  kind: "syntax" | "schema";
  from: number;
  to: number;
  /** The JSON path of the place (`$` for a syntax error). */
  path: string;
  message: string;
  /** 1-based line of `from`. */
  line: number;
}

const SYNTAX_MESSAGES: Record<string, string> = {
  InvalidSymbol: "not JSON here",
  InvalidNumberFormat: "not a JSON number",
  PropertyNameExpected: "a property name in double quotes is expected",
  ValueExpected: "a value is expected",
  ColonExpected: "':' is expected",
  CommaExpected: "',' is expected",
  CloseBraceExpected: "'}' is expected",
  CloseBracketExpected: "']' is expected",
  EndOfFileExpected: "nothing may follow the definition",
  InvalidCommentToken: "JSON has no comments",
  UnexpectedEndOfComment: "JSON has no comments",
  UnexpectedEndOfString: "the string is not closed",
  UnexpectedEndOfNumber: "the number is not complete",
  InvalidUnicode: "not a valid \\u escape",
  InvalidEscapeCharacter: "not a valid escape",
  InvalidCharacter: "a control character must be escaped in a string",
};

const STRICT = { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false };

const lineAt = (text: string, offset: number) => text.slice(0, offset).split("\n").length;

export function textProblems(schema: JsonSchema | undefined, text: string): TextProblem[] {
  const errors: ParseError[] = [];
  const value: unknown = parse(text, errors, STRICT);
  if (errors.length) {
    // The first syntax error only: those after it are mostly its echoes (every brace left open).
    return errors.slice(0, 1).map((e) => {
      const code = printParseErrorCode(e.error);
      const from = Math.min(e.offset, text.length);
      return {
        kind: "syntax",
        from,
        to: Math.min(text.length, from + Math.max(1, e.length)),
        path: "$",
        message: `JSON: ${SYNTAX_MESSAGES[code] ?? code}`,
        line: lineAt(text, from),
      };
    });
  }
  if (!schema) return [];
  const root = parseTree(text, [], STRICT);
  if (!root) return [];
  return schemaProblems(schema, value).map((p) => {
    const node = findNodeAtLocation(root, p.path) ?? root;
    // An unknown or misnamed field: its name; a missing field: the name of the object that lacks it.
    const keyNode = node.parent?.type === "property" ? node.parent.children?.[0] : undefined;
    const at = p.atKey ? (keyNode ?? { offset: node.offset, length: 1 }) : node;
    return {
      kind: "schema",
      from: at.offset,
      to: at.offset + Math.max(1, at.length),
      path: formatJsonPath(p.path),
      message: p.message,
      line: lineAt(text, at.offset),
    };
  });
}
