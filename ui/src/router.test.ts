import { describe, expect, it } from 'vitest';
import { parseHash } from './router';

describe('hash routes', () => {
  it('reads each page', () => {
    expect(parseHash('')).toEqual({ name: 'judge' });
    expect(parseHash('#/judge/0123456789abcdef')).toEqual({ name: 'judge', run: '0123456789abcdef' });
    expect(parseHash('#/attempt/0123456789abcdef')).toEqual({ name: 'attempt', attempt: '0123456789abcdef' });
    expect(parseHash(`#/receipt/${'a'.repeat(64)}`)).toEqual({ name: 'receipt', sha: 'a'.repeat(64) });
    expect(parseHash('#/receipt/attempt/0123456789abcdef')).toEqual({ name: 'receipt', attempt: '0123456789abcdef' });
  });
  it('refuses ids off their pattern', () => {
    expect(parseHash('#/attempt/XYZ').name).toBe('notfound');
    expect(parseHash('#/judge/0123').name).toBe('notfound');
  });
});
