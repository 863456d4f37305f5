/**
 * The code editor as a Preact component: loads CodeMirror on demand (code-editor.ts),
 * starts it with `text`, puts `text` in again whenever `version` changes (a text
 * replaced from outside; never on a render after typing, which could be a keystroke
 * behind) and reports what is typed and the problems it finds in it. `control` gets the editor once it
 * is there, for selecting a problem's place.
 */
import type { RefObject } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { CodeEditor as Editor } from "./code-editor.ts";
import type { JsonSchema } from "./json-schema.ts";
import type { TextProblem } from "./text-problems.ts";

export function CodeEditor(props: {
  text: string;
  /** Changes when `text` was replaced from outside (what is typed is the editor's already). */
  version: number;
  label: string;
  readOnly: boolean;
  schema: JsonSchema | undefined;
  onChange: (text: string) => void;
  onProblems: (problems: TextProblem[]) => void;
  control: RefObject<Editor | undefined>;
}) {
  const host = useRef<HTMLDivElement>(null);
  const latest = useRef(props);
  latest.current = props;
  const [failure, setFailure] = useState<string>();
  const [ready, setReady] = useState(false);

  useEffect(() => {
    let alive = true;
    let editor: Editor | undefined;
    import("./code-editor.ts").then(
      ({ createCodeEditor }) => {
        if (!alive || !host.current) return;
        const now = latest.current;
        editor = createCodeEditor(host.current, {
          text: now.text,
          label: now.label,
          readOnly: now.readOnly,
          onChange: (text) => latest.current.onChange(text),
          onProblems: (problems) => alive && latest.current.onProblems(problems),
        });
        editor.setSchema(now.schema);
        props.control.current = editor;
        setReady(true);
      },
      (err: unknown) => alive && setFailure((err as Error).message),
    );
    return () => {
      alive = false;
      props.control.current = undefined;
      editor?.destroy();
    };
  }, []);

  useEffect(() => props.control.current?.setText(latest.current.text), [props.version]);
  useEffect(() => props.control.current?.setSchema(props.schema), [props.schema, ready]);

  return (
    <>
      {!ready && !failure && (
        <p class="hint" role="status">
          Loading the editor …
        </p>
      )}
      {failure && (
        <p class="notice error" role="alert">
          The editor could not be loaded ({failure}). Reload the page to try again.
        </p>
      )}
      <div class="code-editor" ref={host} />
    </>
  );
}
