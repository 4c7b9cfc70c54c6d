// C2SP signed notes and the checkpoint body in them (docs/formats/checkpoint.md).
import { base64Decode, bytesToHex, equalBytes, utf8 } from './bytes';
import { type VerifierKey, validKeyName, verifyEd25519 } from './keys';

export type NoteResult = { ok: true; text: string } | { ok: false; error: string };

const kSigPrefix = '\u2014 ';  // EM DASH and a space

// Opens a signed note with one pinned key: the note's text when a signature line by that key
// (same name and key ID) verifies. A line by the key that does not verify refuses the note,
// as do malformed signature lines; lines by other keys are ignored.
export function openNote(note: string, key: VerifierKey): NoteResult {
  if (utf8(note).length > 1 << 20) return { ok: false, error: 'note: over 1 MiB' };
  if (!note.endsWith('\n')) return { ok: false, error: 'note: does not end in a newline' };
  if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(note)) {
    return { ok: false, error: 'note: holds a control character other than newline' };
  }
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return { ok: false, error: 'note: no empty line before the signatures' };
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  if (lines.length > 100) return { ok: false, error: 'note: more than 100 signature lines' };
  let verified = false;
  for (const line of lines) {
    if (!line.startsWith(kSigPrefix)) return { ok: false, error: `note: malformed signature line "${line.slice(0, 40)}"` };
    const rest = line.slice(kSigPrefix.length);
    const space = rest.lastIndexOf(' ');
    if (space <= 0) return { ok: false, error: 'note: malformed signature line (no key name)' };
    const name = rest.slice(0, space);
    const sig = base64Decode(rest.slice(space + 1));
    if (!validKeyName(name) || !sig || sig.length < 5) {
      return { ok: false, error: `note: malformed signature line for "${name.slice(0, 64)}"` };
    }
    if (name !== key.name || !equalBytes(sig.slice(0, 4), key.keyId)) continue;
    if (sig.length !== 68 || !verifyEd25519(key, utf8(text), sig.slice(4))) {
      return { ok: false, error: `note: the signature by ${key.name}+${key.keyIdHex} does not verify` };
    }
    verified = true;
  }
  if (!verified) return { ok: false, error: `note: no signature by the pinned key ${key.name}+${key.keyIdHex}` };
  return { ok: true, text };
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;  // 32 bytes
  chainHead: string;  // 64 hex
}

export type CheckpointResult = { ok: true; checkpoint: Checkpoint } | { ok: false; error: string };

const kEmptyRoot = '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

// The checkpoint body: origin, size, base64 root, "chain-head <hex>", each ending in a newline.
export function parseCheckpoint(text: string): CheckpointResult {
  const bad = (what: string): CheckpointResult => ({ ok: false, error: `checkpoint: ${what}` });
  if (utf8(text).length > 399) return bad('body over 399 bytes');
  if (!text.endsWith('\n')) return bad('body does not end in a newline');
  const lines = text.slice(0, -1).split('\n');
  if (lines.length !== 4) return bad(`body has ${lines.length} lines, not 4`);
  const [origin, sizeText, rootText, ext] = lines as [string, string, string, string];
  if (!validKeyName(origin)) return bad(`origin "${origin.slice(0, 64)}" is not valid`);
  if (!/^(0|[1-9][0-9]{0,15})$/.test(sizeText)) return bad(`size "${sizeText.slice(0, 24)}" is not a decimal size`);
  const size = Number(sizeText);
  if (!Number.isSafeInteger(size)) return bad('size is too large for this verifier');
  const root = rootText.length === 44 ? base64Decode(rootText) : null;
  if (!root || root.length !== 32) return bad('root is not the base64 of 32 bytes');
  const m = /^chain-head ([0-9a-f]{64})$/.exec(ext);
  if (!m) return bad('the fourth line is not "chain-head <64 hex>"');
  const chainHead = m[1]!;
  const zeros = chainHead === '0'.repeat(64);
  if (size === 0 && (rootText !== kEmptyRoot || !zeros)) return bad('an empty log has the empty root and a zero chain head');
  if (size > 0 && zeros) return bad('chain head is all zeros');
  return { ok: true, checkpoint: { origin, size, root, chainHead } };
}

export type OpenCheckpointResult = CheckpointResult;

export function openCheckpoint(note: string, key: VerifierKey): OpenCheckpointResult {
  const n = openNote(note, key);
  if (!n.ok) return n;
  return parseCheckpoint(n.text);
}

export function rootHex(c: Checkpoint): string {
  return bytesToHex(c.root);
}
