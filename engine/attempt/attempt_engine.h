// The attempt engine: every command a learner (or judge mode) gives an attempt. Each command
// rebuilds the attempt's state from its stream (attempt_state.h), checks itself against it, does
// its work (on the learner's live world, or on fresh gate worlds), and appends its events --
// the command's own and its attempt.phase transitions in one append_all. A refused command
// appends nothing and says what was expected. Contracts: docs/ATTEMPTS.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/attempt/attempt_state.h"
#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/gate/grader.h"
#include "engine/log/event_log.h"
#include "engine/package/trust_store.h"
#include "engine/receipt/receipt.h"
#include "engine/scenario/manifest.h"
#include "engine/sign/signed_note.h"
#include "engine/world/world_driver.h"

namespace aura::attempt {

inline constexpr size_t kMaxLearnerTextBytes = 4096;  // prediction, note, reflection, reason
// A refused probe costs nothing, so their number is bounded instead: past it a probe is refused
// before it runs and nothing is appended (a learner cannot grow the log without end for free).
inline constexpr uint32_t kMaxRefusedProbes = 32;

// A world driver for a manifest's "driver" name, or nullptr when this build has none.
using DriverFactory = std::function<std::unique_ptr<world::WorldDriver>(std::string_view name)>;

struct EngineContext {
  EventLog* log = nullptr;  // opened for writing
  BlobStore* blobs = nullptr;
  const TrustStore* trust = nullptr;       // publisher keys: packages are re-verified on use
  const NoteSigner* lab_signer = nullptr;  // signs receipts (and the log's checkpoints)
  std::filesystem::path worlds_dir;        // DATA/worlds: live and gate worlds
  DriverFactory drivers;
  // SHA-256 (64 hex) of the lab's own program, recorded in gate.started and bound into receipts'
  // environment; empty when unknown (a receipt is then refused, never issued with a placeholder).
  std::string lab_build_digest;
  // True: an attempt's live world outlives this process (the CLI: each command is a process
  // that reopens it). False: the engine holds its live worlds and they end with it (judge mode,
  // one process that owns every attempt it starts): a killed judge leaves no world behind.
  bool persist_live_worlds = true;
};

struct StartRequest {
  std::string learner;      // [a-z][a-z0-9_-]{0,31}
  std::string scenario_id;  // the latest scenario.loaded with this id is used
  std::string mode = "learn";
  std::optional<uint64_t> seed;  // random when absent
};

struct ProbeResult {
  uint32_t probe = 0;
  std::string evidence;  // ev-<probe>
  int exit_code = 0;
  bool truncated = false;
  // The driver's own checks refused the target before reading anything (world::CallOutput::
  // refused): `error` says why, and the probe cost nothing (`cost` 0).
  bool refused = false;
  std::string error;
  std::string output;
  uint32_t cost = 0;  // what this probe was charged: its catalog cost, or 0 when refused
  uint32_t spent = 0, budget = 0;
};

// The ACK phase: what the supervisor read back of each action of the last apply.
struct AckLine {
  uint32_t index = 0;
  std::string call;  // the call's JSON, or "script <sha256>"
  world::Readback readback;
};
struct AckResult {
  uint64_t readback_seq = 0;  // the ack.readback event
  bool as_requested = false;  // no action's readback differs from its request
  std::vector<AckLine> lines;
};

struct ApplyResult {
  uint32_t actions = 0;
  uint32_t failed = 0;
  bool aborted = false;            // a host failure stopped the apply
  std::vector<std::string> lines;  // one human line per action
  // The readback the apply ended with (recorded as ack.readback at readback.readback_seq): what
  // the learner looks at before acknowledging it. readback_seq 0 when the host could not read
  // back (readback_error says why; ack then reads back).
  AckResult readback;
  std::string readback_error;
};

struct VerifyResult {
  bool recovered = false;
  std::vector<std::pair<std::string, bool>> checks;  // check id, ok
};

struct GateOutcome {
  uint64_t gate_seq = 0;
  uint64_t verdict_seq = 0;
  gate::GateResult result;
};

struct ReceiptOutcome {
  receipt::IssuedReceipt receipt;
  uint64_t event_seq = 0;  // receipt.issued
};

class AttemptEngine {
 public:
  explicit AttemptEngine(EngineContext context);

  // Binds the scenario (its package re-verified against the registry's digests), builds the
  // learner's live primary world, and appends attempt.started. Returns the attempt id.
  Result<std::string> start(const StartRequest& request);
  // observe -> predict -> inspect. `hypothesis` is a manifest hypothesis id.
  Status predict(std::string_view id, std::string_view learner, std::string_view hypothesis,
                 std::string_view expect, uint32_t confidence);
  // inspect: one catalog probe on the live world, within the budget. A probe whose target the
  // driver refused before reading anything is recorded with cost 0 and spends nothing.
  Result<ProbeResult> probe(std::string_view id, std::string_view learner,
                            std::string_view call_json);
  // inspect -> contract, or a new revision in contract. Returns the revision.
  Result<uint32_t> submit(std::string_view id, std::string_view learner, std::string_view ir_json);
  // contract: authorises one script of the current revision by its SHA-256 (64 hex).
  Status authorize(std::string_view id, std::string_view learner, std::string_view sha256_hex);
  // contract -> apply -> ack: runs the IR's actions on the live world, then the supervisor reads
  // back what each left (world::World::read_back) and records it (ack.readback) in the same
  // append: the learner sees the readback before acknowledging it.
  Result<ApplyResult> apply(std::string_view id, std::string_view learner);
  // ack -> verify: the learner acknowledges the readback they were shown (the latest
  // ack.readback; `readback_seq`, when given, must be its seq). The supervisor reads the live
  // world back again first: when the shown readback and this one are both as requested, the
  // acknowledgement is recorded (attempt.acknowledged citing the shown one) and the attempt moves
  // to verify. Otherwise the fresh readback is recorded and the command fails, the attempt stays
  // in ack: naming each difference (reset rebuilds the world), or, when the world now reads back
  // as requested but the learner was shown something else, asking them to acknowledge the new
  // one. `out`, when given, receives the readback acknowledged or the fresh one.
  Status ack(std::string_view id, std::string_view learner, std::string_view note,
             AckResult* out = nullptr, std::optional<uint64_t> readback_seq = std::nullopt);
  // verify -> transfer_gate: the primary's required checks on the live world.
  Result<VerifyResult> verify(std::string_view id, std::string_view learner);
  // transfer_gate -> receipt (VERIFIED) or reflect: the five properties on fresh worlds.
  Result<GateOutcome> gate(std::string_view id, std::string_view learner,
                           std::function<void(gate::Property, gate::Outcome)> progress = {});
  // receipt -> reflect: signs the receipt, stores it as a blob, appends receipt.issued.
  Result<ReceiptOutcome> receipt(std::string_view id, std::string_view learner);
  // reflect -> done; the live world is destroyed.
  Status reflect(std::string_view id, std::string_view learner, std::string_view text);
  // any phase but done -> done; the live world is destroyed.
  Status abandon(std::string_view id, std::string_view learner, std::string_view reason);
  // The same, as the lab's doing (actor "engine"): a service ending an attempt left idle.
  Status expire(std::string_view id, std::string_view reason);
  // The attempts whose live worlds this engine holds now (persist_live_worlds false): what a
  // service counts against its limits on live worlds.
  std::vector<std::string> held_attempts() const;
  // inspect .. transfer_gate (before a verdict): the live world is destroyed (or, when it can
  // no longer be opened, discarded: what it left is reaped) and built afresh from the package
  // with the attempt's seed; `world.reset` records what became of the old one. The attempt goes
  // back to inspect: probe the fresh world, then submit (the same IR again, or a revision) and
  // apply. Probes spent stay spent; evidence stays unlocked.
  Result<std::string> reset(std::string_view id, std::string_view learner, std::string_view reason);

  Result<AttemptState> state(std::string_view id) const;
  // The manifest of the latest loaded package of `scenario_id`, its package re-verified.
  Result<scenario::Manifest> scenario_manifest(std::string_view scenario_id) const;
  // `name` when a scenario of that id is loaded; else the one loaded id that starts with `name`
  // in lower case and a '-' (so "O1" names o1-fleet-drift); not found when none or several do.
  Result<std::string> scenario_named(std::string_view name) const;

 private:
  struct Bound;
  Result<std::string> end_world(Bound& b, const std::filesystem::path& dir) const;
  Result<std::unique_ptr<world::World>> open_live(Bound& b, const AttemptState& s) const;
  Result<AttemptState> load(std::string_view id, std::string_view learner) const;
  // load(), then refuses unless the attempt is in `phase` (naming `command`).
  Result<AttemptState> load(std::string_view id, std::string_view learner, std::string_view command,
                            Phase phase) const;
  Result<Bound> bind(const AttemptState& s) const;
  std::filesystem::path live_dir(std::string_view id) const;
  Status append(std::vector<EventDraft> drafts);
  void destroy_live(const AttemptState& s);

  // One command of an attempt at a time, commands of different attempts in parallel: each
  // command holds its attempt's lock from loading the attempt's state to appending its events,
  // so what it checked is still true when it appends. What attempts share has its own lock: the
  // log and the blob store theirs, the live worlds held below held_mu_, the drivers theirs
  // (their naming across processes and threads, workers/nodes/stage.cc).
  class AttemptLock {
   public:
    AttemptLock(std::shared_ptr<std::mutex> mu) : mu_(std::move(mu)), lock_(*mu_) {}

   private:
    std::shared_ptr<std::mutex> mu_;  // kept while locked
    std::unique_lock<std::mutex> lock_;
  };
  AttemptLock lock_attempt(std::string_view id);
  Status end_attempt(std::string_view id, std::string_view learner, std::string_view reason,
                     const std::string& actor);

  EngineContext ctx_;
  std::mutex locks_mu_;  // guards locks_
  std::map<std::string, std::weak_ptr<std::mutex>, std::less<>> locks_;
  // The live worlds this engine holds (persist_live_worlds false), by their folder, each with
  // the driver that made it (the world is destroyed first). An entry is added and removed only
  // under its attempt's lock; held_mu_ guards the map itself.
  struct Held {
    std::unique_ptr<world::WorldDriver> driver;
    std::unique_ptr<world::World> world;
  };
  mutable std::mutex held_mu_;
  mutable std::map<std::string, Held> held_;
};

// The manifest an attempt was started with (the blob attempt.started binds): what its commands
// are validated against and what its catalog shows, whatever was loaded since.
Result<scenario::Manifest> attempt_manifest(const BlobStore& blobs, const AttemptState& s);

// Validates a learner name: [a-z][a-z0-9_-]{0,31}.
bool is_valid_learner(std::string_view name);

}  // namespace aura::attempt
