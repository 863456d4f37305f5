/** A value in full, in a dialog: its text wraps (long words too) and scrolls when it is tall. */
import { Dialog } from "../components/Dialog.tsx";
import { ScrollArea } from "../components/ScrollArea.tsx";
import { Value, valueText } from "../components/Value.tsx";

export function FullValue(props: { title: string; value: unknown; onClose: () => void }) {
  const value =
    typeof props.value === "object" && props.value !== null
      ? JSON.stringify(props.value, null, 2)
      : props.value;
  return (
    <Dialog title={props.title} onClose={props.onClose}>
      <p class="muted">{valueText(props.value).length} characters</p>
      <ScrollArea label="Value" class="full-value">
        <Value value={value} />
      </ScrollArea>
      <div class="actions">
        <button type="button" onClick={props.onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
