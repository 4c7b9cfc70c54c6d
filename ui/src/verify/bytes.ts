// Byte helpers for the verifier: hex, strict base64 (RFC 4648 §4, padded, canonical) and UTF-8.
// Strict because the lab's own parsers are: a receipt that only a lax decoder reads is refused.
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

export { bytesToHex };

const kHex = /^(?:[0-9a-f]{2})*$/;

// Lowercase hex only (the lab writes lowercase); null for anything else.
export function hexDecode(text: string): Uint8Array | null {
  if (!kHex.test(text)) return null;
  return hexToBytes(text);
}

const kAlphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const kValue = new Map<string, number>([...kAlphabet].map((c, i) => [c, i]));

// Standard base64 with padding; refuses other characters, bad padding and non-zero unused bits
// (so every byte string has exactly one accepted encoding). Null when refused.
export function base64Decode(text: string): Uint8Array | null {
  if (text.length % 4 !== 0) return null;
  const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
  const body = text.length - pad;
  const out = new Uint8Array((text.length / 4) * 3 - pad);
  let bits = 0;
  let acc = 0;
  let o = 0;
  for (let i = 0; i < body; i++) {
    const v = kValue.get(text[i]!);
    if (v === undefined) return null;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = (acc >> bits) & 0xff;
    }
  }
  if ((acc & ((1 << bits) - 1)) !== 0) return null;  // unused bits must be zero
  return o === out.length ? out : null;
}

export function base64Encode(bytes: Uint8Array): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += 3) {
    const b0 = bytes[i]!;
    const b1 = bytes[i + 1];
    const b2 = bytes[i + 2];
    out += kAlphabet[b0 >> 2];
    out += kAlphabet[((b0 & 3) << 4) | ((b1 ?? 0) >> 4)];
    out += b1 === undefined ? '=' : kAlphabet[((b1 & 15) << 2) | ((b2 ?? 0) >> 6)];
    out += b2 === undefined ? '=' : kAlphabet[b2 & 63];
  }
  return out;
}

const kEncoder = new TextEncoder();
const kDecoder = new TextDecoder('utf-8', { fatal: true });

export function utf8(text: string): Uint8Array {
  return kEncoder.encode(text);
}

// Null when the bytes are not valid UTF-8.
export function utf8Decode(bytes: Uint8Array): string | null {
  try {
    return kDecoder.decode(bytes);
  } catch {
    return null;
  }
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let d = 0;
  for (let i = 0; i < a.length; i++) d |= a[i]! ^ b[i]!;
  return d === 0;
}
