/**
 * A Filter or Order input in the filter language: a 4002 error about it is shown under
 * it, with the character at the position it names marked, and the cursor put there.
 */
import { useLayoutEffect, useRef } from "preact/hooks";
import type { QueryErrorPlace } from "./query-error.ts";

export interface QueryInputError {
  message: string;
  place: QueryErrorPlace;
  /** Set anew by each failed request: focus moves to the input once per failure, not per render. */
  failure: unknown;
}

export function QueryInput(props: {
  name: "filter" | "order";
  label: string;
  value: string;
  onInput: (v: string) => void;
  placeholder: string;
  error: QueryInputError | undefined;
}) {
  const ref = useRef<HTMLInputElement>(null);
  const id = `query-${props.name}`;
  const { error } = props;
  useLayoutEffect(() => {
    if (!error || !ref.current) return;
    ref.current.focus();
    const at = error.place.offset ?? 0;
    ref.current.setSelectionRange(at, Math.min(at + 1, props.value.length));
  }, [error?.failure]);
  const at = error?.place.offset;
  return (
    <div class="field grow">
      <label for={id}>{props.label}</label>
      <input
        id={id}
        ref={ref}
        class="code"
        value={props.value}
        placeholder={props.placeholder}
        aria-invalid={error ? "true" : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onInput={(e) => props.onInput((e.target as HTMLInputElement).value)}
      />
      {error && (
        <div id={`${id}-error`} class="field-error" role="alert">
          <p>{error.message}</p>
          {at !== undefined && (
            <p class="code caret" aria-hidden="true">
              {props.value.slice(0, at)}
              <mark>{props.value.slice(at, at + 1) || " "}</mark>
              {props.value.slice(at + 1)}
            </p>
          )}
        </div>
      )}
    </div>
  );
}
