#include "app/lab/judge.h"

#include <simdjson.h>
#include <sodium.h>

#include <chrono>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"
#include "engine/scenario/manifest.h"

namespace aura::app {
namespace fs = std::filesystem;
namespace {

using attempt::AttemptEngine;

constexpr std::string_view kJudgeLearner = "judge";

Status write_receipt(const fs::path& path, std::string_view envelope) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) return Status::io("create " + path.parent_path().string() + ": " + ec.message());
  return file_io::replace_file_durably(path.parent_path(), path, envelope, 0644);
}

// Runs one judge case as a learner would, command by command.
Result<JudgeCaseRun> judge_case(AttemptEngine& e, const scenario::JudgeCase& judged,
                                const std::string& scenario_id, uint64_t seed,
                                const fs::path& receipts_dir, const JudgeProgress& progress) {
  const scenario::JudgeCase& c = judged.for_seed(seed);
  const std::string learner(kJudgeLearner);
  JudgeCaseRun run;
  run.name = c.name;
  run.expected = c.expect_verdict;
  attempt::StartRequest req{learner, scenario_id, "judge", seed};
  AURA_ASSIGN_OR_RETURN(run.attempt, e.start(req));
  const std::string& id = run.attempt;
  if (progress.case_started) progress.case_started(id);
  // The IR's own hypothesis is the prediction: judge mode tests the fix, not the guess.
  simdjson::dom::parser parser;
  std::string_view hypothesis;
  if (parser.parse(c.ir_json).get_object()["hypothesis"].get_string().get(hypothesis)) {
    return Status::corruption("judge case " + c.name + ": the IR has no hypothesis");
  }
  AURA_RETURN_IF_ERROR(
      e.predict(id, learner, hypothesis, "judge mode: the " + c.name + " intervention", 100));
  for (const auto& call : c.probe_calls_json) {
    auto p = e.probe(id, learner, call);
    if (!p.ok()) return p.status().with_context("judge case " + c.name + " probe");
  }
  AURA_RETURN_IF_ERROR(e.submit(id, learner, c.ir_json).status());
  auto st = e.state(id);
  if (!st.ok()) return st.status();
  for (const auto& [sha, status] : st->scripts) AURA_RETURN_IF_ERROR(e.authorize(id, learner, sha));
  AURA_RETURN_IF_ERROR(e.apply(id, learner).status());
  AURA_RETURN_IF_ERROR(e.ack(id, learner, "judge mode: the readback is confirmed"));
  AURA_RETURN_IF_ERROR(e.verify(id, learner).status());
  const auto gate_start = std::chrono::steady_clock::now();
  auto g = e.gate(id, learner, progress.gate);
  if (!g.ok()) return g.status();
  run.gate_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - gate_start).count();
  run.gate = g->result;
  run.verdict = std::string(gate::verdict_name(g->result.verdict));
  run.gate_json = gate::result_json(g->result);
  if (g->result.verdict == gate::Verdict::kVerified) {
    auto r = e.receipt(id, learner);
    if (!r.ok()) return r.status();
    run.receipt_sha256 = to_hex(r->receipt.envelope_sha256);
    run.receipt_path = fs::absolute(receipts_dir / (id + ".receipt.json"));
    AURA_RETURN_IF_ERROR(write_receipt(run.receipt_path, r->receipt.envelope));
  }
  AURA_RETURN_IF_ERROR(e.reflect(id, learner, "judge mode run of the " + c.name + " case"));
  return run;
}

}  // namespace

bool JudgeReport::all_expected() const {
  for (const auto& c : cases)
    if (!c.as_expected()) return false;
  return true;
}

Result<JudgeReport> judge(Session& session, const JudgeRequest& req,
                          const JudgeProgress& progress) {
  return judge(*session.engine, req, progress);
}

Result<JudgeReport> judge(AttemptEngine& e, const JudgeRequest& req,
                          const JudgeProgress& progress) {
  if (req.cases != "all" && req.cases != "gold" && req.cases != "bad") {
    return Status::invalid("--case must be gold, bad or all");
  }
  JudgeReport report;
  AURA_ASSIGN_OR_RETURN(report.scenario_id, e.scenario_named(req.scenario));
  auto m = e.scenario_manifest(report.scenario_id);
  if (!m.ok()) return m.status();
  // One seed for every case, so gold and bad face the same worlds.
  if (req.seed) {
    report.seed = *req.seed;
  } else {
    randombytes_buf(&report.seed, sizeof report.seed);
    report.seed >>= 1;
  }
  // Bad first, then gold on worlds built afresh from the package (every case starts its own
  // attempt: a new live world, new gate worlds).
  for (const char* name : {"bad", "gold"}) {
    const auto* c = m->find_judge(name);
    if (c == nullptr || (req.cases != "all" && req.cases != name)) continue;
    auto run = judge_case(e, *c, report.scenario_id, report.seed, req.receipts_dir, progress);
    if (!run.ok()) return run.status().with_context("judge case " + c->name);
    if (progress.case_done) progress.case_done(*run);
    report.cases.push_back(std::move(run).value());
  }
  return report;
}

}  // namespace aura::app
