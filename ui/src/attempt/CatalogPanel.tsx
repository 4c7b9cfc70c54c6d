// The scenario's catalog as the learner needs it to write a fix: probes with their parameters
// and costs, actions (each can be added to the IR's actions or rollback), target terms with
// kind and description, and the checks a fix can promise. Listing every term and check does
// not give the cause away: the scenario offers terms for each competing hypothesis.
import type { CallSpec, ParamSchema, Scenario } from '../api/types';

function paramText(p: ParamSchema): string {
  const bits = [p.type + (p.required ? '' : ', optional')];
  if (p.enum?.length) bits.push(`one of ${p.enum.join(' | ')}`);
  if (p.path_prefixes?.length) bits.push(`under ${p.path_prefixes.join(', ')}`);
  if (p.path_excludes?.length) bits.push(`not under ${p.path_excludes.join(', ')}`);
  if (p.target_kind) bits.push(`${p.target_kind} target${p.allow_literal ? ', literal allowed' : ''}`);
  if (p.min !== undefined || p.max !== undefined) bits.push(`${p.min ?? ''}..${p.max ?? ''}`);
  return bits.join('; ');
}

function CallList({ calls, onAdd }: { calls: CallSpec[]; onAdd?: (c: CallSpec, where: 'actions' | 'rollback') => void }) {
  return (
    <ul className="call-list">
      {calls.map((c) => (
        <li key={c.name} data-call={c.name}>
          <p>
            <code>{c.name}</code> {c.cost !== undefined && <span className="cost">cost {c.cost}</span>} {c.summary}
          </p>
          {c.params.length > 0 && (
            <ul className="param-list">
              {c.params.map((p) => (
                <li key={p.name}>
                  <code>{p.name}</code>: {paramText(p)}
                  {p.description ? `: ${p.description}` : ''}
                </li>
              ))}
            </ul>
          )}
          {onAdd && (
            <p className="row">
              <button type="button" onClick={() => onAdd(c, 'actions')}>Add {c.name} to actions</button>
              <button type="button" onClick={() => onAdd(c, 'rollback')}>Add to rollback</button>
            </p>
          )}
        </li>
      ))}
    </ul>
  );
}

export function CatalogPanel({ scenario, onAddAction, onAddCheck }: {
  scenario: Scenario;
  onAddAction?: (c: CallSpec, where: 'actions' | 'rollback') => void;
  onAddCheck?: (id: string, kind: 'postcondition' | 'invariant') => void;
}) {
  return (
    <section aria-labelledby="catalog-title" className="catalog">
      <h2 id="catalog-title">Catalog</h2>
      <details>
        <summary>Probes ({scenario.probes.length}); budget {scenario.probe_budget}</summary>
        <CallList calls={scenario.probes} />
      </details>
      <details open={!!onAddAction}>
        <summary>Actions ({scenario.actions.length}){scenario.allow_scripts ? '; scripts allowed' : ''}</summary>
        <CallList calls={scenario.actions} {...(onAddAction ? { onAdd: onAddAction } : {})} />
      </details>
      <details open={!!onAddAction}>
        <summary>Target terms ({scenario.targets.length})</summary>
        <div className="table-scroll">
          <table>
            <caption>Name a term as {'{"role": NAME}'} or {'{"selector": NAME}'}; it is resolved in each world.</caption>
            <thead>
              <tr><th scope="col">Term</th><th scope="col">Type</th><th scope="col">Kind</th><th scope="col">What it picks</th></tr>
            </thead>
            <tbody>
              {scenario.targets.map((t) => (
                <tr key={t.name} data-term={t.name}>
                  <th scope="row"><code>{t.name}</code></th>
                  <td>{t.type}</td>
                  <td>{t.kind}</td>
                  <td>{t.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
      <details open={!!onAddCheck}>
        <summary>Checks ({scenario.checks.length})</summary>
        <ul className="call-list">
          {scenario.checks.map((c) => (
            <li key={c.id} data-check={c.id}>
              <p>
                <code>{c.id}</code> <span className="type">({c.kind})</span> {c.description}
                {c.policies && c.policies.length > 0 && (
                  <span className="type"> reads {c.policies.join(', ')}</span>
                )}
              </p>
              {onAddCheck && (
                <button type="button" onClick={() => onAddCheck(c.id, c.kind)}>
                  Promise {c.id} as {c.kind === 'postcondition' ? 'a postcondition' : 'an invariant'}
                </button>
              )}
            </li>
          ))}
        </ul>
      </details>
      {scenario.policies && scenario.policies.length > 0 && (
        <details>
          <summary>Policies ({scenario.policies.length})</summary>
          <p>
            Each policy is stated once; every check that names it reads it there, so a fix
            inside a policy passes every check that reads it.
          </p>
          <ul className="call-list">
            {scenario.policies.map((p) => (
              <li key={p.name} data-policy={p.name}>
                <p>
                  <code>{p.name}</code> {p.description}
                </p>
              </li>
            ))}
          </ul>
        </details>
      )}
      {scenario.changes && (
        <details>
          <summary>Change surface</summary>
          <p>
            The gate reads every path your fix changed on every node. A change outside these
            rules fails the fix; what the world writes by itself is set aside.
          </p>
          <ul className="call-list">
            {scenario.changes.fix.map((r) => (
              <li key={`fix-${r.name}`} data-surface={r.name}>
                <p>
                  a fix may change <code>{r.paths.join(' ')}</code>{' '}
                  <span className="type">({(r.what ?? []).join(', ')})</span> {r.description}
                </p>
              </li>
            ))}
            {scenario.changes.runtime.map((r) => (
              <li key={`runtime-${r.name}`} data-runtime={r.name}>
                <p>
                  the world writes <code>{r.paths.join(' ')}</code> {r.description}
                </p>
              </li>
            ))}
          </ul>
        </details>
      )}
    </section>
  );
}
