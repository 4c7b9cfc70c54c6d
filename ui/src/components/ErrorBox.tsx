// An API refusal as the learner should read it: what was wrong, where (the JSON path), the
// valid names when a name was unknown, the phase, and the next step.
import type { ApiErrorBody } from '../api/types';

export function ErrorBox({ error, title }: { error: ApiErrorBody | null; title?: string }) {
  if (!error) return null;
  return (
    <div className="error" role="alert">
      <p className="error-title">
        {title ?? 'Refused'}
        {error.status ? ` (${error.status} ${error.code})` : ''}
      </p>
      <p className="error-message">{error.message}</p>
      {error.path && (
        <p>
          Where: <code>{error.path}</code>
        </p>
      )}
      {error.phase && <p>The attempt is in phase <strong>{error.phase}</strong>.</p>}
      {error.expected && error.expected.length > 0 && (
        <div>
          Valid names:{' '}
          <ul className="inline-list">
            {error.expected.map((n) => (
              <li key={n}>
                <code>{n}</code>
              </li>
            ))}
          </ul>
        </div>
      )}
      {error.next && <p className="next-inline">Next step: {error.next}</p>}
    </div>
  );
}
