// `aura attempt start|predict|probe|submit|authorize|apply|ack|verify|gate|receipt|reflect|
// abandon|reset|catalog` and `aura judge`: the attempt engine's commands (docs/ATTEMPTS.md).
// Every attempt command ends with the attempt's next step, whether it ran or was refused.
// `attempt list` and `attempt show` read the projections (projection_commands.cc).

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "app/cli/attempt_next.h"
#include "app/cli/catalog_text.h"
#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/cli/daemon_forward.h"
#include "app/lab/judge.h"
#include "app/lab/session.h"
#include "app/lab/views.h"
#include "engine/attempt/attempt_engine.h"
#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/crypto/sha256.h"
#include "engine/gate/feedback.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/package/package.h"
#include "engine/scenario/manifest.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

using attempt::AttemptEngine;

// Opens this command's session on the lab in --data and --keys.
Result<std::unique_ptr<app::Session>> open_session(const Invocation& inv, bool build_digest) {
  return app::open_session(folders_of(inv),
                           {.build_digest = build_digest ? app::lab_build_digest() : ""});
}

std::string learner_of(const Invocation& inv) {
  return inv.get("learner", std::string(kDefaultLearner));
}

// A refused or failed command: the reason, then the attempt's next step (when its state can be
// read), so a refusal is never a dead end.
int refuse(const Invocation& inv, const Status& s, const Result<attempt::AttemptState>& st,
           int exit_code = 1) {
  return fail_with_next(inv, s, st.ok() ? &*st : nullptr, learner_of(inv), exit_code);
}

// A usage error before any session: the attempt's state is read from the log read-only.
int refuse_usage(const Invocation& inv, const Status& s) {
  return refuse(inv, s, read_attempt_state(inv, inv.positional[0]), 2);
}

// Runs `body` on an opened session and reports its status, then the next step.
int with_engine(Invocation& inv, bool build_digest,
                const std::function<Status(AttemptEngine&, JsonWriter&)>& body) {
  auto session = open_session(inv, build_digest);
  if (!session.ok()) {
    return refuse(inv, session.status(), read_attempt_state(inv, inv.positional[0]));
  }
  JsonWriter json;
  json.boolean("ok", true);
  Status s = body(*(*session)->engine, json);
  auto st = (*session)->engine->state(inv.positional[0]);
  if (!s.is_ok()) return refuse(inv, s, st);
  if (st.ok()) {
    std::cout << "attempt " << st->id << " is now in phase " << attempt::phase_name(st->phase)
              << "\n";
    print_next(std::cout, *st, learner_of(inv));
    json.str("phase", attempt::phase_name(st->phase)).str("next", app::next_step(*st));
  }
  inv.emit_json(json.done());
  return 0;
}

Result<std::string> text_flag(const Invocation& inv, const std::string& name, bool required) {
  if (!inv.has(name)) {
    if (required) return Status::invalid("--" + name + " is required");
    return std::string();
  }
  return inv.get(name);
}

// ---- commands ----

int attempt_start(Invocation& inv) {
  attempt::StartRequest req;
  req.learner = learner_of(inv);
  req.scenario_id = inv.positional[0];
  req.mode = inv.get("mode", "learn");
  if (inv.has("seed")) {
    auto seed = inv.get_u64("seed", 0);
    if (!seed.ok()) return inv.fail(seed.status(), 2);
    req.seed = *seed;
  }
  auto session = open_session(inv, false);
  if (!session.ok()) return inv.fail(session.status());
  auto id = (*session)->engine->start(req);
  if (!id.ok()) return inv.fail(id.status());
  auto st = (*session)->engine->state(*id);
  if (!st.ok()) return inv.fail(st.status());
  std::cout << "started attempt " << *id << " on " << st->scenario_id << " " << st->scenario_version
            << " (learner " << st->learner << ", mode " << st->mode << ", seed " << st->seed
            << ", probe budget " << st->probe_budget << ")\n";
  auto m = attempt::attempt_manifest(*(*session)->writer.blobs, *st);
  if (m.ok()) {
    std::cout << "\n" << m->title << "\n\n" << m->briefing << "\n\nCompeting hypotheses:\n";
    for (const auto& h : m->hypotheses) std::cout << "  " << h.id << ": " << h.text << "\n";
    std::cout << "\n";
  }
  print_next(std::cout, *st, learner_of(inv));
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("attempt", *id)
                    .str("scenario", st->scenario_id)
                    .num("seed", st->seed)
                    .str("phase", attempt::phase_name(st->phase))
                    .str("next", app::next_step(*st))
                    .done());
  return 0;
}

int attempt_predict(Invocation& inv) {
  auto hypothesis = text_flag(inv, "hypothesis", true);
  auto expect = text_flag(inv, "expect", true);
  if (!hypothesis.ok()) return refuse_usage(inv, hypothesis.status());
  if (!expect.ok()) return refuse_usage(inv, expect.status());
  auto confidence = inv.get_u64("confidence", 50);
  if (!confidence.ok()) return refuse_usage(inv, confidence.status());
  if (*confidence > 100) return refuse_usage(inv, Status::invalid("--confidence must be 0..100"));
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter&) {
    return e.predict(inv.positional[0], learner_of(inv), *hypothesis, *expect,
                     uint32_t(*confidence));
  });
}

int attempt_probe(Invocation& inv) {
  std::string call;
  if (inv.positional.size() > 1) {
    call = inv.positional[1];
  } else if (inv.has("call-file")) {
    auto bytes = read_small_file(inv.get("call-file"), scenario::kMaxCallJsonBytes);
    if (!bytes.ok()) return refuse_usage(inv, bytes.status());
    call = std::move(bytes).value();
  } else {
    return refuse_usage(inv, Status::invalid("give the probe call as CALL_JSON or --call-file "
                                             "FILE (aura attempt catalog " +
                                             inv.positional[0] + " lists the probes)"));
  }
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter& json) -> Status {
    auto r = e.probe(inv.positional[0], learner_of(inv), call);
    if (!r.ok()) return r.status();
    if (r->refused) {
      // The lab's own check refused the target before reading anything: say why, and that
      // nothing was spent; the output is that one line, so it is not printed again.
      std::cout << r->evidence << " " << r->error << "\nnothing was read and nothing was spent ("
                << r->spent << " of " << r->budget << " spent, " << r->budget - r->spent
                << " left)\n";
    } else {
      std::cout << r->evidence << " (exit " << r->exit_code << (r->truncated ? ", truncated" : "")
                << (r->error.empty() ? "" : ", " + r->error) << "; cost " << r->cost << ", spent "
                << r->spent << " of " << r->budget << ")\n"
                << r->output;
      if (!r->output.empty() && r->output.back() != '\n') std::cout << "\n";
    }
    json.str("evidence", r->evidence)
        .num("exit_code", int64_t(r->exit_code))
        .boolean("truncated", r->truncated)
        .boolean("refused", r->refused)
        .str("error", r->error)
        .num("cost", uint64_t(r->cost))
        .num("spent", uint64_t(r->spent))
        .num("budget", uint64_t(r->budget));
    return Status::ok();
  });
}

int attempt_submit(Invocation& inv) {
  auto ir = read_small_file(inv.positional[1], intervention::kMaxIrBytes);
  if (!ir.ok()) return refuse_usage(inv, ir.status().with_context("InterventionIR"));
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter& json) -> Status {
    auto rev = e.submit(inv.positional[0], learner_of(inv), *ir);
    if (!rev.ok()) return rev.status();
    std::cout << "InterventionIR revision " << *rev << " accepted (sha256 "
              << to_hex(intervention::intervention_digest(*ir)) << ")\n";
    auto st = e.state(inv.positional[0]);
    if (st.ok()) {
      for (const auto& [sha, status] : st->scripts) {
        std::cout << "  script " << sha << ": " << attempt::script_status_name(status)
                  << " (authorise with: aura attempt authorize " << st->id << " " << sha << ")\n";
      }
    }
    json.num("revision", uint64_t(*rev));
    return Status::ok();
  });
}

int attempt_authorize(Invocation& inv) {
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter&) {
    return e.authorize(inv.positional[0], learner_of(inv), inv.positional[1]);
  });
}

// The readback the learner confirms: one line per action, with what differs from its request.
// `seq_key` names the readback's seq in `json`.
void print_readback(const attempt::AckResult& r, JsonWriter& json,
                    std::string_view seq_key = "readback") {
  JsonArray actions;
  for (const auto& l : r.lines) {
    const auto& rb = l.readback;
    std::cout << "  action " << l.index << " " << l.call << "\n";
    std::string observed = rb.observed;
    while (!observed.empty() && observed.back() == '\n') observed.pop_back();
    size_t at = 0;
    while (at <= observed.size() && !observed.empty()) {
      const size_t nl = std::min(observed.find('\n', at), observed.size());
      std::cout << "    " << (rb.typed ? "read back: " : "not compared: ")
                << observed.substr(at, nl - at) << "\n";
      at = nl + 1;
    }
    for (const auto& d : rb.differences) std::cout << "    DIFFERS: " << d << "\n";
    JsonArray diffs;
    for (const auto& d : rb.differences) diffs.str(d);
    actions.raw(JsonWriter()
                    .num("index", uint64_t(l.index))
                    .str("call", l.call)
                    .boolean("typed", rb.typed)
                    .str("observed", rb.observed)
                    .raw("differences", diffs.done())
                    .done());
  }
  std::cout << (r.as_requested ? "every action's effect reads back as it requested"
                               : "the readback differs from what the actions requested")
            << " (ack.readback at seq " << r.readback_seq << ")\n";
  json.num(seq_key, r.readback_seq)
      .boolean("as_requested", r.as_requested)
      .raw("actions", actions.done());
}

int attempt_apply(Invocation& inv) {
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter& json) -> Status {
    auto r = e.apply(inv.positional[0], learner_of(inv));
    if (!r.ok()) return r.status();
    for (const auto& line : r->lines) std::cout << "  " << line << "\n";
    std::cout << r->actions << " action(s) ran, " << r->failed << " failed"
              << (r->aborted ? "; the apply stopped at a host failure" : "") << "\n";
    json.num("actions", uint64_t(r->actions))
        .num("failed", uint64_t(r->failed))
        .boolean("aborted", r->aborted);
    // The readback the apply ended with: what the learner acknowledges next.
    if (r->readback.readback_seq != 0) {
      std::cout << "the supervisor read back what each action left:\n";
      JsonWriter readback;
      print_readback(r->readback, readback, "seq");
      json.raw("readback", readback.done());
    } else {
      std::cout << "the supervisor could not read back what the actions left (" << r->readback_error
                << "); 'ack' reads back\n";
      json.str("readback_error", r->readback_error);
    }
    return Status::ok();
  });
}

int attempt_ack(Invocation& inv) {
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter& json) -> Status {
    std::optional<uint64_t> seq;
    if (inv.has("readback")) {
      auto given = inv.get_u64("readback", 0);
      if (!given.ok()) return given.status();
      seq = *given;
    }
    attempt::AckResult r;
    Status s = e.ack(inv.positional[0], learner_of(inv), inv.get("note", ""), &r, seq);
    if (r.readback_seq != 0) print_readback(r, json);
    if (s.is_ok()) {
      std::cout << "acknowledged: the readback above (ack.readback at seq " << r.readback_seq
                << ") is confirmed\n";
    }
    return s;
  });
}

int attempt_verify(Invocation& inv) {
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter& json) -> Status {
    auto r = e.verify(inv.positional[0], learner_of(inv));
    if (!r.ok()) return r.status();
    JsonArray checks;
    for (const auto& [id, ok] : r->checks) {
      std::cout << "  " << (ok ? "ok    " : "FAIL  ") << id << "\n";
      checks.raw(JsonWriter().str("check", id).boolean("ok", ok).done());
    }
    std::cout << (r->recovered ? "the live world recovered" : "the live world did not recover")
              << "\n";
    json.boolean("recovered", r->recovered).raw("checks", checks.done());
    return Status::ok();
  });
}

// A learner is told, for a property that failed, the check that decided it and what was
// observed in words the grader made from pass or fail alone (gate::Finding), never the reason's
// world id; a judge run, which shows its worlds, prints the reason.
void print_gate(const gate::GateResult& g, bool learner) {
  for (const auto& p : g.properties) {
    std::cout << "  " << gate::property_name(p.property) << ": " << gate::outcome_name(p.status);
    if (learner && p.status == gate::Outcome::kFail) {
      std::cout << "\n    " << gate::finding_text(p.finding) << "\n";
      continue;
    }
    std::cout << (p.reason.empty() || learner ? "" : " (" + p.reason + ")") << "\n";
  }
  std::cout << "verdict: " << gate::verdict_name(g.verdict) << "\n";
}

void gate_progress(gate::Property p, gate::Outcome s) {
  std::cerr << "gate: " << gate::property_name(p) << " " << gate::outcome_name(s) << "\n";
}

int attempt_gate(Invocation& inv) {
  return with_engine(inv, true, [&](AttemptEngine& e, JsonWriter& json) -> Status {
    auto r = e.gate(inv.positional[0], learner_of(inv), gate_progress);
    if (!r.ok()) return r.status();
    print_gate(r->result, true);
    JsonArray findings;
    for (const auto& p : r->result.properties) {
      if (p.status != gate::Outcome::kFail) continue;
      findings.raw(JsonWriter()
                       .str("property", gate::property_name(p.property))
                       .str("check", p.finding.check)
                       .str("description", p.finding.description)
                       .str("observed", p.finding.observed)
                       .done());
    }
    json.num("gate", r->gate_seq)
        .str("verdict", gate::verdict_name(r->result.verdict))
        .raw("result", gate::result_json(r->result))
        .raw("findings", findings.done());
    return Status::ok();
  });
}

Status write_receipt(const fs::path& out, std::string_view envelope) {
  const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
  return file_io::replace_file_durably(dir, out, envelope, 0644);
}

int attempt_receipt(Invocation& inv) {
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter& json) -> Status {
    auto r = e.receipt(inv.positional[0], learner_of(inv));
    if (!r.ok()) return r.status();
    const std::string sha = to_hex(r->receipt.envelope_sha256);
    std::cout << "receipt " << sha << " issued (receipt.issued at seq " << r->event_seq
              << "; events " << r->receipt.first_seq << ".." << r->receipt.last_seq
              << ", checkpoint size " << r->receipt.checkpoint_size << ")\n";
    if (inv.has("out")) {
      AURA_RETURN_IF_ERROR(write_receipt(inv.get("out"), r->receipt.envelope));
      std::cout << "written to " << inv.get("out") << "\n";
    }
    json.str("receipt_sha256", sha).num("seq", r->event_seq);
    return Status::ok();
  });
}

int attempt_reflect(Invocation& inv) {
  auto text = text_flag(inv, "text", true);
  if (!text.ok()) return refuse_usage(inv, text.status());
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter&) {
    return e.reflect(inv.positional[0], learner_of(inv), *text);
  });
}

int attempt_abandon(Invocation& inv) {
  auto reason = text_flag(inv, "reason", true);
  if (!reason.ok()) return refuse_usage(inv, reason.status());
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter&) {
    return e.abandon(inv.positional[0], learner_of(inv), *reason);
  });
}

int attempt_reset(Invocation& inv) {
  auto reason = text_flag(inv, "reason", false);
  if (!reason.ok()) return refuse_usage(inv, reason.status());
  return with_engine(inv, false, [&](AttemptEngine& e, JsonWriter& json) -> Status {
    auto previous = e.reset(inv.positional[0], learner_of(inv), *reason);
    if (!previous.ok()) return previous.status();
    std::cout << "the live world was reset: the old one " << *previous
              << "; a fresh one was built from the package\n";
    json.str("previous", *previous);
    return Status::ok();
  });
}

// The attempt's catalog, read-only: what it may probe and change, and how to name things.
int attempt_catalog(Invocation& inv) {
  const std::string& id = inv.positional[0];
  if (!attempt::is_valid_attempt_id(id)) {
    return inv.fail(Status::invalid("'" + id +
                                    "' is not an attempt ID (16 lowercase hex digits; 'aura "
                                    "attempt list' shows them)"),
                    2);
  }
  const auto failed = [&](const Status& s) {
    return fail_with_next(inv, s, nullptr, learner_of(inv), 1);
  };
  auto log = open_reader(inv);
  if (!log.ok()) return failed(log.status());
  auto dd = DataDir::open_reader(inv.data_dir);
  if (!dd.ok()) return failed(dd.status());
  auto blobs = BlobStore::open(dd->blob_dir());
  if (!blobs.ok()) return failed(blobs.status());
  auto st = attempt::replay_attempt(**log, id);
  if (!st.ok()) return failed(st.status());
  auto m = attempt::attempt_manifest(*blobs, *st);
  if (!m.ok()) return refuse(inv, m.status(), st);
  const std::string catalog = app::attempt_catalog_json(*m, *st);
  auto text = catalog_text(catalog);
  if (!text.ok()) return inv.fail(text.status());
  std::cout << *text << "\n";
  print_next(std::cout, *st, learner_of(inv));
  inv.emit_json("{\"ok\":true," + catalog.substr(1));
  return 0;
}

// ---- judge ----

int judge(Invocation& inv) {
  // A running daemon holds the data folder: the run goes to its queue.
  if (auto forwarded = forward_judge(inv)) return *forwarded;
  app::JudgeRequest req;
  req.scenario = inv.positional[0];
  if (inv.has("seed")) {
    auto s = inv.get_u64("seed", 0);
    if (!s.ok()) return inv.fail(s.status(), 2);
    req.seed = *s;
  }
  req.cases = inv.get("case", "all");
  if (req.cases != "all" && req.cases != "gold" && req.cases != "bad") {
    return inv.fail(Status::invalid("--case must be gold, bad or all"), 2);
  }
  // Saved where --out says, else in DATA/receipts.
  req.receipts_dir = inv.has("out") ? fs::path(inv.get("out")) : inv.data_dir / "receipts";
  // First use: the data and keys folders are made and the bundled scenarios loaded.
  if (int code = setup_if_new(inv); code != 0) return code;
  // The judge owns its attempts from start to end: their live worlds end with this process.
  auto session = app::open_session(
      folders_of(inv), {.build_digest = app::lab_build_digest(), .persist_live_worlds = false});
  if (!session.ok()) return inv.fail(session.status());
  app::JudgeProgress progress;
  progress.gate = gate_progress;
  progress.case_done = [](const app::JudgeCaseRun& run) {
    std::cout << "case " << run.name << " (attempt " << run.attempt << "):\n";
    print_gate(run.gate, false);
    char took[64];
    std::snprintf(took, sizeof took, "  gate: %.1f s on fresh worlds\n", run.gate_seconds);
    std::cout << took;
    std::cout << "case " << run.name << ": " << run.verdict << ", expected " << run.expected
              << (run.as_expected() ? " -- as expected" : " -- NOT as expected") << "\n";
    if (!run.receipt_path.empty())
      std::cout << "  receipt written to " << run.receipt_path.string() << "\n";
  };
  auto report = app::judge(**session, req, progress);
  if (!report.ok()) return inv.fail(report.status());
  JsonArray cases;
  JsonWriter out;
  out.str("scenario", report->scenario_id).num("seed", report->seed);
  for (const app::JudgeCaseRun& run : report->cases) {
    const std::string entry = JsonWriter()
                                  .str("case", run.name)
                                  .str("attempt", run.attempt)
                                  .str("verdict", run.verdict)
                                  .str("expected", run.expected)
                                  .str("receipt", run.receipt_path.string())
                                  .str("receipt_sha256", run.receipt_sha256)
                                  .raw("gate", run.gate_json)
                                  .real("gate_seconds", run.gate_seconds)
                                  .done();
    cases.raw(entry);
    out.raw(run.name, entry);
  }
  const bool all_expected = report->all_expected();
  inv.emit_json(out.boolean("ok", all_expected).raw("cases", cases.done()).done());
  return all_expected ? 0 : 1;
}

Flag learner_flag() {
  return {"learner", "NAME",
          "the learner ([a-z][a-z0-9_-]{0,31}; default " + std::string(kDefaultLearner) + ")"};
}

}  // namespace

void register_attempt_commands(CommandTable& r) {
  const std::string phases =
      "Phases: observe -> predict -> inspect -> contract -> apply -> ack -> verify -> "
      "transfer_gate -> receipt -> reflect -> done (docs/ATTEMPTS.md).\n"
      "A command that does not fit the attempt's phase is refused and changes nothing.";
  r.add({"attempt start",
         "SCENARIO",
         "start an attempt on a loaded scenario",
         "Re-verifies the package, builds the live primary world and prints the briefing and "
         "the competing hypotheses.\n" +
             phases,
         {learner_flag(),
          {"mode", "MODE", "learn (default) or judge (the gate runs every property)"},
          {"seed", "N", "the worlds' seed (default random)"}},
         1,
         1,
         attempt_start});
  r.add({"attempt predict",
         "ATTEMPT",
         "record the prediction (before any probe)",
         phases,
         {learner_flag(),
          {"hypothesis", "ID", "one of the scenario's hypothesis ids"},
          {"expect", "TEXT", "what you expect the probes to show"},
          {"confidence", "N", "0..100 (default 50)"}},
         1,
         1,
         attempt_predict});
  r.add({"attempt probe",
         "ATTEMPT [CALL_JSON]",
         "run one catalog probe on the live world",
         "The call is {\"call\":NAME,\"params\":{...}} from the scenario's probe catalog ('aura "
         "attempt catalog\nATTEMPT' lists each probe, its parameters, cost and the path prefixes "
         "it may read); its cost is\nspent from the budget. Its output becomes evidence ev-N of "
         "this attempt.\nCosts nothing: a call the catalog refuses (a path outside the allowed "
         "prefixes, a bad\nparameter), and a probe whose target the lab's own check refuses "
         "before reading anything\n(not a regular file, not a folder, missing, a symlink leading "
         "out of the prefixes): it says why.\n" +
             phases,
         {learner_flag(), {"call-file", "FILE", "read the call from FILE"}},
         1,
         2,
         attempt_probe});
  r.add({"attempt submit",
         "ATTEMPT IR_FILE",
         "submit an InterventionIR (a new revision)",
         "Validated against the scenario and this attempt's unlocked evidence "
         "(docs/formats/intervention-ir.md);\na refused IR changes nothing and each error names "
         "its JSON path.\n" +
             phases,
         {learner_flag()},
         2,
         2,
         attempt_submit});
  r.add({"attempt authorize",
         "ATTEMPT SHA256",
         "authorise one script of the current IR",
         "Scripts (the gray path) run only after their exact SHA-256 is authorised.\n" + phases,
         {learner_flag()},
         2,
         2,
         attempt_authorize});
  r.add({"attempt apply",
         "ATTEMPT",
         "run the IR's actions on the live world and read back what they left",
         "The actions run in order; then the supervisor reads back, on the live world, what each\n"
         "left (a file's digest, mode and owner; a vars key's value; a service's state, main pid\n"
         "and restarts; a converge's counts), records it (ack.readback) and prints it, with what\n"
         "differs from each request. Look at it, then acknowledge it with 'aura attempt ack'.\n\n" +
             phases,
         {learner_flag()},
         1,
         1,
         attempt_apply});
  r.add(
      {"attempt ack",
       "ATTEMPT",
       "confirm the readback the apply printed",
       "Acknowledges the latest readback of what the apply did (printed by 'aura attempt apply'\n"
       "and shown on the attempt's page; --readback SEQ names it, and is refused when it is not\n"
       "the latest). The supervisor reads the live world back again first: when both are as the\n"
       "actions requested, your acknowledgement citing the readback is recorded and the attempt\n"
       "moves to verify. Otherwise the fresh readback is recorded and printed and the attempt\n"
       "stays in ack: when it differs from what was requested the command fails naming each\n"
       "difference ('aura attempt reset' rebuilds the live world); when it holds but is not what\n"
       "you were shown, acknowledge the new one.\n\n" +
           phases,
       {learner_flag(),
        {"note", "TEXT", "an optional note"},
        {"readback", "SEQ", "the seq of the readback you acknowledge (default: the latest)"}},
       1,
       1,
       attempt_ack});
  r.add({"attempt verify",
         "ATTEMPT",
         "run the primary's checks on the live world",
         phases,
         {learner_flag()},
         1,
         1,
         attempt_verify});
  r.add({"attempt gate",
         "ATTEMPT",
         "run the TransferGate on fresh worlds and grade it",
         "Primary, twin(s), control, repeat and reversal, each on worlds built fresh from the "
         "package.\nIn learn mode the gate stops at the first failing property (the rest are "
         "not_run).\n" +
             phases,
         {learner_flag()},
         1,
         1,
         attempt_gate});
  r.add({"attempt receipt",
         "ATTEMPT",
         "issue the signed receipt of a VERIFIED attempt",
         "Verify it with 'aura receipt verify FILE [--replay]'.\n" + phases,
         {learner_flag(), {"out", "FILE", "also write the DSSE envelope to FILE"}},
         1,
         1,
         attempt_receipt});
  r.add({"attempt reflect",
         "ATTEMPT",
         "record the reflection; the attempt is done",
         phases,
         {learner_flag(), {"text", "TEXT", "what you learned"}},
         1,
         1,
         attempt_reflect});
  r.add({"attempt abandon",
         "ATTEMPT",
         "end the attempt in any phase but done",
         phases,
         {learner_flag(), {"reason", "TEXT", "why"}},
         1,
         1,
         attempt_abandon});
  r.add({"attempt reset",
         "ATTEMPT",
         "rebuild the live world from the package (same seed), e.g. after a crash broke it",
         "From inspect to transfer_gate (before a verdict). The live world is destroyed, or, when "
         "it can no\nlonger be opened (a crash killed its processes), discarded: what it left "
         "is reaped and recorded.\nA fresh one is built with the attempt's seed; world.reset "
         "records what became of the old one.\nThe attempt goes back to inspect: probe the fresh "
         "world, then submit (the same IR or a revision)\nand apply. Probes spent stay spent.",
         {learner_flag(), {"reason", "TEXT", "why (optional)"}},
         1,
         1,
         attempt_reset});
  r.add({"attempt catalog",
         "ATTEMPT",
         "what this attempt may probe and change: probes, actions, target terms, checks",
         "The scenario's hypotheses; each probe with its cost and parameters (type, required or\n"
         "optional, allowed path prefixes and excluded ones, values, bounds) and the probe budget\n"
         "left; each action with its parameters; the target terms a target parameter takes (role\n"
         "or selector, their kind and what they name); the postcondition and invariant checks an\n"
         "InterventionIR may promise. Only what a learner may see: never the worlds, the checks'\n"
         "parameters or the judge's answers. Reads the log read-only (works beside a running\n"
         "lab). With --json the last line is the catalog as the API serves it.\n" +
             phases,
         {},
         1,
         1,
         attempt_catalog});
  r.add({"judge",
         "SCENARIO",
         "run the scenario's judge-mode gold and bad interventions",
         "Bad first, then gold, each on worlds built afresh, and each as a learner would (start, "
         "predict,\nprobes, submit, apply, ack, verify, gate, receipt when VERIFIED, reflect) with "
         "the gate running\nevery property. Exit 0 only when every case gets the verdict its "
         "manifest expects.\nWith --json the last line has bad and gold, each {case, attempt, "
         "verdict, expected, receipt (the\nsaved receipt's path, or empty), receipt_sha256, gate: "
         "{recovered, verdict, properties: [{property,\nstatus, reason, cited}]}}, and the same "
         "objects in cases.\nSCENARIO is a loaded id, or its short name (O1 for o1-fleet-drift). "
         "On first use (no lab key in\n--keys) the lab is set up as 'aura setup' does, with the "
         "bundled scenarios of --scenarios.\nWhen the lab's daemon holds --data, the run is queued "
         "on it and followed (without --seed,\n--case or --out: the daemon runs every case and "
         "keeps receipts in DATA/receipts).",
         {{"seed", "N", "the worlds' seed (default random, the same for every case)"},
          {"case", "NAME", "gold, bad or all (default)"},
          {"out", "DIR",
           "write each issued receipt to DIR/<attempt>.receipt.json (default DATA/receipts)"},
          {"scenarios", "DIR",
           "on first use, the packages to set the lab up with (default: the bundled ones)"}},
         1,
         1,
         judge});
}

}  // namespace aura::cli
