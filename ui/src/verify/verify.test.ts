// The browser verifier against the documented test vectors and against a real receipt issued
// by this lab (fixtures/: an O2 gold receipt from Judge Mode, the server's proofs of its events
// and the lab key it was signed with), plus tampered copies, each asserting which check fails.
import * as ed from '@noble/ed25519';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { base64Decode, base64Encode, bytesToHex, utf8 } from './bytes';
import { kReceiptType, pae } from './dsse';
import { noteKeyId, parseVerifierKey, type VerifierKey } from './keys';
import { leafHash, nodeHash, rootFromInclusionProof } from './merkle';
import { openCheckpoint, openNote } from './note';
import { type ProofReply, verifyLatestProofs, verifyReceipt } from './receipt';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');
const receiptText = fixture('o2-gold.receipt.json');
const proofReply = JSON.parse(fixture('o2-gold.proof.json')) as ProofReply;
const labKeyText = (JSON.parse(fixture('lab-key.json')) as { verifier_key: string }).verifier_key;

function key(text: string): VerifierKey {
  const k = parseVerifierKey(text);
  if (!k.ok) throw new Error(k.error);
  return k.key;
}
const labKey = key(labKeyText);

// The documented test key (docs/formats/keys.md): seed 00 01 .. 1f, name aura.lab/example.
const testSeed = Uint8Array.from({ length: 32 }, (_, i) => i);
const testKeyText = 'aura.lab/example+7797854e+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4';
const testKey = key(testKeyText);

const failed = (r: { checks: { field: string; ok: boolean }[] }): string[] => r.checks.filter((c) => !c.ok).map((c) => c.field);

describe('keys (docs/formats/keys.md vectors)', () => {
  it('parses the example verifier key and computes its key ID', () => {
    expect(bytesToHex(testKey.publicKey)).toBe('03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8');
    expect(bytesToHex(noteKeyId('aura.lab/example', testKey.publicKey))).toBe('7797854e');
    expect(bytesToHex(ed.getPublicKey(testSeed))).toBe(bytesToHex(testKey.publicKey));
  });
  it('parses the Go reference key', () => {
    expect(parseVerifierKey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW').ok).toBe(true);
  });
  it('refuses a key ID that is not the key\'s', () => {
    const r = parseVerifierKey('aura.lab/example+7797854f+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4');
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/not the ID/);
  });
  it('refuses non-canonical base64 and a key without the 0x01 type', () => {
    expect(parseVerifierKey('aura.lab/example+7797854e+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG5').ok).toBe(false);
    expect(parseVerifierKey(`aura.lab/example+7797854e+${base64Encode(new Uint8Array(33))}`).ok).toBe(false);
  });
  it('accepts one trailing newline, as a .pub file has', () => {
    expect(parseVerifierKey(`${testKeyText}\n`).ok).toBe(true);
    expect(parseVerifierKey(`${testKeyText}\n\n`).ok).toBe(false);
  });
});

describe('signed notes and checkpoints (docs/formats/checkpoint.md vectors)', () => {
  const size1 =
    'aura.lab/example\n1\ncz/87rErXYz4sV3FwpYF9PeyUzSg2RkzzHMVVnS07Ds=\nchain-head 8855d3978dd94f682c1d284885b07a701232cd2aefad024601c3f08b2ea49f1f\n\n' +
    '\u2014 aura.lab/example d5eFTs6U70NFJlybZPCuuEUEuZZWyPSsny6c6UElUgz9dGLdg/yA7Rrx4HLAJ8Jt8pshhrO7xB1avgxp0hF128H/4AU=\n';
  it('opens the size-1 checkpoint and its root is the leaf hash of the one event', () => {
    const c = openCheckpoint(size1, testKey);
    expect(c.ok).toBe(true);
    if (!c.ok) return;
    expect(c.checkpoint.size).toBe(1);
    const event = Uint8Array.from(Buffer.from('8855d3978dd94f682c1d284885b07a701232cd2aefad024601c3f08b2ea49f1f', 'hex'));
    expect(bytesToHex(c.checkpoint.root)).toBe(bytesToHex(leafHash(event)));
  });
  it('opens the empty-log checkpoint', () => {
    const size0 =
      'aura.lab/example\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\nchain-head 0000000000000000000000000000000000000000000000000000000000000000\n\n' +
      '\u2014 aura.lab/example d5eFTilhcemUjIhfDCuNQEMXlP3mxoE0jZBU6Ds6YIs026/aKP4DwY1X0PjhsDP5KA0HP/uTV7fmcPS5OUNCjad04Ak=\n';
    expect(openCheckpoint(size0, testKey).ok).toBe(true);
  });
  it('verifies the Go reference note', () => {
    const k = key('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
    const note =
      "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n\n" +
      '\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
    expect(openNote(note, k).ok).toBe(true);
  });
  it('refuses a note whose text was changed after signing', () => {
    const r = openCheckpoint(size1.replace('\n1\n', '\n2\n'), testKey);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toMatch(/does not verify/);
  });
  it('refuses a note signed only by another key', () => {
    const r = openCheckpoint(size1, labKey);
    expect(!r.ok && r.error).toMatch(/no signature by the pinned key/);
  });
});

describe('DSSE (docs/formats/dsse.md vectors)', () => {
  it('PAE is the specification\'s', () => {
    expect(new TextDecoder().decode(pae('http://example.com/HelloWorld', utf8('hello world'))))
      .toBe('DSSEv1 29 http://example.com/HelloWorld 11 hello world');
  });
  it('the documented envelope\'s signature verifies with the example key', () => {
    const sig = base64Decode('ggTrkOZQNd24C3uxRBY+1RaPzLmq+y4ujnNOiN9jZNM5TaFis/uWTp+5IrWWT7HtCMZp+Xf3isEeN+k0AZJNCg==')!;
    expect(ed.verify(sig, pae(kReceiptType, utf8('{"hello":"world"}')), testKey.publicKey)).toBe(true);
    // and a receipt made of it fails as a document, not as a signature
    const env = '{"payloadType":"application/vnd.aura.receipt+json","payload":"eyJoZWxsbyI6IndvcmxkIn0=","signatures":[{"keyid":"aura.lab/example+7797854e","sig":"ggTrkOZQNd24C3uxRBY+1RaPzLmq+y4ujnNOiN9jZNM5TaFis/uWTp+5IrWWT7HtCMZp+Xf3isEeN+k0AZJNCg=="}]}';
    const r = verifyReceipt(env, testKey);
    expect(r.checks[0]).toMatchObject({ field: 'signature', ok: true });
    expect(failed(r)).toEqual(['v']);
  });
});

describe('RFC 6962 inclusion', () => {
  it('proves every leaf of a 7-leaf tree and refuses a wrong index', () => {
    const leaves = Array.from({ length: 7 }, (_, i) => leafHash(utf8(`event ${i}`)));
    // build the tree by RFC 6962's split (largest power of two below n)
    const root = (ls: Uint8Array[]): Uint8Array => {
      if (ls.length === 1) return ls[0]!;
      let k = 1;
      while (k * 2 < ls.length) k *= 2;
      return nodeHash(root(ls.slice(0, k)), root(ls.slice(k)));
    };
    const path = (m: number, ls: Uint8Array[]): Uint8Array[] => {
      if (ls.length === 1) return [];
      let k = 1;
      while (k * 2 < ls.length) k *= 2;
      return m < k ? [...path(m, ls.slice(0, k)), root(ls.slice(k))] : [...path(m - k, ls.slice(k)), root(ls.slice(0, k))];
    };
    const r = bytesToHex(root(leaves));
    for (let m = 0; m < 7; m++) {
      expect(bytesToHex(rootFromInclusionProof(m, 7, leaves[m]!, path(m, leaves))!)).toBe(r);
    }
    const wrong = rootFromInclusionProof(2, 7, leaves[3]!, path(3, leaves));
    expect(wrong === null || bytesToHex(wrong) !== r).toBe(true);
  });
});

// Test helpers: the lab's formats made with the documented test key, so that a tampered
// receipt can be re-signed and the checks after the signature are reached.
function signNote(body: string): string {
  const sig = ed.sign(utf8(body), testSeed);
  const blob = new Uint8Array(68);
  blob.set(testKey.keyId, 0);
  blob.set(sig, 4);
  return `${body}\n\u2014 ${testKey.name} ${base64Encode(blob)}\n`;
}
function envelopeOf(payload: string): string {
  const bytes = utf8(payload);
  const sig = ed.sign(pae(kReceiptType, bytes), testSeed);
  return JSON.stringify({ payloadType: kReceiptType, payload: base64Encode(bytes), signatures: [{ keyid: `${testKey.name}+${testKey.keyIdHex}`, sig: base64Encode(sig) }] });
}
const envelope = JSON.parse(receiptText) as { payload: string; signatures: { keyid: string; sig: string }[] };
const payload = new TextDecoder().decode(base64Decode(envelope.payload)!);
const labNote = (JSON.parse(payload) as { checkpoint: { note: string } }).checkpoint.note;
const noteBody = labNote.slice(0, labNote.lastIndexOf('\n\n') + 1);
// The receipt's payload with its checkpoint re-signed by the test key (same body, same root).
const resignedPayload = payload.replace(JSON.stringify(labNote).slice(1, -1), JSON.stringify(signNote(noteBody)).slice(1, -1));

describe('a real O2 receipt from this lab', () => {
  it('verifies with the lab key it was signed with: every offline check holds', () => {
    const r = verifyReceipt(receiptText, labKey);
    expect(failed(r)).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.checks.map((c) => c.field)).toEqual([
      'signature', 'document',
      'hashes.scenario', 'hashes.environment', 'hashes.intervention', 'hashes.actions', 'hashes.evidence',
      'hashes.facts', 'hashes.gate', 'hashes.rollback', 'hashes.model_assistance', 'hashes.events',
      'gate', 'events', 'checkpoint', 'inclusion_proofs',
    ]);
    expect(r.document?.scenario.id).toBe('o2-service-chain');
    expect(r.document?.gate.verdict).toBe('VERIFIED');
  });

  it('with another pinned key: the signature fails and nothing else is read', () => {
    const r = verifyReceipt(receiptText, testKey);
    expect(r.checks).toHaveLength(1);
    expect(r.checks[0]).toMatchObject({ field: 'signature', ok: false });
    expect(r.document).toBeUndefined();
  });

  it('a flipped signature byte: signature fails', () => {
    const sig = base64Decode(envelope.signatures[0]!.sig)!;
    sig[10] = sig[10]! ^ 0x01;
    const tampered = JSON.stringify({ ...envelope, signatures: [{ ...envelope.signatures[0], sig: base64Encode(sig) }] });
    const r = verifyReceipt(tampered, labKey);
    expect(failed(r)).toEqual(['signature']);
    expect(r.checks[0]!.what).toMatch(/invalid signature/);
  });

  it('a flipped payload byte (a fact turned from ok to failed): signature fails', () => {
    const bytes = base64Decode(envelope.payload)!;
    const at = payload.indexOf('"ok":true');
    expect(at).toBeGreaterThan(0);
    bytes.set(utf8('"ok":fals'), at);  // same length, one section changed
    const r = verifyReceipt(JSON.stringify({ ...envelope, payload: base64Encode(bytes) }), labKey);
    expect(failed(r)).toEqual(['signature']);
  });

  it('an envelope with a duplicate member is refused as an envelope', () => {
    const dup = receiptText.replace('{"payloadType":', '{"payloadType":"x","payloadType":');
    expect(failed(verifyReceipt(dup, labKey))).toEqual(['envelope']);
  });

  it('re-signed with the test key and its checkpoint re-signed too: every check holds', () => {
    const r = verifyReceipt(envelopeOf(resignedPayload), testKey);
    expect(failed(r)).toEqual([]);
  });

  it('a signed receipt whose facts were edited without the hash: hashes.facts fails', () => {
    const edited = resignedPayload.replace('"check":"app-serves","ok":true', '"check":"app-serves","ok":false');
    expect(edited).not.toBe(resignedPayload);
    const r = verifyReceipt(envelopeOf(edited), testKey);
    expect(failed(r)).toEqual(['hashes.facts']);
  });

  it('a signed receipt with one proof path element changed: inclusion_proofs fails at that seq', () => {
    const doc = JSON.parse(resignedPayload) as { inclusion_proofs: { seq: number; hashes: string[] }[] };
    const victim = doc.inclusion_proofs[3]!;
    const old = victim.hashes[0]!;
    const flipped = (old[0] === '0' ? '1' : '0') + old.slice(1);
    // replace that element only in proof 3 (the same hash appears in other proofs)
    const from = resignedPayload.indexOf(`{"seq":${victim.seq},"hashes":["${old}"`);
    expect(from).toBeGreaterThan(0);
    const edited = resignedPayload.slice(0, from) + resignedPayload.slice(from).replace(old, flipped);
    const r = verifyReceipt(envelopeOf(edited), testKey);
    expect(failed(r)).toEqual(['inclusion_proofs']);
    expect(r.checks.find((c) => !c.ok)!.what).toContain(`inclusion_proofs[3] (seq ${victim.seq})`);
  });

  it('a signed receipt whose checkpoint note was changed after signing: checkpoint fails, proofs are not checked', () => {
    const root = noteBody.split('\n')[2]!;
    const otherRoot = base64Encode(new Uint8Array(32).fill(7));
    const edited = resignedPayload.replace(root, otherRoot);
    expect(edited).not.toBe(resignedPayload);
    const r = verifyReceipt(envelopeOf(edited), testKey);
    expect(failed(r)).toEqual(['checkpoint', 'inclusion_proofs']);
    expect(r.checks.find((c) => c.field === 'checkpoint')!.what).toMatch(/does not verify/);
  });

  it('a signed receipt whose checkpoint is a properly signed note of another root: inclusion_proofs fails', () => {
    const lines = noteBody.split('\n');
    lines[2] = base64Encode(new Uint8Array(32).fill(7));
    const forged = signNote(lines.join('\n'));
    const edited = payload.replace(JSON.stringify(labNote).slice(1, -1), JSON.stringify(forged).slice(1, -1));
    const r = verifyReceipt(envelopeOf(edited), testKey);
    expect(failed(r)).toEqual(['inclusion_proofs']);
  });

  it('a signed receipt citing a seq outside its events: events fails', () => {
    const edited = resignedPayload.replace(/"facts":\[(\d+),/, '"facts":[9999999,');
    const r = verifyReceipt(envelopeOf(edited), testKey);
    expect(failed(r)).toEqual(['hashes.rollback', 'events']);
    expect(r.checks.find((c) => c.field === 'events')!.what).toMatch(/rollback\.facts\[0\] cites seq 9999999/);
  });

  it('a signed receipt that is not compact: document fails', () => {
    const r = verifyReceipt(envelopeOf(resignedPayload.replace('{"v":2,', '{"v":2, ')), testKey);
    expect(failed(r)).toEqual(['document']);
  });
});

describe('the server\'s proofs of the receipt\'s events against its latest checkpoint', () => {
  const doc = verifyReceipt(receiptText, labKey).document!;
  it('hold with the lab key', () => {
    expect(verifyLatestProofs(proofReply, doc, labKey).filter((c) => !c.ok)).toEqual([]);
  });
  it('a changed path element fails at its seq', () => {
    const tampered = structuredClone(proofReply);
    const p = tampered.proofs[5]!;
    p.path[1] = (p.path[1]![0] === 'a' ? 'b' : 'a') + p.path[1]!.slice(1);
    const bad = verifyLatestProofs(tampered, doc, labKey).filter((c) => !c.ok);
    expect(bad.map((c) => c.field)).toEqual([`proof seq ${p.seq}`]);
  });
  it('a changed checkpoint note fails as the checkpoint', () => {
    const tampered = structuredClone(proofReply);
    tampered.checkpoint.note = tampered.checkpoint.note.replace(/\n(\d+)\n/, (_, n: string) => `\n${Number(n) + 1}\n`);
    const bad = verifyLatestProofs(tampered, doc, labKey).filter((c) => !c.ok);
    expect(bad.map((c) => c.field)).toEqual(['latest checkpoint']);
  });
  it('an event that is not the receipt\'s is refused', () => {
    const tampered = structuredClone(proofReply);
    tampered.proofs[0]!.event_hash = '00'.repeat(32);
    const bad = verifyLatestProofs(tampered, doc, labKey).filter((c) => !c.ok);
    expect(bad[0]!.what).toMatch(/not a leaf of this receipt/);
  });
});
