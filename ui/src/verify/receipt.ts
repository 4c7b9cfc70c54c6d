// Offline verification of an Intervention Receipt in the browser, the steps of
// docs/formats/receipt.md "Verifying" 1-7: signature, document, hashes, gate, events,
// checkpoint, inclusion proofs. Every check that held and every one that failed is returned
// as {field, ok, what}; a receipt holds only when none failed. The replay steps (8-12) need
// the log: the page asks the server for those (POST /receipts/verify) and shows them beside.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, equalBytes, hexDecode, utf8, utf8Decode } from './bytes';
import { kReceiptType, openEnvelope, parseEnvelope } from './dsse';
import { firstDuplicate, type JsonNode, member, parseSpans } from './json_spans';
import type { VerifierKey } from './keys';
import { leafHash, rootFromInclusionProof } from './merkle';
import { type Checkpoint, openCheckpoint } from './note';

export interface Check {
  field: string;
  ok: boolean;
  what: string;
}

export interface ReceiptReport {
  ok: boolean;
  checks: Check[];
  document?: ReceiptDocument;  // present once the signature held and the payload parsed
  payloadText?: string;
  checkpoint?: Checkpoint;
}

// The document's members, in their required order.
export const kMembers = [
  'v', 'attempt', 'scenario', 'environment', 'intervention', 'evidence', 'facts', 'gate',
  'rollback', 'model_assistance', 'events', 'checkpoint', 'inclusion_proofs', 'hashes',
] as const;

export const kHashedSections = [
  'scenario', 'environment', 'intervention', 'actions', 'evidence', 'facts', 'gate',
  'rollback', 'model_assistance', 'events',
] as const;

export const kProperties = ['primary', 'twin', 'control', 'repeat', 'reversal'] as const;

export interface Fact {
  seq: number;
  property: string;
  world: string;
  stage: string;
  check: string;
  ok: boolean;
  value?: string;
}

export interface ReceiptDocument {
  v: number;
  attempt: string;
  scenario: { id: string; version: string; package_digest: string; manifest_sha256: string };
  environment: {
    kernel_release: string;
    lab_build_digest: string;
    sandbox_profile_digest: string;
    capability_snapshot_digest: string;
    capabilities_seq: number;
    binaries: Record<string, string>;
    world_images: { world: string; layers: string[]; sha256: string }[];
    worlds: number[];
  };
  intervention: { revision: number; ir_sha256: string; actions: unknown[] };
  evidence: { id: string; kind: string; sha256: string; bytes: number; seq: number }[];
  facts: { before: Fact[]; after: Fact[] };
  gate: { recovered: boolean; verdict: string; properties: { property: string; status: string; reason: string; cited: number[] }[] };
  rollback: { actions: unknown[]; facts: number[] };
  model_assistance: { used: boolean; calls: { call: number; request_sha256: string; response_sha256: string; model: string }[] };
  events: { stream: string; first_seq: number; last_seq: number; count: number; leaves: { seq: number; hash: string }[] };
  checkpoint: { size: number; note: string };
  inclusion_proofs: { seq: number; hashes: string[] }[];
  hashes: Record<string, string>;
}

const isHex64 = (s: unknown): s is string => typeof s === 'string' && /^[0-9a-f]{64}$/.test(s);
const isSeq = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 1;

// The type checks a later step relies on, with the path of the first that fails.
function shapeError(d: Record<string, unknown>): string | null {
  const o = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (typeof d.attempt !== 'string' || !/^[0-9a-f]{16}$/.test(d.attempt)) return 'attempt: not 16 lowercase hex';
  if (!o(d.scenario)) return 'scenario: not an object';
  if (!o(d.environment)) return 'environment: not an object';
  const env = d.environment;
  if (!isHex64(env.lab_build_digest) || /^0+$/.test(env.lab_build_digest)) return 'environment.lab_build_digest: not a known build digest';
  if (!Array.isArray(env.worlds) || env.worlds.length === 0 || !env.worlds.every(isSeq)) return 'environment.worlds: not a non-empty list of seqs';
  if (!o(env.binaries)) return 'environment.binaries: not an object';
  const paths = Object.keys(env.binaries);
  for (let i = 0; i < paths.length; i++) {
    const p = paths[i]!;
    if (!p.startsWith('/')) return `environment.binaries.${p}: not an absolute path`;
    if (i > 0 && !(paths[i - 1]! < p)) return `environment.binaries.${p}: paths not sorted`;
    if (!isHex64(env.binaries[p])) return `environment.binaries.${p}: not 64 hex`;
  }
  if (!o(d.intervention) || !Array.isArray(d.intervention.actions)) return 'intervention.actions: not an array';
  if (!Array.isArray(d.evidence) || d.evidence.length === 0) return 'evidence: not a non-empty array';
  for (const [i, e] of d.evidence.entries()) if (!o(e) || !isSeq(e.seq)) return `evidence[${i}].seq: not a seq`;
  if (!o(d.facts) || !Array.isArray(d.facts.before) || !Array.isArray(d.facts.after)) return 'facts: not {before, after}';
  for (const side of ['before', 'after'] as const) {
    for (const [i, f] of (d.facts[side] as unknown[]).entries()) {
      if (!o(f) || !isSeq(f.seq)) return `facts.${side}[${i}].seq: not a seq`;
      if (typeof f.stage !== 'string') return `facts.${side}[${i}].stage: not a string`;
      if (typeof f.ok !== 'boolean') return `facts.${side}[${i}].ok: not a boolean`;
    }
  }
  if (!o(d.gate) || !Array.isArray(d.gate.properties)) return 'gate.properties: not an array';
  for (const [i, p] of d.gate.properties.entries()) {
    if (!o(p) || !Array.isArray(p.cited) || !p.cited.every(isSeq)) return `gate.properties[${i}].cited: not a list of seqs`;
  }
  if (!o(d.rollback) || !Array.isArray(d.rollback.facts) || !d.rollback.facts.every(isSeq)) return 'rollback.facts: not a list of seqs';
  if (!o(d.model_assistance) || typeof d.model_assistance.used !== 'boolean' || !Array.isArray(d.model_assistance.calls)) return 'model_assistance: not {used, calls}';
  if (d.model_assistance.used !== d.model_assistance.calls.length > 0) return 'model_assistance.used: does not match calls';
  if (!o(d.events) || !Array.isArray(d.events.leaves)) return 'events.leaves: not an array';
  if (!isSeq(d.events.first_seq) || !isSeq(d.events.last_seq) || !Number.isSafeInteger(d.events.count)) return 'events: first_seq, last_seq and count must be seqs';
  for (const [i, l] of d.events.leaves.entries()) {
    if (!o(l) || !isSeq(l.seq) || !isHex64(l.hash)) return `events.leaves[${i}]: not {seq, hash}`;
  }
  if (!o(d.checkpoint) || !isSeq(d.checkpoint.size) || typeof d.checkpoint.note !== 'string') return 'checkpoint: not {size, note}';
  if (!Array.isArray(d.inclusion_proofs)) return 'inclusion_proofs: not an array';
  for (const [i, p] of d.inclusion_proofs.entries()) {
    if (!o(p) || !isSeq(p.seq) || !Array.isArray(p.hashes) || !p.hashes.every(isHex64)) return `inclusion_proofs[${i}]: not {seq, hashes}`;
  }
  if (!o(d.hashes)) return 'hashes: not an object';
  return null;
}

export function verifyReceipt(envelopeText: string, key: VerifierKey): ReceiptReport {
  const checks: Check[] = [];
  const add = (field: string, ok: boolean, what: string): boolean => {
    checks.push({ field, ok, what });
    return ok;
  };
  const done = (extra: Partial<ReceiptReport> = {}): ReceiptReport => ({ ok: checks.every((c) => c.ok), checks, ...extra });

  // 1. signature: nothing in a receipt whose signature fails is read.
  const env = parseEnvelope(envelopeText, firstDuplicate);
  if (!env.ok) {
    add('envelope', false, env.error);
    return done();
  }
  const opened = openEnvelope(env.envelope, kReceiptType, key);
  if (!opened.ok) {
    add(opened.field, false, opened.error);
    return done();
  }
  add('signature', true, `Ed25519 signature by ${opened.keyid} over the payload`);

  // 2. document
  const text = utf8Decode(opened.payload);
  if (text === null) {
    add('document', false, 'the payload is not valid UTF-8');
    return done();
  }
  const spans = parseSpans(text, { maxDepth: 16 });
  if (!spans.ok) {
    add('document', false, `${spans.path}: ${spans.error}`);
    return done({ payloadText: text });
  }
  const root = spans.root;
  if (root.kind !== 'object') {
    add('document', false, 'the payload is not a JSON object');
    return done({ payloadText: text });
  }
  const raw = JSON.parse(text) as Record<string, unknown>;
  if (root.members?.[0]?.key !== 'v' || raw.v !== 2) {
    add('v', false, raw.v === 1
      ? 'receipt format version 1; this verifier reads version 2 only'
      : `v: not the first member with value 2 (found ${JSON.stringify(raw.v)})`);
    return done({ payloadText: text });
  }
  const names = root.members!.map((m) => m.key);
  const order = names.join(',') === kMembers.join(',');
  const shape = shapeError(raw);
  if (!spans.compact) add('document', false, 'not compact: insignificant whitespace');
  else if (!order) add('document', false, `members are not exactly ${kMembers.join(', ')} in that order (found ${names.join(', ')})`);
  else if (shape) add('document', false, shape);
  else add('document', true, 'strict JSON, compact, every member in order and of its type');
  if (!spans.compact || !order || shape) return done({ payloadText: text });
  const doc = raw as unknown as ReceiptDocument;

  // 3. hashes.<section>: each the SHA-256 of that member's exact bytes.
  const sectionNode = (name: string): JsonNode | undefined =>
    name === 'actions' ? member(member(root, 'intervention'), 'actions') : member(root, name);
  for (const s of kHashedSections) {
    const node = sectionNode(s);
    const claimed = doc.hashes[s];
    if (!node || !isHex64(claimed)) {
      add(`hashes.${s}`, false, `hashes.${s} is missing or not 64 hex`);
      continue;
    }
    const actual = bytesToHex(sha256(utf8(text.slice(node.start, node.end))));
    add(`hashes.${s}`, actual === claimed, actual === claimed
      ? `the ${s} section hashes to ${claimed.slice(0, 12)}…`
      : `the ${s} section hashes to ${actual}, the receipt says ${claimed}`);
  }

  // 4. gate
  const props = doc.gate.properties;
  const gateProblem =
    doc.gate.verdict !== 'VERIFIED' ? `verdict is ${doc.gate.verdict}, not VERIFIED`
    : doc.gate.recovered !== true ? 'not recovered'
    : props.length !== 5 || props.some((p, i) => p.property !== kProperties[i]) ? `properties are not ${kProperties.join(', ')} in order`
    : props.find((p) => p.status !== 'pass') ? `property ${props.find((p) => p.status !== 'pass')!.property} is ${props.find((p) => p.status !== 'pass')!.status}`
    : null;
  add('gate', gateProblem === null, gateProblem ?? 'VERIFIED, recovered, all five properties pass');

  // 5. events
  const ev = doc.events;
  const seqs = ev.leaves.map((l) => l.seq);
  const leafSet = new Set(seqs);
  const cited: [string, number][] = [
    ...doc.facts.before.map((f, i) => [`facts.before[${i}].seq`, f.seq] as [string, number]),
    ...doc.facts.after.map((f, i) => [`facts.after[${i}].seq`, f.seq] as [string, number]),
    ...props.flatMap((p, i) => p.cited.map((s, j) => [`gate.properties[${i}].cited[${j}]`, s] as [string, number])),
    ...doc.rollback.facts.map((s, i) => [`rollback.facts[${i}]`, s] as [string, number]),
    ...doc.evidence.map((e, i) => [`evidence[${i}].seq`, e.seq] as [string, number]),
    ...doc.environment.worlds.map((s, i) => [`environment.worlds[${i}]`, s] as [string, number]),
  ];
  const missing = cited.find(([, s]) => !leafSet.has(s));
  const eventsProblem =
    ev.stream !== `attempt/${doc.attempt}` ? `stream is ${ev.stream}, not attempt/${doc.attempt}`
    : seqs.some((s, i) => i > 0 && s <= seqs[i - 1]!) ? 'leaves are not ascending'
    : seqs[0] !== ev.first_seq ? `the first leaf is ${seqs[0]}, not first_seq ${ev.first_seq}`
    : seqs[seqs.length - 1] !== ev.last_seq ? `the last leaf is ${seqs[seqs.length - 1]}, not last_seq ${ev.last_seq}`
    : seqs.length !== ev.count ? `${seqs.length} leaves, count says ${ev.count}`
    : missing ? `${missing[0]} cites seq ${missing[1]}, which is not among the leaves`
    : null;
  add('events', eventsProblem === null, eventsProblem ?? `${ev.count} events of ${ev.stream}, seqs ${ev.first_seq}..${ev.last_seq}; every cited seq among them`);

  // 6. checkpoint
  const cp = openCheckpoint(doc.checkpoint.note, key);
  let checkpoint: Checkpoint | undefined;
  if (!cp.ok) add('checkpoint', false, cp.error);
  else if (cp.checkpoint.size !== doc.checkpoint.size) add('checkpoint', false, `the note's size is ${cp.checkpoint.size}, checkpoint.size says ${doc.checkpoint.size}`);
  else if (cp.checkpoint.size < ev.last_seq) add('checkpoint', false, `size ${cp.checkpoint.size} does not cover last_seq ${ev.last_seq}`);
  else {
    checkpoint = cp.checkpoint;
    add('checkpoint', true, `signed by the pinned key: ${cp.checkpoint.origin} at size ${cp.checkpoint.size}`);
  }

  // 7. inclusion_proofs: one per leaf, each leading to the checkpoint's root.
  if (!checkpoint) {
    add('inclusion_proofs', false, 'not checked: no verified checkpoint to check them against');
  } else if (doc.inclusion_proofs.length !== ev.leaves.length) {
    add('inclusion_proofs', false, `${doc.inclusion_proofs.length} proofs for ${ev.leaves.length} leaves`);
  } else {
    let bad: string | null = null;
    for (let i = 0; i < ev.leaves.length && !bad; i++) {
      const leaf = ev.leaves[i]!;
      const proof = doc.inclusion_proofs[i]!;
      if (proof.seq !== leaf.seq) bad = `inclusion_proofs[${i}]: seq ${proof.seq}, but leaf ${i} is seq ${leaf.seq}`;
      else if (!proofHolds(leaf.seq, leaf.hash, proof.hashes, checkpoint)) {
        bad = `inclusion_proofs[${i}] (seq ${leaf.seq}): the path does not lead to the checkpoint's root`;
      }
    }
    add('inclusion_proofs', bad === null, bad ?? `${ev.leaves.length} events proven in the tree of ${checkpoint.size}`);
  }
  return done({ document: doc, payloadText: text, ...(checkpoint ? { checkpoint } : {}) });
}

export function proofHolds(seq: number, eventHashHex: string, path: string[], cp: Checkpoint): boolean {
  const h = hexDecode(eventHashHex);
  if (!h || h.length !== 32) return false;
  const nodes = path.map(hexDecode);
  if (nodes.some((n) => !n || n.length !== 32)) return false;
  const root = rootFromInclusionProof(seq - 1, cp.size, leafHash(h), nodes as Uint8Array[]);
  return root !== null && equalBytes(root, cp.root);
}

// GET /proof/receipts/{sha256}: {checkpoint: {size, note}, proofs: [{seq, event_hash, path}]}.
export interface ProofReply {
  attempt?: string;
  checkpoint: { size: number; note: string };
  proofs: { seq: number; event_hash?: string; leaf_hash?: string; path: string[] }[];
}

// The server's proofs of a receipt's events against the lab's latest checkpoint, checked here:
// the checkpoint with the pinned key, then each proof; each event must be a leaf of the receipt
// with the same hash (the server cannot prove other events in its place).
export function verifyLatestProofs(reply: ProofReply, doc: ReceiptDocument, key: VerifierKey): Check[] {
  const checks: Check[] = [];
  const cp = openCheckpoint(reply.checkpoint?.note ?? '', key);
  if (!cp.ok) return [{ field: 'latest checkpoint', ok: false, what: cp.error }];
  if (cp.checkpoint.size !== reply.checkpoint.size) {
    return [{ field: 'latest checkpoint', ok: false, what: `the note's size is ${cp.checkpoint.size}, the reply says ${reply.checkpoint.size}` }];
  }
  checks.push({ field: 'latest checkpoint', ok: true, what: `signed by the pinned key: ${cp.checkpoint.origin} at size ${cp.checkpoint.size}` });
  const leaves = new Map(doc.events.leaves.map((l) => [l.seq, l.hash]));
  let bad: Check | null = null;
  for (const p of reply.proofs) {
    const hash = p.event_hash ?? p.leaf_hash ?? '';
    if (leaves.get(p.seq) !== hash) bad = { field: `proof seq ${p.seq}`, ok: false, what: `event ${p.seq} is not a leaf of this receipt with hash ${hash.slice(0, 12)}…` };
    else if (!proofHolds(p.seq, hash, p.path, cp.checkpoint)) bad = { field: `proof seq ${p.seq}`, ok: false, what: `the path of seq ${p.seq} does not lead to the root of the checkpoint at size ${cp.checkpoint.size}` };
    if (bad) break;
  }
  if (!bad && reply.proofs.length !== leaves.size) {
    bad = { field: 'latest proofs', ok: false, what: `${reply.proofs.length} proofs for ${leaves.size} events of the receipt` };
  }
  checks.push(bad ?? { field: 'latest proofs', ok: true, what: `${reply.proofs.length} events proven in the tree of ${cp.checkpoint.size}` });
  return checks;
}
