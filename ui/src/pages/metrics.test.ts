import { describe, expect, it } from 'vitest';
import { parseMetrics } from './metrics';

describe('metrics text', () => {
  it('reads series with and without labels, skipping comments', () => {
    const t = '# HELP x y\n# TYPE x counter\naura_front_requests_total{route="/api/v1/judge",status="200"} 3\naura_front_daemon_up 1\n';
    expect(parseMetrics(t)).toEqual([
      { name: 'aura_front_requests_total', labels: { route: '/api/v1/judge', status: '200' }, value: 3 },
      { name: 'aura_front_daemon_up', value: 1 },
    ]);
  });
});
