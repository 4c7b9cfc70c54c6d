// Typed payloads of the TransferGate's run in an attempt's stream (docs/ATTEMPTS.md, "Events";
// docs/GATE.md): gate.started, gate.action and gate.fact, each with ONE encoder (the exact bytes
// the engine and the supervisor append) and ONE strict decoder on PayloadReader. The gate's
// conclusions, gate.property and gate.verdict, are in attempt_events.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/evidence_ref.h"
#include "engine/common/status.h"
#include "engine/events/attempt_events.h"
#include "engine/events/event_types.h"
#include "engine/events/payload_reader.h"
#include "engine/log/event.h"

namespace aura::events {

// When a gate.fact was taken within its property's run; where a gate.action ran.
inline constexpr std::string_view kGateStages[] = {"before", "after_apply", "after_repeat",
                                                   "after_rollback"};
inline constexpr std::string_view kGateActionStages[] = {"apply", "repeat", "rollback"};
// The check whose gate.fact carries a world fingerprint in "value" (gate::kFingerprintCheck).
inline constexpr std::string_view kFingerprintCheck = "world.fingerprint";

struct GateStarted {
  static constexpr std::string_view kType = kGateStarted;
  struct Environment {
    // lab_build_digest is empty when the lab cannot hash its own program (no receipt is then
    // issued); sandbox_profile_digest is the driver's.
    std::string kernel_release, lab_build_digest, sandbox_profile_digest;
    std::string capability_snapshot_digest;  // SHA-256 of `capabilities`, 64 hex
  };
  std::string attempt;
  uint64_t revision = 0;
  std::string ir_sha256;
  bool stop_at_first_failure = false;
  Environment environment;
  std::string capabilities;  // the driver's JSON object, compact

  std::string encode() const;
  static Result<GateStarted> decode(PayloadReader& r, const EventView& e);
};

// One action of the IR (or its rollback) run on one of the gate's worlds.
struct GateAction : ActionMembers {
  static constexpr std::string_view kType = kGateAction;
  std::string attempt;
  uint64_t gate = 0;                   // seq of the gate.started
  std::string property, world, stage;  // property: kProperties; stage: kGateActionStages
  uint64_t index = 0;
  std::vector<EvidenceRef> refs;  // id "output", kind "action.output"

  std::string encode() const;
  static Result<GateAction> decode(PayloadReader& r, const EventView& e);
};

// What one of the supervisor's checks (or a fingerprint) saw on one of the gate's worlds: the
// grader's only input.
struct GateFact {
  static constexpr std::string_view kType = kGateFact;
  std::string attempt;
  uint64_t gate = 0;
  std::string property, world, stage, check;  // property: kProperties; stage: kGateStages
  bool ok = false;
  std::string observed;
  // Written for check kFingerprintCheck and kChangesCheck (64 hex: the grader, not the
  // decoder, judges it).
  std::optional<std::string> value;
  // kChangesCheck: id "changes", kind "world.changes": the change set the fact judged.
  std::vector<EvidenceRef> refs;

  std::string encode() const;
  static Result<GateFact> decode(PayloadReader& r, const EventView& e);
};

}  // namespace aura::events
