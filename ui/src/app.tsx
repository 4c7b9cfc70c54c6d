// The browser lab's frame: a skip link, the site navigation and the page of the current route.
import { useEffect, useRef } from 'react';
import { AttemptPage } from './pages/AttemptPage';
import { CapabilitiesPage } from './pages/CapabilitiesPage';
import { JudgePage } from './pages/JudgePage';
import { ProofPage } from './pages/ProofPage';
import { ReceiptPage } from './pages/ReceiptPage';
import { ScenariosPage } from './pages/ScenariosPage';
import { type Route, useRoute } from './router';

const kNav: { href: string; label: string; is: (r: Route) => boolean }[] = [
  { href: '#/', label: 'Judge Mode', is: (r) => r.name === 'judge' },
  { href: '#/capabilities', label: 'Capabilities', is: (r) => r.name === 'capabilities' },
  { href: '#/scenarios', label: 'Scenarios', is: (r) => r.name === 'scenarios' || r.name === 'attempt' },
  { href: '#/receipt', label: 'Receipts', is: (r) => r.name === 'receipt' },
  { href: '#/proof', label: 'Proof & evaluation', is: (r) => r.name === 'proof' },
];

function Page({ route }: { route: Route }) {
  switch (route.name) {
    case 'judge':
      return <JudgePage {...(route.run ? { run: route.run } : {})} />;
    case 'capabilities':
      return <CapabilitiesPage />;
    case 'scenarios':
      return <ScenariosPage />;
    case 'attempt':
      return <AttemptPage key={route.attempt} attempt={route.attempt} />;
    case 'receipt':
      return <ReceiptPage {...(route.sha ? { sha: route.sha } : {})} {...(route.attempt ? { attempt: route.attempt } : {})} />;
    case 'proof':
      return <ProofPage />;
    default:
      return (
        <>
          <h1 tabIndex={-1}>Not found</h1>
          <p>
            There is no page at <code>{route.path}</code>. <a href="#/">Go to Judge Mode</a>.
          </p>
        </>
      );
  }
}

export function App() {
  const route = useRoute();
  const key = JSON.stringify(route);
  const first = useRef(true);
  // After a navigation (not the first load), focus the new page's heading so keyboard and
  // screen reader users start there.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const h = document.querySelector<HTMLElement>('main h1');
    h?.focus();
    document.title = `${h?.textContent ?? 'AURA'} · AURA Systems Lab`;
  }, [key]);
  return (
    <>
      <a className="skip-link" href="#main" onClick={(e) => { e.preventDefault(); document.querySelector<HTMLElement>('main h1')?.focus(); }}>
        Skip to the page
      </a>
      <header className="site-header">
        <a className="brand" href="#/">AURA Systems Lab</a>
        <nav aria-label="Pages">
          <ul>
            {kNav.map((n) => (
              <li key={n.href}>
                <a href={n.href} aria-current={n.is(route) ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
      </header>
      <main id="main">
        <Page route={route} />
      </main>
    </>
  );
}
