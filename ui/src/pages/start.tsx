// Starting an attempt: its live world is built (this can take a while). The reply's token is
// set by the server as an HttpOnly cookie for this attempt's routes; the page does not keep it.
import { useState } from 'react';
import { errorOfUnknown, post } from '../api/client';
import type { ApiErrorBody, AttemptCreated } from '../api/types';
import { ErrorBox } from '../components/ErrorBox';
import { go } from '../router';

export function StartAttempt({ scenario, available, reason }: { scenario: string; available: boolean; reason?: string }) {
  const [learner, setLearner] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiErrorBody | null>(null);
  const bad = learner !== '' && !/^[a-z][a-z0-9_-]{0,31}$/.test(learner);
  const id = `learner-${scenario}`;
  const start = async (e: React.FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await post<AttemptCreated>('/attempts', learner ? { scenario, learner } : { scenario });
      go(`/attempt/${r.attempt}`);
    } catch (err) {
      setError(errorOfUnknown(err));
      setBusy(false);
    }
  };
  if (!available) {
    return (
      <p className="unavailable" data-unavailable={scenario}>
        Cannot be started: {reason || 'this lab is unavailable on this machine'}.
      </p>
    );
  }
  return (
    <form onSubmit={start} className="start-form">
      <label htmlFor={id}>Your name (optional)</label>
      <input
        id={id}
        value={learner}
        onChange={(e) => setLearner(e.target.value)}
        placeholder="alice"
        aria-invalid={bad}
        aria-describedby={`${id}-hint`}
        autoComplete="off"
      />
      <span id={`${id}-hint`} className={bad ? 'field-error' : 'hint'}>
        {bad ? 'lowercase letters, digits, _ and -, starting with a letter (up to 32)' : 'lowercase, as on the command line'}
      </span>
      <button type="submit" className="primary" disabled={busy || bad}>
        {busy ? 'Building your world…' : 'Start an attempt'}
      </button>
      <ErrorBox error={error} title="The attempt was not started" />
    </form>
  );
}
