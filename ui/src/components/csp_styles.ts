// The lab's CSP allows style from 'self' only (`style-src 'self'`, no 'unsafe-inline'), so the
// <style> elements libraries write at run time are not applied by the browser: CodeMirror's
// (style-mod puts one in <head> for a document) and xterm.js's (cell sizes, theme colours).
// This copies the text of every <style> element into a constructed stylesheet adopted by the
// document, which CSP does not restrict, and keeps it current as the libraries change them.
// The browser still reports each blocked element on the console ("Applying inline style
// violates ..."); that is expected, and the end-to-end tests check the styles do apply.
export function installStyleMirror(doc: Document = document): () => void {
  if (typeof CSSStyleSheet === 'undefined' || !('adoptedStyleSheets' in doc)) return () => {};
  const mirrored = new Map<HTMLStyleElement, { sheet: CSSStyleSheet; text: string }>();
  const sync = (): void => {
    const present = [...doc.querySelectorAll('style')];
    let changed = false;
    for (const el of present) {
      const text = el.textContent ?? '';
      const m = mirrored.get(el);
      if (!m) {
        const sheet = new CSSStyleSheet();
        sheet.replaceSync(text);
        mirrored.set(el, { sheet, text });
        changed = true;
      } else if (m.text !== text) {
        m.sheet.replaceSync(text);
        m.text = text;
      }
    }
    for (const el of [...mirrored.keys()]) {
      if (!el.isConnected) {
        mirrored.delete(el);
        changed = true;
      }
    }
    if (changed) {
      const ours = new Set([...mirrored.values()].map((m) => m.sheet));
      const others = doc.adoptedStyleSheets.filter((s) => !ours.has(s));
      // in document order, after the sheets others adopted
      doc.adoptedStyleSheets = [...others, ...present.flatMap((el) => (mirrored.has(el) ? [mirrored.get(el)!.sheet] : []))];
    }
  };
  const touchesStyle = (n: Node | null): boolean =>
    !!n && (n.nodeName === 'STYLE' || (n.parentNode?.nodeName === 'STYLE') || (n instanceof Element && n.querySelector('style') !== null));
  const observer = new MutationObserver((records) => {
    if (records.some((r) => touchesStyle(r.target) || [...r.addedNodes, ...r.removedNodes].some(touchesStyle))) sync();
  });
  observer.observe(doc.documentElement, { childList: true, subtree: true, characterData: true });
  sync();
  return () => observer.disconnect();
}
