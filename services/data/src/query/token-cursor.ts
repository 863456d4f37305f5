/**
 * A parser's place in a token list that ends with an `eof` token (what every
 * tokenizer of this folder returns): reading never moves past that token, so
 * a parser that reads on at the end keeps finding the end.
 */
export class TokenCursor<T extends { kind: string }> {
  readonly #tokens: readonly T[];
  readonly #end: T;
  #index = 0;

  constructor(tokens: readonly T[]) {
    const end = tokens.at(-1);
    if (end?.kind !== "eof") throw new Error("a token list must end with an eof token");
    this.#tokens = tokens;
    this.#end = end;
  }

  /** The token here. */
  peek(): T {
    return this.#tokens[this.#index] ?? this.#end;
  }

  /** The token here; the cursor moves past it unless it is the end. */
  next(): T {
    const token = this.peek();
    if (token !== this.#end) this.#index++;
    return token;
  }
}
