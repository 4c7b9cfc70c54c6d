// Synthetic lab histories for benchmarks and tests: the scenario registry, capability panels and
// attempts of every shape (docs/ATTEMPTS.md), written only through the event catalog's encoders
// (engine/events), command by command as the engine appends them, with the gate's properties
// and verdict computed by gate::grade from the facts the history records. Not a source of
// truth: nothing here runs a world; every figure it records is made up, consistently.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/blob/evidence_ref.h"
#include "engine/common/status.h"
#include "engine/events/attempt_events.h"
#include "engine/events/registry_events.h"
#include "engine/gate/grader.h"
#include "engine/log/event.h"

namespace aura::app {

// The scenario every synthetic attempt works, and the blobs its events refer to (stored, so the
// log accepts the refs; reused across attempts, so a large history stays small on disk).
struct SyntheticScenario {
  // The registry's record of the package (scenario.loaded).
  std::string dir, id, version, family, title, publisher;
  EvidenceRef manifest;  // kind scenario.manifest
  // The package's SHA256SUMS: its SHA-256 is the package digest; world.built's sums blob.
  std::string sums;
  EvidenceRef sums_ref, profile_ref;                       // kinds scenario.sums, sandbox.profile
  std::map<std::string, std::vector<std::string>> layers;  // world id -> its package folders
  std::map<std::string, std::string> images;               // world id -> its image digest
  std::vector<std::pair<std::string, std::string>> binaries;  // path -> SHA-256, per world
  // What the attempts do.
  uint64_t probe_budget = 5, probe_cost = 1;
  std::vector<std::string> hypotheses;      // attempt n predicts hypotheses[n % size]
  std::string expect;                       // the prediction's text
  std::vector<std::string> probe_calls;     // probe k runs probe_calls[(k - 1) % size] (compact)
  std::vector<std::string> action_calls;    // the IR's actions when it has no script (compact)
  std::vector<std::string> rollback_calls;  // its rollback (the gate's reversal runs it)
  std::vector<std::string> resolved;        // what probes' and actions' targets resolved to
  std::vector<EvidenceRef> irs;             // revision r's IR blob: irs[(r - 1) % size]
  std::vector<EvidenceRef> probe_outputs, action_outputs, receipts;  // reused in turn
  gate::GateSpec spec;
  std::string driver_capabilities = R"({"driver":"filetree"})";  // gate.started's
  std::string kernel_release = "6.1.0";
  std::string lab_build_digest;  // 64 hex; set by add_package

  std::string package_digest() const;  // SHA-256 of `sums`, hex
};

// Stores `bytes` in `blobs` and returns its ref (id "x": each event names its own).
Result<EvidenceRef> store_blob(BlobStore& blobs, std::string_view bytes, std::string kind);

// Fills the package side of `sc` from its spec's worlds: a SHA256SUMS with one file under
// "worlds/common" and one under "worlds/<id>" per world, those two folders as each world's
// layers, a sandbox profile and two binaries, the lab build digest; stores the blobs. Also
// stores `outputs` blobs of each kind the attempts cite (probe and action outputs, receipts).
Status add_package(SyntheticScenario& sc, BlobStore& blobs, size_t outputs = 4);

// What one synthetic attempt does.
struct SyntheticAttempt {
  std::string id;               // 16 lowercase hex
  std::string learner = "ada";  // the actor is learner:<learner>
  std::string mode = "learn";   // learn: the gate stops at the first failing property
  uint64_t seed = 0;
  // The gate's verdict: VERIFIED, RECOVERED_UNPROVEN (the fix fails on a twin) or NOT_RECOVERED
  // (a postcondition fails everywhere); empty: abandoned while inspecting.
  std::string verdict;
  int probes = 2;
  int truncated_probe = 1;            // its output was truncated (0: none)
  bool probe_without_output = false;  // probe 2 times out and has no output (no ref)
  bool script = false;                // the IR's one action is a script, authorised
  bool second_revision = false;       // the contract is revised once (revision 2)
  bool failed_action = false;         // the first action exits 1 with an error
  bool coach = false;                 // a coach.used event before the gate
  bool hold_for_receipt = false;      // stop at phase receipt after VERIFIED (a real receipt)
  size_t variant = 0;                 // picks hypotheses, outputs and texts
  uint64_t confidence = 75;
};

// One attempt's history, one command (one atomic append) at a time.
class AttemptHistory {
 public:
  AttemptHistory(const SyntheticScenario& sc, SyntheticAttempt plan);
  ~AttemptHistory();
  AttemptHistory(AttemptHistory&&) noexcept;
  AttemptHistory& operator=(AttemptHistory&&) noexcept;

  const SyntheticAttempt& plan() const;
  bool done() const;
  // The next command's events; `seq` is the seq the first of them will get (the caller is the
  // log's only appender).
  Result<std::vector<EventDraft>> next(uint64_t seq);
  // A held attempt whose gate said VERIFIED, waiting in phase receipt.
  bool awaiting_receipt() const;
  // The events after the receipt `issued` (its attempt, digest, seqs and ref set by the caller).
  std::vector<EventDraft> after_receipt(events::ReceiptIssued issued) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// The scenario registry's and the capability panel's events.
events::ScenarioLoaded scenario_loaded_payload(const SyntheticScenario& sc);
EventDraft scenario_loaded(const events::ScenarioLoaded& loaded);
EventDraft scenario_loaded(const SyntheticScenario& sc);
EventDraft scenario_rejected(std::string dir, std::string reason);
EventDraft capabilities_measured(std::string stream, events::CapabilitiesMeasured m);

// Runs attempts `at_once` at a time, one command of each live attempt in turn (a new attempt
// from `next_plan` takes a finished one's place until it returns none), handing every command to
// `append` in order. `next_seq` is the seq the next event gets, and is advanced. A finished
// attempt is handed to `finished` (held ones included).
Status interleave(const SyntheticScenario& sc, size_t at_once,
                  const std::function<std::optional<SyntheticAttempt>()>& next_plan,
                  uint64_t& next_seq,
                  const std::function<Status(std::vector<EventDraft>&&)>& append,
                  const std::function<void(AttemptHistory&&)>& finished);

}  // namespace aura::app
