// The API's shapes (docs/api/openapi.yaml), as this lab's server sends them. Members the
// contract names but the server may not send yet are optional.

export interface ApiErrorBody {
  status: number;
  code: string;
  message: string;
  path?: string;
  phase?: string;
  expected?: string[];
  next?: string;
}

export interface Health {
  status: 'ok';
  daemon?: { pid?: number; started_at?: string; version?: string };
  log_head: number;
}

export interface Capability {
  id: string;
  available: boolean;
  detail: string;
}

export interface Lab {
  scenario: string;
  title: string;
  available: boolean;
  missing?: string[];  // the contract's member
  reason?: string;  // what the server sends today
}

export interface CapabilityPanel {
  measured_seq: number;
  measured_at?: string;
  labs: Lab[];
  capabilities: Capability[];
}

export interface ScenarioSummary {
  id: string;
  version: string;
  family: string;
  title: string;
  available: boolean;
  reason?: string;
}

export type ParamType = 'string' | 'integer' | 'boolean' | 'path' | 'mode' | 'target';

export interface ParamSchema {
  name: string;
  type: ParamType;
  required: boolean;
  description?: string;
  min_bytes?: number;
  max_bytes?: number;
  enum?: string[];
  path_prefixes?: string[];
  path_excludes?: string[];
  min?: number;
  max?: number;
  target_kind?: string;
  allow_literal?: boolean;
}

export interface CallSpec {
  name: string;
  summary: string;
  cost?: number;
  params: ParamSchema[];
}

export interface TargetTerm {
  name: string;
  kind: string;
  type: 'role' | 'selector';
  description: string;
}

export interface CheckSpec {
  id: string;
  kind: 'postcondition' | 'invariant';
  description: string;
  // The package's policies the check reads (docs/formats/manifest.md, "Policies").
  policies?: string[];
}

// A policy the package states once and its checks read: its name and what it allows.
export interface Policy {
  name: string;
  description: string;
}

// The change surface (docs/formats/manifest.md): what a fix may change, and what the world
// writes by itself.
export interface SurfaceRule {
  name: string;
  description: string;
  paths: string[];
  what?: string[];
}

export interface ChangeSurface {
  fix: SurfaceRule[];
  runtime: SurfaceRule[];
}

export interface Scenario {
  id: string;
  version: string;
  family: string;
  title: string;
  briefing: string;
  hypotheses: { id: string; text: string }[];
  probe_budget: number;
  allow_scripts: boolean;
  probes: CallSpec[];
  actions: CallSpec[];
  targets: TargetTerm[];
  policies?: Policy[];
  checks: CheckSpec[];
  changes?: ChangeSurface;
}

export const kPhases = [
  'observe', 'predict', 'inspect', 'contract', 'apply', 'ack', 'verify', 'transfer_gate', 'receipt', 'reflect',
] as const;
export type Phase = (typeof kPhases)[number] | 'done';

export interface AttemptCreated {
  attempt: string;
  token: string;
  phase: Phase;
  next: string;
}

export interface AttemptState {
  attempt: string;
  scenario: string;
  scenario_version?: string;
  learner: string;
  mode: 'learn' | 'judge';
  phase: Phase;
  hypothesis?: string;
  expect?: string;
  probe_budget: number;
  spent: number;
  probes?: number;
  evidence: string[];
  ir_revision?: number;
  ir_sha256?: string;
  scripts_pending: string[];
  applied?: boolean;
  recovered?: boolean;
  verdict?: 'VERIFIED' | 'RECOVERED_UNPROVEN' | 'NOT_RECOVERED';
  receipt_sha256?: string;
  first_seq?: number;
  last_seq?: number;
  next: string;
}

export interface Evidence {
  id: string;
  probe: number;
  call: { call: string; params?: Record<string, unknown> };
  exit_code: number;
  truncated: boolean;
  seq: number;
  content?: string;
}

export interface ProbeResult {
  probe: number;
  evidence: string;
  exit_code: number;
  truncated: boolean;
  error: string;
  output: string;
  spent: number;
  budget: number;
}

export interface ValidationResult {
  ok: boolean;
  errors: { path: string; message: string }[];
}

export interface ApplyResult {
  actions: number;
  failed: number;
  aborted: boolean;
  lines?: string[];
}

export interface ReadbackAction {
  index: number;
  call?: string;
  script_sha256?: string;
  typed: boolean;
  observed: string;
  differences: string[];
}

export interface AckResult {
  readback_seq?: number;
  as_requested: boolean;
  lines?: ReadbackAction[];
}

export interface VerifyResult {
  recovered: boolean;
  checks: { check: string; ok: boolean }[];
}

export interface GateProperty {
  property: string;
  status: string;
  reason: string;
  cited?: number[];
}

export interface JudgeCase {
  case: string;
  attempt: string;
  expect: string;
  verdict: string;
  as_expected?: boolean;
  gate?: { recovered: boolean; verdict: string; properties: GateProperty[] } | null;
  gate_seconds?: number;
  receipt_sha256?: string;
  replay_verified?: boolean;
}

export interface JudgeRun {
  run: string;
  scenario: string;
  state: 'queued' | 'running' | 'done' | 'failed';
  position?: number;
  attempts?: string[];
  cases?: JudgeCase[];
  current_properties?: { property: string; outcome: string }[];
  error?: string;
  seconds?: number;
}

export interface Proof {
  head: { seq: number; hash: string };
  checkpoint: { size: number; note: string } | null;
  last_verify?: { at: string; ok: boolean; events: number; detail: string };
  projection_lag: number;
}
