/**
 * A list the screen can change: loaded (with loading, error and Retry, see useLoad),
 * a change that reloads it when it is made (create, replace), and a removal that is
 * asked about first (`ask` opens the question, `confirm` removes and reloads).
 */
import { useState } from "preact/hooks";
import { type Action, useAction } from "./useAction.ts";
import { type Loaded, useLoad } from "./useLoad.ts";

export interface Collection<T> extends Loaded<T[]> {
  /** The last change's error or success message (show it with <Outcome>). */
  action: Action;
  /** Makes a change; when it succeeds the list is loaded again. Answers whether it succeeded. */
  change: (work: () => Promise<string | undefined>) => Promise<boolean>;
  /** The item whose removal is being asked about. */
  removing: T | undefined;
  ask: (item: T) => void;
  cancel: () => void;
  /** Removes the item asked about; the list is loaded again. */
  confirm: () => void;
}

export function useCollection<T>(
  list: (signal: AbortSignal) => Promise<T[]>,
  remove: (item: T) => Promise<string>,
  inputs: unknown[],
): Collection<T> {
  const loaded = useLoad(list, inputs);
  const action = useAction();
  const [removing, setRemoving] = useState<T>();
  const change = (work: () => Promise<string | undefined>) =>
    action.run(async () => {
      const message = await work();
      await loaded.reload();
      return message;
    });
  return {
    ...loaded,
    action,
    change,
    removing,
    ask: setRemoving,
    cancel: () => setRemoving(undefined),
    confirm() {
      const item = removing;
      setRemoving(undefined);
      if (item !== undefined) void change(() => remove(item));
    },
  };
}
