// A read-only transcript in xterm.js: probe and action output as a terminal showed it, never a
// live shell (no input is read). The same text is in a visually hidden <pre> for screen
// readers and for copying.
import { Terminal as XTerm } from '@xterm/xterm';
import { useEffect, useRef } from 'react';

export function Terminal({ text, label, maxRows = 20 }: { text: string; label: string; maxRows?: number }) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const lines = text.split('\n');
    const rows = Math.max(2, Math.min(maxRows, lines.length + (text.endsWith('\n') ? 0 : 1)));
    const term = new XTerm({
      disableStdin: true,
      convertEol: true,
      cursorBlink: false,
      cursorInactiveStyle: 'none',
      rows,
      cols: 100,
      scrollback: 5000,
      fontSize: 13,
      fontFamily: 'ui-monospace, "DejaVu Sans Mono", monospace',
      theme: { background: '#111418', foreground: '#e6e6e6' },
    });
    term.open(el);
    term.write('\x1b[?25l');  // no cursor: nothing is typed here
    term.write(text);
    return () => {
      term.dispose();
    };
  }, [text, maxRows]);
  return (
    <figure className="transcript">
      <figcaption>{label}</figcaption>
      <div className="term-scroll" aria-hidden="true">
        <div ref={host} className="term-host" />
      </div>
      <pre className="visually-hidden" data-transcript="">{text}</pre>
    </figure>
  );
}
