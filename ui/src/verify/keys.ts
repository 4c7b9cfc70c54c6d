// Verifier key strings (docs/formats/keys.md): <name>+<8 hex key ID>+<base64(0x01 || 32-byte
// Ed25519 public key)>. The parser is as strict as the lab's: the key ID must be the one the
// name and key give, so a key string cannot claim another key's ID.
import * as ed from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { base64Decode, bytesToHex, concat, equalBytes, utf8 } from './bytes';

ed.hashes.sha512 = sha512;

export interface VerifierKey {
  name: string;
  keyId: Uint8Array;  // 4 bytes
  keyIdHex: string;
  publicKey: Uint8Array;  // 32 bytes
  text: string;  // the key string as given (without a trailing newline)
}

// Key names: 1..256 bytes of UTF-8, no control character, no Unicode space, no '+'.
const kBadNameChar = /[\u0000-\u0020\u007f\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000+]/u;

export function validKeyName(name: string): boolean {
  const n = utf8(name).length;
  return n >= 1 && n <= 256 && !kBadNameChar.test(name);
}

export function noteKeyId(name: string, publicKey: Uint8Array): Uint8Array {
  return sha256(concat(utf8(name), new Uint8Array([0x0a, 0x01]), publicKey)).slice(0, 4);
}

export type KeyResult = { ok: true; key: VerifierKey } | { ok: false; error: string };

export function parseVerifierKey(input: string): KeyResult {
  const text = input.endsWith('\n') ? input.slice(0, -1) : input;
  // The name holds no '+' and the key ID none; the base64 key may.
  const a = text.indexOf('+');
  const b = a < 0 ? -1 : text.indexOf('+', a + 1);
  if (a < 0 || b < 0) {
    return { ok: false, error: 'a verifier key is <name>+<8 hex key ID>+<base64 key>' };
  }
  const name = text.slice(0, a);
  const idHex = text.slice(a + 1, b);
  const keyB64 = text.slice(b + 1);
  if (!validKeyName(name)) return { ok: false, error: `key name "${name}" is not a valid key name` };
  if (!/^[0-9a-f]{8}$/.test(idHex)) return { ok: false, error: 'the key ID is not 8 lowercase hex digits' };
  const raw = base64Decode(keyB64);
  if (!raw) return { ok: false, error: 'the key is not canonical base64' };
  if (raw.length !== 33 || raw[0] !== 0x01) {
    return { ok: false, error: 'the key is not 0x01 followed by a 32-byte Ed25519 public key' };
  }
  const publicKey = raw.slice(1);
  try {
    const p = ed.Point.fromBytes(publicKey, false);
    if (p.isSmallOrder()) return { ok: false, error: 'the public key is a small-order point' };
  } catch {
    return { ok: false, error: 'the public key is not a valid Ed25519 point' };
  }
  const keyId = noteKeyId(name, publicKey);
  if (!equalBytes(keyId, new Uint8Array(idHex.match(/../g)!.map((h) => parseInt(h, 16))))) {
    return { ok: false, error: `the key ID ${idHex} is not the ID of this name and key (${bytesToHex(keyId)})` };
  }
  return { ok: true, key: { name, keyId, keyIdHex: idHex, publicKey, text } };
}

// RFC 8032 verification (not ZIP 215's laxer rules), as the lab verifies.
export function verifyEd25519(key: VerifierKey, message: Uint8Array, signature: Uint8Array): boolean {
  if (signature.length !== 64) return false;
  try {
    return ed.verify(signature, message, key.publicKey, { zip215: false });
  } catch {
    return false;
  }
}
