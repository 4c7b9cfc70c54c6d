// An attempt's state, rebuilt by folding the events of its stream (docs/ATTEMPTS.md). Nothing
// else stores it: every command replays the stream, checks itself against the result, and only
// then appends. The fold refuses an event that does not fit the state it was appended in, so a
// log that is not what the engine wrote is reported, never silently accepted.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"
#include "engine/log/event.h"
#include "engine/log/event_log.h"

namespace aura::attempt {

enum class Phase {
  kObserve,
  kPredict,
  kInspect,
  kContract,
  kApply,
  kAck,
  kVerify,
  kTransferGate,
  kReceipt,
  kReflect,
  kDone,
};
std::string_view phase_name(Phase p);  // "observe" ... "transfer_gate" ... "done"
std::optional<Phase> parse_phase(std::string_view name);

// `attempt/<id>`; ids are 16 lowercase hex digits.
std::string stream_of(std::string_view attempt_id);
bool is_valid_attempt_id(std::string_view id);

enum class ScriptStatus { kPendingFeedback, kPendingExecution, kExecuted };
std::string_view script_status_name(ScriptStatus s);

struct BlobRef {
  Digest sha256{};
  uint64_t bytes = 0;
};

struct AttemptState {
  std::string id;
  std::string learner;
  std::string mode;  // "learn" | "judge"
  uint64_t seed = 0;
  // The scenario as bound at start.
  std::string scenario_id, scenario_version, package_digest, manifest_sha256, publisher;
  std::string package_dir;
  BlobRef manifest;

  Phase phase = Phase::kObserve;
  bool predicted = false;
  std::string hypothesis;
  uint32_t probe_budget = 0;
  uint32_t spent = 0;
  uint32_t probes = 0;  // probes requested
  uint32_t probes_completed = 0;
  uint32_t probes_refused = 0;     // completed as refused (nothing read, nothing spent)
  uint64_t last_probe_cost = 0;    // what the latest probe.requested charged
  std::set<std::string> unlocked;  // evidence ids unlocked by completed probes

  uint32_t revision = 0;  // the current InterventionIR revision (0: none yet)
  std::string ir_sha256;
  BlobRef ir;
  std::map<std::string, ScriptStatus> scripts;  // sha256 hex -> status, current revision
  uint32_t actions_run = 0;                     // action.completed so far (act-<n> ids)
  bool applied = false;
  // The latest ack.readback since the last apply (0: none): what the learner acknowledges.
  uint64_t readback_seq = 0;
  bool readback_as_requested = false;
  std::string readback_sha256;  // of its "actions" bytes (attempt.acknowledged cites it)
  bool recovered_live = false;  // attempt.verified
  uint64_t gate_seq = 0;        // seq of gate.started, 0 if none
  // What the learner is told of each property the last gate failed (gate.property's finding,
  // learner-safe by construction: engine/gate/feedback.h), in the gate's order.
  struct Finding {
    std::string property, check, description, observed;
  };
  std::vector<Finding> findings;
  std::string verdict;  // gate.verdict's verdict, empty before
  std::string receipt_sha256;

  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t events = 0;
};

// Folds one event of the attempt's stream into `state`. The first event must be
// attempt.started. kCorruption naming the seq and member when the event is malformed or does
// not fit the state.
Status fold_event(AttemptState& state, const EventView& event);

// Reads the stream `attempt/<id>` and folds it. kNotFound if the attempt has no events.
Result<AttemptState> replay_attempt(const EventLog& log, std::string_view attempt_id);

}  // namespace aura::attempt
