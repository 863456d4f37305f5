/**
 * What a load is doing: "Loading …" while it runs (the region it fills says
 * `aria-busy`), and when it failed, the error with a Retry button.
 */
import { ErrorNotice } from "./ErrorNotice.tsx";

export function LoadStatus(props: {
  what: string;
  load: { loading: boolean; error: unknown; reload: () => void };
}) {
  const { load } = props;
  if (load.loading)
    return (
      <p class="loading" role="status">
        Loading {props.what}…
      </p>
    );
  return <ErrorNotice error={load.error} onRetry={load.reload} />;
}
