// DSSE envelopes (docs/formats/dsse.md): the signature covers PAE(type, payload), so the signed
// bytes are exact. Opening returns the payload bytes that verified, and nothing else is read.
import { base64Decode, concat, utf8 } from './bytes';
import { type VerifierKey, verifyEd25519 } from './keys';

export const kReceiptType = 'application/vnd.aura.receipt+json';

export function pae(type: string, body: Uint8Array): Uint8Array {
  const t = utf8(type);
  return concat(utf8(`DSSEv1 ${t.length} `), t, utf8(` ${body.length} `), body);
}

export interface Envelope {
  payloadType: string;
  payload: Uint8Array;
  signatures: { keyid?: string; sig: Uint8Array }[];
}

export type EnvelopeResult = { ok: true; envelope: Envelope } | { ok: false; field: 'envelope'; error: string };

// The envelope's shape: exactly payloadType, payload and signatures (1..16 of {sig, keyid?}),
// canonical base64. Reads JSON text; duplicate members are refused by scanning first.
export function parseEnvelope(text: string, duplicates: (t: string) => string | null): EnvelopeResult {
  const bad = (error: string): EnvelopeResult => ({ ok: false, field: 'envelope', error });
  if (utf8(text).length > 16 << 20) return bad('envelope: over 16 MiB');
  const dup = duplicates(text);
  if (dup) return bad(`envelope: ${dup}`);
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    return bad(`envelope: not JSON (${(e as Error).message})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return bad('envelope: not a JSON object');
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (!['payloadType', 'payload', 'signatures'].includes(k)) return bad(`envelope: unknown member ${k}`);
  }
  if (typeof o.payloadType !== 'string' || utf8(o.payloadType).length > 256) return bad('envelope: payloadType is not a string of at most 256 bytes');
  if (typeof o.payload !== 'string') return bad('envelope: payload is not a string');
  const payload = base64Decode(o.payload);
  if (!payload) return bad('envelope: payload is not canonical base64');
  if (!Array.isArray(o.signatures) || o.signatures.length < 1 || o.signatures.length > 16) {
    return bad('envelope: signatures is not an array of 1 to 16 signatures');
  }
  const signatures: Envelope['signatures'] = [];
  for (const [i, s] of o.signatures.entries()) {
    if (typeof s !== 'object' || s === null || Array.isArray(s)) return bad(`envelope: signatures[${i}] is not an object`);
    const so = s as Record<string, unknown>;
    for (const k of Object.keys(so)) {
      if (k !== 'sig' && k !== 'keyid') return bad(`envelope: signatures[${i}]: unknown member ${k}`);
    }
    if (typeof so.sig !== 'string') return bad(`envelope: signatures[${i}].sig is not a string`);
    const sig = base64Decode(so.sig);
    if (!sig) return bad(`envelope: signatures[${i}].sig is not canonical base64`);
    if (so.keyid !== undefined && (typeof so.keyid !== 'string' || utf8(so.keyid).length > 512)) {
      return bad(`envelope: signatures[${i}].keyid is not a string of at most 512 bytes`);
    }
    signatures.push({ sig, ...(so.keyid !== undefined ? { keyid: so.keyid as string } : {}) });
  }
  return { ok: true, envelope: { payloadType: o.payloadType, payload, signatures } };
}

export type OpenResult =
  | { ok: true; payload: Uint8Array; keyid: string }
  | { ok: false; field: 'envelope' | 'signature'; error: string };

// dsse_open with one known key: the type must be the expected one; a signature whose keyid
// names the key must verify; one without keyid counts if it verifies; at least one must.
export function openEnvelope(env: Envelope, expectedType: string, key: VerifierKey): OpenResult {
  if (env.payloadType !== expectedType) {
    return { ok: false, field: 'envelope', error: `dsse: payloadType is "${env.payloadType}", expected "${expectedType}"` };
  }
  const keyName = `${key.name}+${key.keyIdHex}`;
  const message = pae(env.payloadType, env.payload);
  let verified = false;
  for (const s of env.signatures) {
    if (s.keyid !== undefined && s.keyid !== keyName) continue;
    const good = verifyEd25519(key, message, s.sig);
    if (s.keyid === keyName && !good) {
      return { ok: false, field: 'signature', error: `dsse: invalid signature for key ${keyName}` };
    }
    if (good) verified = true;
  }
  if (!verified) return { ok: false, field: 'signature', error: `dsse: no signature by the pinned key ${keyName}` };
  return { ok: true, payload: env.payload, keyid: keyName };
}
