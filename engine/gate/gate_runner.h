// The TransferGate runner: applies an attempt's InterventionIR on worlds made fresh for each
// property, runs the manifest's checks there as the supervisor, and records every action and
// fact as an event of the attempt's stream. It decides nothing: the grader (grader.h) turns the
// recorded facts into the verdict. Semantics: docs/GATE.md ("The gate runner").
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/common/json_writer.h"
#include "engine/common/status.h"
#include "engine/events/attempt_events.h"
#include "engine/gate/grader.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/log/event_log.h"
#include "engine/scenario/manifest.h"
#include "engine/world/world_driver.h"

namespace aura::gate {

// What one action (a catalog call or an authorised script) did on one world. A failure of the
// host to run it (kIo, an unavailable feature ...) is recorded as exit_code -1 with the reason
// in `error`, and `host_failure` set: the caller stops there, it never pretends the action ran.
struct ActionRecord {
  std::string call_json;      // the call (catalog actions), else empty
  std::string script_sha256;  // scripts: the authorised digest, else empty
  int exit_code = 0;
  std::string error;
  std::vector<std::string> resolved;
  std::string output;
  bool truncated = false;
  bool host_failure = false;
};

ActionRecord run_action(world::World& world, const intervention::Action& action);

// Runs `actions` in order; stops after the first host failure (the rest are not attempted).
std::vector<ActionRecord> run_actions(world::World& world,
                                      const std::vector<intervention::Action>& actions);

// The members an action event (events::ActionCompleted, events::GateAction) records of `r`:
// call (the call's JSON) or script_sha256, exit_code, error, truncated, resolved.
events::ActionMembers action_members(const ActionRecord& r);

struct GateRunInput {
  std::string attempt_id;  // 16 lowercase hex
  uint64_t gate_seq = 0;   // the gate.started this run belongs to
  const scenario::Manifest* manifest = nullptr;
  std::filesystem::path package_dir;  // the verified package the worlds are built from
  world::WorldDriver* driver = nullptr;
  const intervention::Intervention* ir = nullptr;
  const GateSpec* spec = nullptr;
  uint64_t seed = 0;
  std::filesystem::path work_dir;  // must not exist; one sub-folder per property's world
  bool stop_at_first_failure = false;
  // Without stop_at_first_failure, and when the driver's worlds may be used from several
  // threads at once (WorldDriver::concurrent_worlds), up to this many properties run at once.
  // Their events are still appended property by property in kProperties order.
  unsigned parallel = 1;
  // Called after each property with its name and status ("pass", "fail"): progress.
  std::function<void(Property, Outcome)> progress;
  // The package's SHA256SUMS bytes. When set, every world the gate builds is recorded as a
  // `world.built` event of its property (world::add_world_built_members) from the world's
  // build_record(); a world that cannot say what it was built from stops the gate.
  std::string package_sums;
};

struct GateRunOutput {
  std::vector<Fact> facts;           // every gate.fact appended, with its seq
  std::vector<Property> not_run;     // properties skipped after a failure
  std::vector<uint64_t> event_seqs;  // every event appended (actions and facts)
};

// Runs the five properties in kProperties order, each on fresh worlds:
//   primary   the primary world: apply, then its required checks (after_apply)
//   twin      each twin world: apply, then its required checks (after_apply)
//   control   the control world: apply, then its required checks (after_apply)
//   repeat    the primary world: apply, fingerprint (after_apply), apply again, fingerprint and
//             the required checks (after_repeat)
//   reversal  the primary world: fingerprint (before), apply, the IR's rollback, fingerprint
//             (after_rollback)
// A property's gate.action and gate.fact events (actor supervisor) are appended to `log` in one
// append_all when its worlds are done, and each world is destroyed before the next is built.
// With stop_at_first_failure, a property that grades fail stops the run and the later ones are
// returned in not_run. An error (a world that cannot be built, a check the driver cannot run)
// stops the run: the facts appended so far stay, and no verdict may be drawn from them.
Result<GateRunOutput> run_gate(const GateRunInput& input, EventLog& log, BlobStore& blobs);

}  // namespace aura::gate
