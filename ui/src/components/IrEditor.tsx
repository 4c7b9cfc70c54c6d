// The InterventionIR editor (CodeMirror 6): JSON with its syntax problems marked at their line
// and column as the learner types, and the lab's refusals (POST .../intervention/validate, or
// a refused submit) marked at the JSON path they name. Marks are re-located in the current text
// on every edit, so they follow the learner's changes until the lab is asked again.
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { json } from '@codemirror/lang-json';
import { type Diagnostic, forceLinting, linter, lintGutter } from '@codemirror/lint';
import { EditorState } from '@codemirror/state';
import { EditorView, keymap, lineNumbers } from '@codemirror/view';
import { forwardRef, useEffect, useImperativeHandle, useRef } from 'react';
import { locate, syntaxProblem } from '../ir/json_path';

export interface ServerError {
  path: string;
  message: string;
}

export interface IrEditorHandle {
  select(path: string): void;
  setText(text: string): void;
}

export function diagnosticsFor(text: string, errors: ServerError[]): Diagnostic[] {
  const out: Diagnostic[] = [];
  const syntax = syntaxProblem(text);
  if (syntax) {
    const at = Math.min(syntax.at, text.length);
    out.push({ from: at, to: Math.min(at + 1, text.length), severity: 'error', source: 'JSON', message: syntax.message });
    return out;  // paths cannot be found in text that is not JSON
  }
  for (const e of errors) {
    const l = locate(text, e.path);
    const from = l?.from ?? 0;
    const to = l?.to ?? Math.min(1, text.length);
    out.push({ from, to, severity: 'error', source: 'lab', message: `${e.path}: ${e.message}${l && !l.exact ? ' (belongs in this object)' : ''}` });
  }
  return out;
}

export const IrEditor = forwardRef<IrEditorHandle, {
  initial: string;
  errors: ServerError[];
  onChange: (text: string) => void;
  label: string;
}>(function IrEditor({ initial, errors, onChange, label }, ref) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const errorsRef = useRef(errors);
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;

  useEffect(() => {
    if (!host.current) return;
    const v = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: initial,
        extensions: [
          lineNumbers(),
          history(),
          keymap.of([...defaultKeymap, ...historyKeymap]),
          json(),
          lintGutter(),
          linter((ev) => diagnosticsFor(ev.state.doc.toString(), errorsRef.current), { delay: 250 }),
          EditorView.lineWrapping,
          EditorView.contentAttributes.of({ 'aria-label': label, 'aria-multiline': 'true' }),
          EditorView.updateListener.of((u) => {
            if (u.docChanged) onChangeRef.current(u.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = v;
    return () => {
      v.destroy();
      view.current = null;
    };
    // the editor is made once; its text then belongs to the learner
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    errorsRef.current = errors;
    if (view.current) forceLinting(view.current);
  }, [errors]);

  useImperativeHandle(ref, () => ({
    select(path: string) {
      const v = view.current;
      if (!v) return;
      const l = locate(v.state.doc.toString(), path);
      if (!l) return;
      v.dispatch({ selection: { anchor: l.from, head: l.to }, scrollIntoView: true });
      v.focus();
    },
    setText(text: string) {
      const v = view.current;
      if (!v) return;
      v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: text } });
    },
  }));

  return <div ref={host} className="ir-editor" data-testid="ir-editor" />;
});
