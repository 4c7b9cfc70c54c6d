// The judge: runs a scenario's judge cases (the bad fix first, then the gold one) as a learner
// would, command by command, each on its own attempt and fresh worlds, on one seed for every
// case, and saves each VERIFIED case's receipt. Returns what happened; reports progress through
// callbacks and never prints.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/lab/session.h"
#include "engine/gate/gate_runner.h"

namespace aura::app {

struct JudgeRequest {
  std::string scenario;                // an id or a short name ("O1")
  std::optional<uint64_t> seed;        // unset: a random one
  std::string cases = "all";           // "gold", "bad" or "all"
  std::filesystem::path receipts_dir;  // where VERIFIED cases' receipts are written
};

struct JudgeCaseRun {
  std::string name;  // "bad", "gold"
  std::string attempt;
  std::string verdict;
  std::string expected;
  gate::GateResult gate;
  std::string gate_json;    // gate::result_json: recovered, verdict, the five properties
  double gate_seconds = 0;  // wall time of the TransferGate (every property's fresh worlds)
  std::string receipt_sha256;
  std::filesystem::path receipt_path;  // absolute; empty unless VERIFIED
  bool as_expected() const { return verdict == expected; }
};

struct JudgeReport {
  std::string scenario_id;
  uint64_t seed = 0;
  std::vector<JudgeCaseRun> cases;
  bool all_expected() const;
};

struct JudgeProgress {
  std::function<void(const std::string& attempt)> case_started;  // each case's attempt, started
  std::function<void(gate::Property, gate::Outcome)> gate;       // each property as it is decided
  std::function<void(const JudgeCaseRun&)> case_done;            // each case as it ends
};

// Refuses a `cases` other than gold, bad or all, and an unknown scenario, before anything runs.
Result<JudgeReport> judge(Session& session, const JudgeRequest& req,
                          const JudgeProgress& progress = {});
// The same on an engine of its own (the daemon's judge engine, beside the learners').
Result<JudgeReport> judge(attempt::AttemptEngine& engine, const JudgeRequest& req,
                          const JudgeProgress& progress = {});

}  // namespace aura::app
