/**
 * The structured diff of a dry run: named entries `{added, removed, changed}` and
 * changed fields `{before, after}`, nested to any depth, each part labelled.
 */
import { Value } from "./Value.tsx";

type Diff = Record<string, unknown>;

const isObject = (v: unknown): v is Diff => typeof v === "object" && v !== null && !Array.isArray(v);
const isChange = (v: unknown): v is { before?: unknown; after?: unknown } =>
  isObject(v) && Object.keys(v).length > 0 && Object.keys(v).every((k) => k === "before" || k === "after");

function Change({ change }: { change: { before?: unknown; after?: unknown } }) {
  return (
    <span class="diff-change">
      <del class="diff-before">{"before" in change ? <Value value={change.before} /> : "(not set)"}</del>
      {" → "}
      <ins class="diff-after">{"after" in change ? <Value value={change.after} /> : "(not set)"}</ins>
    </span>
  );
}

function Entries({ diff }: { diff: Diff }) {
  return (
    <ul class="diff-tree">
      {Object.entries(diff).map(([name, part]) => {
        if (name === "added" && Array.isArray(part))
          return part.map((n) => (
            <li key={`+${n}`} class="diff-added">
              <span class="diff-mark" aria-hidden="true">
                +
              </span>
              <span class="sr-only">added</span> <Value value={n} />
            </li>
          ));
        if (name === "removed" && Array.isArray(part))
          return part.map((n) => (
            <li key={`-${n}`} class="diff-removed">
              <span class="diff-mark" aria-hidden="true">
                −
              </span>
              <span class="sr-only">removed</span> <Value value={n} />
            </li>
          ));
        if (name === "changed" && isObject(part))
          return Object.entries(part).map(([n, inner]) => (
            <li key={`~${n}`} class="diff-changed">
              <span class="diff-mark" aria-hidden="true">
                ~
              </span>
              <span class="sr-only">changed</span> <bdi class="diff-name">{n}</bdi>
              {isChange(inner) ? (
                <>
                  {": "}
                  <Change change={inner} />
                </>
              ) : (
                isObject(inner) && <Entries diff={inner} />
              )}
            </li>
          ));
        return (
          <li key={name}>
            <span class="diff-name">{name}</span>
            {isChange(part) ? (
              <>
                {": "}
                <Change change={part} />
              </>
            ) : isObject(part) ? (
              <Entries diff={part} />
            ) : (
              <>
                : <Value value={part} />
              </>
            )}
          </li>
        );
      })}
    </ul>
  );
}

export function DiffView({ diff }: { diff: Diff }) {
  const { summary, ...sections } = diff;
  return (
    <section class="diff" aria-label="What would change">
      <p class="diff-summary">
        <strong>Summary:</strong> <Value value={summary} />
      </p>
      {Object.keys(sections).length > 0 && <Entries diff={sections} />}
    </section>
  );
}
