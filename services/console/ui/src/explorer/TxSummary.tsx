/**
 * The transaction summary of a write: every row it changed. Entries other than
 * the object written (rows changed by rules, nested children) are marked.
 */
import { useRef } from "preact/hooks";
import { localPath } from "../api.ts";
import { useFocusOn } from "../components/focus.ts";
import { Value } from "../components/Value.tsx";
import { metadataOf, type Row } from "./rows.ts";

export interface WriteOutcome {
  what: string;
  txsummary: Row[];
  /**
   * The paths of the rows the user wrote (a bulk delete's chosen rows): every other entry
   * is a side effect (a rule's). Without it, the first entry is the one written.
   */
  written?: string[];
}

/** Whether a txsummary entry is a side effect: a row the user did not write. */
function isSideEffect(outcome: WriteOutcome, entry: Row, index: number): boolean {
  const href = metadataOf(entry).href;
  if (outcome.written) return !href || !outcome.written.includes(localPath(href));
  return index > 0 && href !== metadataOf(outcome.txsummary[0] ?? {}).href;
}

export function TxSummary({ outcome }: { outcome: WriteOutcome | undefined }) {
  const ref = useRef<HTMLElement>(null);
  useFocusOn(ref, outcome);
  if (!outcome) return null;
  return (
    <section class="txsummary" aria-labelledby="txsummary-title" tabIndex={-1} ref={ref}>
      <h2 id="txsummary-title">
        {outcome.what}: {outcome.txsummary.length} row(s) changed
      </h2>
      {outcome.txsummary.length === 0 && <p class="empty">Nothing changed.</p>}
      <ol>
        {outcome.txsummary.map((entry, i) => {
          const m = metadataOf(entry);
          const sideEffect = isSideEffect(outcome, entry, i);
          return (
            <li key={`${m.href}-${i}`} class={sideEffect ? "side-effect" : "written"}>
              <span class={`badge verb-${(m.verb ?? "").toLowerCase()}`}>{m.verb}</span>{" "}
              <strong>{m.resource}</strong> <code class="muted">{m.href ? localPath(m.href) : ""}</code>
              {sideEffect && <span class="badge side-effect-label">side effect</span>}
              <dl class="attributes">
                {Object.entries(entry)
                  .filter(([k]) => k !== "@metadata")
                  .map(([k, v]) => (
                    <div key={k}>
                      <dt>{k}</dt>
                      <dd>
                        <Value value={v} />
                      </dd>
                    </div>
                  ))}
              </dl>
            </li>
          );
        })}
      </ol>
    </section>
  );
}
