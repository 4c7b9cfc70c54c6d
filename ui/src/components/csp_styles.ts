// The lab's CSP allows style from 'self' only (style-src 'self'), so the <style> elements
// xterm.js writes at run time (cell sizes, theme colours) are not applied by the browser. This
// copies their text into a constructed stylesheet adopted by the document, which CSP does not
// restrict (CodeMirror styles itself the same way), and keeps it current while xterm changes
// them. Returns the function that removes the sheet.
export function mirrorInlineStyles(root: HTMLElement): () => void {
  if (typeof CSSStyleSheet === 'undefined' || !('adoptedStyleSheets' in document)) return () => {};
  const sheet = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  let last = '';
  const sync = (): void => {
    const css = [...root.querySelectorAll('style')].map((s) => s.textContent ?? '').join('\n');
    if (css !== last) {
      last = css;
      sheet.replaceSync(css);
    }
  };
  const observer = new MutationObserver(sync);
  observer.observe(root, { childList: true, subtree: true, characterData: true });
  sync();
  return () => {
    observer.disconnect();
    document.adoptedStyleSheets = document.adoptedStyleSheets.filter((s) => s !== sheet);
  };
}
