/** A modal dialog (the browser's own <dialog>: Escape closes it, focus stays inside). */
import type { ComponentChildren } from "preact";
import { useCallback, useLayoutEffect, useRef } from "preact/hooks";

/** The title may hold names: isolate them (`<bdi>`), so that their text cannot reorder it. */
export function Dialog(props: {
  title: ComponentChildren;
  onClose: () => void;
  children: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement | null>(null);
  // Opened as soon as it is in the page (a ref is set before any layout effect runs), so the
  // dialog is never shown without its focus trap, and what its content measures in its own
  // layout effects (a ScrollArea: whether it scrolls) is measured in the open dialog, not in a
  // closed one that has no size.
  const open = useCallback((dialog: HTMLDialogElement | null) => {
    ref.current = dialog;
    if (dialog && !dialog.open) dialog.showModal();
  }, []);
  useLayoutEffect(() => () => ref.current?.open && ref.current.close(), []);
  return (
    <dialog ref={open} class="dialog" aria-labelledby="dialog-title" onClose={props.onClose}>
      <h2 id="dialog-title">{props.title}</h2>
      {props.children}
    </dialog>
  );
}

/** A yes/no question in a dialog. */
export function Confirm(props: {
  title: ComponentChildren;
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <Dialog title={props.title} onClose={props.onCancel}>
      <p>{props.question}</p>
      <div class="actions">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel} autofocus>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
