// A synthetic attempt written to a real event log as the attempt engine would (docs/ATTEMPTS.md):
// the manifest and IR as blobs, a prediction, a probe unlocking ev-1, the submission, the gate's
// facts, five property results and the verdict graded by the real grader, with events of other
// streams interleaved. The receipt tests issue and verify receipts over it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/gate/grader.h"
#include "engine/log/event_log.h"

namespace aura::testing {

struct AttemptOptions {
  std::string attempt_id = "0123456789abcdef";
  // A twin fact is recorded not ok; the verdict is graded honestly (RECOVERED_UNPROVEN).
  bool fail_twin = false;
  // A primary fact is recorded not ok, but the property results and the verdict are graded as if
  // it were ok: an engine that lied about a VERIFIED verdict.
  bool forge_verdict = false;
  // coach.used events disclosed on the receipt.
  int coach_calls = 0;
  // Stop after the submission: no gate yet.
  bool stop_before_gate = false;
  // gate.started's lab build digest ("" or all zeros: unknown).
  std::string lab_build_digest = std::string(64, '1');
  // A capabilities.measured event before the gate, and world.built events in it.
  bool record_capabilities = true;
  bool record_worlds = true;
  // The primary's world.built names an image digest its layers do not have.
  bool forge_image = false;
};

struct AttemptFixture {
  std::string attempt_id;
  std::string stream;
  std::string manifest_json;
  std::string ir_json;
  uint64_t started_seq = 0;
  uint64_t submitted_seq = 0;
  uint64_t evidence_seq = 0;  // the probe.completed that unlocked ev-1
  uint64_t gate_seq = 0;
  uint64_t verdict_seq = 0;
  std::vector<uint64_t> fact_seqs;
  std::vector<uint64_t> world_seqs;   // the gate's world.built events
  uint64_t capabilities_seq = 0;      // the capabilities.measured before the gate
  std::vector<uint64_t> stream_seqs;  // every event of the attempt's stream, verdict included
  gate::GateResult recorded;          // what the gate.verdict event records
  std::string predicted_text;         // a text found only in the attempt.predicted payload
};

// The manifest.json bytes of the fixture's scenario (docs/SCENARIOS.md shape).
std::string fixture_manifest_json();
// The GateSpec of that manifest for the fixture's IR (which promises fleet-healthy and
// fleet-converged).
gate::GateSpec fixture_gate_spec();
// The fixture package's SHA256SUMS (its SHA-256 is the scenario's package digest): layers
// "fleet" and "twin" (the twin-1 world's).
std::string fixture_sums();
// The sandbox profile text the fixture's worlds were built with.
std::string fixture_profile();

// Appends the attempt (and unrelated events of other streams around its events) to `log`, storing
// blobs in `blobs` (which must be the store the log checks refs against). REQUIREs success.
AttemptFixture append_attempt(EventLog& log, BlobStore& blobs, const AttemptOptions& options = {});

}  // namespace aura::testing
