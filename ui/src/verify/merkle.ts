// RFC 6962 / RFC 9162 Merkle trees as the event log keeps them (docs/FORMAT.md): leaf i is
// SHA-256(0x00 || hash of event i+1); interior nodes SHA-256(0x01 || left || right).
import { sha256 } from '@noble/hashes/sha2.js';
import { concat } from './bytes';

export function leafHash(eventHash: Uint8Array): Uint8Array {
  return sha256(concat(new Uint8Array([0x00]), eventHash));
}

export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(concat(new Uint8Array([0x01]), left, right));
}

// RFC 9162 §2.1.3.2: the root an inclusion proof of leaf `index` in a tree of `size` leaves
// leads to, or null when the proof cannot be a proof for that index and size (wrong length).
export function rootFromInclusionProof(
  index: number,
  size: number,
  leaf: Uint8Array,
  path: Uint8Array[],
): Uint8Array | null {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return null;
  // Numbers up to 2^53 do not fit JavaScript's 32-bit shifts: use division.
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of path) {
    if (p.length !== 32 || sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = nodeHash(p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn = Math.floor(fn / 2);
        sn = Math.floor(sn / 2);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}
