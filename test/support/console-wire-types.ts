/**
 * Where the console names the admin API's wire shapes. A screen calls no client itself (its
 * answers come typed from `admin-api.ts`), and every answer type `admin-api.ts` gives a call
 * is one of the shared contracts' (shared/contracts/admin-api.ts), a type parameter, or a
 * built-in: a screen that declared its own wire type would have to do one or the other.
 */
import ts from "typescript";

export interface WireTypeFinding {
  line: number;
  problem: string;
}

/** Types a call's answer may be named with besides the contracts' and type parameters. */
const BUILT_IN = new Set(["Record", "Array", "ReadonlyArray", "Partial"]);

const lineOf = (source: ts.SourceFile, node: ts.Node) =>
  source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;

/** A client call: any `….call(…)` (a screen has no other use for one). */
const isClientCall = (node: ts.Node): node is ts.CallExpression =>
  ts.isCallExpression(node) &&
  ts.isPropertyAccessExpression(node.expression) &&
  node.expression.name.text === "call";

/** A screen's client calls: each is a wire shape the screen would have to type itself. */
export function screenFindings(fileName: string, text: string): WireTypeFinding[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TSX);
  const found: WireTypeFinding[] = [];
  const visit = (node: ts.Node) => {
    if (isClientCall(node))
      found.push({
        line: lineOf(source, node),
        problem: `calls a client itself (${node.expression.getText(source)}): use the typed admin API`,
      });
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The names a module imports from the shared contracts (`contracts`: the specifier's ending). */
function contractNames(source: ts.SourceFile, contracts: string): Set<string> {
  const names = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!statement.moduleSpecifier.text.endsWith(contracts)) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) names.add(e.name.text);
  }
  return names;
}

/** The type parameters in scope at `node`. */
function typeParameters(node: ts.Node): Set<string> {
  const names = new Set<string>();
  for (let at: ts.Node | undefined = node; at; at = at.parent)
    if (ts.isFunctionLike(at)) for (const p of at.typeParameters ?? []) names.add(p.name.text);
  return names;
}

/**
 * The admin API module's calls whose answer types name something that is neither a contract, a
 * type parameter nor a built-in (calls of `call` and of its own `get`).
 */
export function apiModuleFindings(
  fileName: string,
  text: string,
  contracts = "shared/contracts/admin-api.ts",
): WireTypeFinding[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const allowed = contractNames(source, contracts);
  const found: WireTypeFinding[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isCallExpression(node) && node.typeArguments) {
      const callee = node.expression;
      const name = ts.isPropertyAccessExpression(callee)
        ? callee.name.text
        : ts.isIdentifier(callee)
          ? callee.text
          : "";
      if (name === "call" || name === "get") {
        const inScope = typeParameters(node);
        const check = (t: ts.Node) => {
          if (ts.isTypeReferenceNode(t)) {
            const named = t.typeName.getText(source);
            if (!allowed.has(named) && !inScope.has(named) && !BUILT_IN.has(named))
              found.push({
                line: lineOf(source, t),
                problem: `answer typed ${named}, not a shared contract`,
              });
          }
          if (ts.isTypeLiteralNode(t))
            found.push({
              line: lineOf(source, t),
              problem: "answer typed by a type literal, not a shared contract",
            });
          ts.forEachChild(t, check);
        };
        for (const t of node.typeArguments) check(t);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}
