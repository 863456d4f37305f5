import { expect } from "chai";
import fc from "fast-check";
import { exactRegex, likeToRegex } from "../../../services/data/src/query/like-regex.ts";

/** Reference SQL LIKE (case-sensitive, no escape character) over code points. */
function sqlLike(text: string, pattern: string): boolean {
  const s = Array.from(text);
  const p = Array.from(pattern);
  // dp[j]: pattern prefix of length i matches text prefix of length j
  let dp = new Array<boolean>(s.length + 1).fill(false);
  dp[0] = true;
  for (const pc of p) {
    const next = new Array<boolean>(s.length + 1).fill(false);
    if (pc === "%") {
      let any = false;
      for (let j = 0; j <= s.length; j++) {
        any ||= dp[j]!;
        next[j] = any;
      }
    } else {
      for (let j = 1; j <= s.length; j++) next[j] = dp[j - 1]! && (pc === "_" || pc === s[j - 1]);
    }
    dp = next;
  }
  return dp[s.length]!;
}

/**
 * Reads our regex dialect (what PCRE and RE2 see) into an equivalent JavaScript
 * RegExp in Unicode mode, so that its meaning can be checked here: `\z` → `$`,
 * `\xHH` / `\x{H}` / `\<punct>` / plain characters → `\u{H}`.
 */
function toJsRegExp(source: string, flags: string): RegExp {
  let out = "";
  let i = 0;
  const cps = Array.from(source);
  while (i < cps.length) {
    const c = cps[i];
    if (c === "^") {
      out += "^";
      i++;
    } else if (c === "[" && cps.slice(i, i + 6).join("") === "[\\s\\S]") {
      out += "[\\s\\S]";
      i += 6;
    } else if (c === "*") {
      out += "*";
      i++;
    } else if (c === "\\") {
      const e = cps[i + 1];
      if (e === "z") {
        out += "$";
        i += 2;
      } else if (e === "x" && cps[i + 2] === "{") {
        const close = cps.indexOf("}", i);
        out += `\\u{${cps.slice(i + 3, close).join("")}}`;
        i = close + 1;
      } else if (e === "x") {
        out += `\\u{${cps.slice(i + 2, i + 4).join("")}}`;
        i += 4;
      } else {
        expect(e, "only punctuation is escaped").to.match(/^[!-/:-@[-`{-~]$/);
        out += `\\u{${e!.codePointAt(0)!.toString(16)}}`;
        i += 2;
      }
    } else {
      expect(c, "punctuation must be escaped").not.to.match(/^[!-/:-@[-`{-~]$/);
      out += `\\u{${c!.codePointAt(0)!.toString(16)}}`;
      i++;
    }
  }
  return new RegExp(out, `u${flags}`);
}

const alphabet = [
  "a",
  "A",
  "b",
  "%",
  "_",
  ".",
  "*",
  "\\",
  "(",
  "[",
  "$",
  "^",
  "\n",
  "'",
  "é",
  "😀",
  " ",
  "\u2028",
];
const text = fc.array(fc.constantFrom(...alphabet.filter((c) => c !== "%" && c !== "_"), "%", "_"), {
  maxLength: 8,
});
const pattern = fc.array(fc.constantFrom(...alphabet), { maxLength: 6 });

describe("query: like → regex", () => {
  it("translates wildcards and anchors", () => {
    expect(likeToRegex("abc").source).to.equal("^abc\\z");
    expect(likeToRegex("a%").source).to.equal("^a[\\s\\S]*\\z");
    expect(likeToRegex("_b_").source).to.equal("^[\\s\\S]b[\\s\\S]\\z");
    expect(likeToRegex("").source).to.equal("^\\z");
    expect(likeToRegex("%").source).to.equal("^[\\s\\S]*\\z");
  });

  it("merges runs of wildcards into one unbounded repetition", () => {
    expect(likeToRegex("a%%%b")).to.deep.equal({
      source: "^a[\\s\\S]*b\\z",
      local: "^a[\\s\\S]*b$",
      wildcards: 1,
    });
    expect(likeToRegex("%_%_%")).to.include({ source: "^[\\s\\S][\\s\\S][\\s\\S]*\\z", wildcards: 1 });
    expect(likeToRegex("%a%b%").wildcards).to.equal(3);
  });

  it("escapes every regex metacharacter", () => {
    expect(likeToRegex(".*").source).to.equal("^\\.\\*\\z");
    expect(likeToRegex("(a|b)").source).to.equal("^\\(a\\|b\\)\\z");
    expect(likeToRegex("[x]{2}").source).to.equal("^\\[x\\]\\{2\\}\\z");
    expect(likeToRegex("\\d+?$^/").source).to.equal("^\\\\d\\+\\?\\$\\^\\/\\z");
    expect(likeToRegex("(?i)").source).to.equal("^\\(\\?i\\)\\z");
  });

  it("writes control characters and line separators as hex escapes", () => {
    expect(likeToRegex("a\nb\u0000\u007f").source).to.equal("^a\\x0ab\\x00\\x7f\\z");
    expect(likeToRegex("\u2028\u2029").source).to.equal("^\\x{2028}\\x{2029}\\z");
  });

  it("keeps other Unicode as is", () => {
    expect(likeToRegex("Zoë 😀").source).to.equal("^Zoë 😀\\z");
  });

  it("builds exact, escaped regexes for case-insensitive equality", () => {
    expect(exactRegex("a%_.b").source).to.equal("^a\\%\\_\\.b\\z");
  });

  it("means the same as SQL LIKE (property)", () => {
    fc.assert(
      fc.property(text, pattern, (t, p) => {
        const s = t.join("");
        const like = p.join("");
        expect(
          toJsRegExp(likeToRegex(like).source, "").test(s),
          `${JSON.stringify(s)} like ${JSON.stringify(like)}`,
        ).to.equal(sqlLike(s, like));
      }),
      { numRuns: 1000 },
    );
  });

  it("matches itself exactly for equality regexes (property)", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: "binary", maxLength: 12 }),
        fc.string({ unit: "binary", maxLength: 12 }),
        (a, b) => {
          fc.pre(a.isWellFormed() && b.isWellFormed());
          expect(toJsRegExp(exactRegex(a).source, "").test(b)).to.equal(a === b);
          expect(toJsRegExp(exactRegex(a).source, "").test(a)).to.equal(true);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("the local form (a JavaScript RegExp in Unicode mode) means the same as SQL LIKE (property)", () => {
    fc.assert(
      fc.property(text, pattern, (t, p) => {
        const s = t.join("");
        const like = p.join("");
        expect(
          new RegExp(likeToRegex(like).local, "u").test(s),
          `${JSON.stringify(s)} like ${JSON.stringify(like)}`,
        ).to.equal(sqlLike(s, like));
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 12 }), (a) => {
        fc.pre(a.isWellFormed());
        expect(new RegExp(exactRegex(a).local, "u").test(a)).to.equal(true);
      }),
      { numRuns: 500 },
    );
  });

  it("survives a round trip through JavaScript's RegExp.source unchanged (property)", () => {
    // compileFilter puts `new RegExp(source)` in $nin; the driver sends RegExp.source.
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (p) => {
        fc.pre(p.isWellFormed());
        const { source } = likeToRegex(p);
        expect(new RegExp(source).source).to.equal(source);
        expect(new RegExp(source, "i").source).to.equal(source);
      }),
      { numRuns: 1000 },
    );
  });
});
