/**
 * An API failure (or any error) as an alert that takes the focus, so it is read out at
 * once; with a Retry button when what failed can simply be tried again (a load).
 */
import { useRef } from "preact/hooks";
import { ApiFailure } from "../api.ts";
import { useFocusOn } from "./focus.ts";

export function ErrorNotice({
  error,
  title,
  onRetry,
}: {
  error: unknown;
  title?: string;
  onRetry?: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useFocusOn(ref, error);
  if (!error) return null;
  const failure = error instanceof ApiFailure ? error : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="notice error" role="alert" tabIndex={-1} ref={ref}>
      {title && <strong class="notice-title">{title}</strong>}
      <p class="notice-message">{message}</p>
      {failure && failure.status > 0 && (
        <p class="notice-meta">
          {failure.status}
          {failure.errorCode !== undefined && ` / ${failure.errorCode}`}
          {failure.requestId && ` · request ${failure.requestId}`}
        </p>
      )}
      {onRetry && (
        <button type="button" class="retry" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

/** A short success message that takes the focus. */
export function Done({ message }: { message: string | undefined }) {
  const ref = useRef<HTMLDivElement>(null);
  useFocusOn(ref, message);
  if (!message) return null;
  return (
    <div class="notice ok" role="status" tabIndex={-1} ref={ref}>
      {message}
    </div>
  );
}

/** What the last change came to: its error, or its success message. */
export function Outcome({ action }: { action: { error: unknown; done: string | undefined } }) {
  return (
    <div class="outcome">
      <ErrorNotice error={action.error} />
      <Done message={action.done} />
    </div>
  );
}
