/** A titled form in a card, submitted by its button or by Enter in any of its inputs. */
import type { ComponentChildren } from "preact";
import { useId } from "preact/hooks";

export function FormCard(props: {
  title: string;
  submitLabel: string;
  busy?: boolean;
  onSubmit: () => void;
  children: ComponentChildren;
}) {
  const titleId = useId();
  return (
    <form
      class="card"
      aria-labelledby={titleId}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
      <div class="actions">
        <button type="submit" class="primary" disabled={props.busy}>
          {props.submitLabel}
        </button>
      </div>
    </form>
  );
}
