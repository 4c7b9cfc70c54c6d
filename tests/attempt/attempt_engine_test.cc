// The attempt engine on a real lab (RocksDB log, blob store, signed t0 package, filetree worlds):
// the state machine refuses every out-of-phase command without touching the log, probes need a
// prediction and spend a budget, evidence and attempts belong to their learner, scripts need an
// authorisation, and the gold and bad interventions get their verdicts end to end.
#include "engine/attempt/attempt_engine.h"

#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <set>

#include "app/lab/views.h"
#include "engine/events/event_types.h"
#include "engine/receipt/receipt.h"
#include "engine/receipt/receipt_format.h"
#include "engine/sign/dsse.h"
#include "tests/attempt/engine_lab.h"

using namespace aura;
using namespace aura::testing;
using attempt::Phase;
namespace fs = std::filesystem;

namespace {

bool same_head(const LogHead& a, const LogHead& b) { return a.seq == b.seq && a.hash == b.hash; }

// Every command, given valid-looking arguments for the gold case.
struct Commands {
  EngineLab& lab;
  std::string id;
  std::string learner = "alice";

  std::map<std::string, std::function<Status()>> all() {
    const scenario::JudgeCase gold = lab.judge("gold");
    auto* e = lab.engine;
    const std::string i = id, l = learner;
    return {
        {"predict", [=] { return e->predict(i, l, "stale-override", "x", 50); }},
        {"probe", [=] { return e->probe(i, l, gold.probe_calls_json[0]).status(); }},
        {"submit", [=] { return e->submit(i, l, gold.ir_json).status(); }},
        {"authorize", [=] { return e->authorize(i, l, std::string(64, 'a')); }},
        {"apply", [=] { return e->apply(i, l).status(); }},
        {"ack", [=] { return e->ack(i, l, "ok"); }},
        {"verify", [=] { return e->verify(i, l).status(); }},
        {"gate", [=] { return e->gate(i, l).status(); }},
        {"receipt", [=] { return e->receipt(i, l).status(); }},
        {"reflect", [=] { return e->reflect(i, l, "learned"); }},
    };
  }
};

Phase phase_of(EngineLab& lab, const std::string& id) {
  auto s = lab.engine->state(id);
  REQUIRE(s.ok());
  return s->phase;
}

// Runs every command but those in `allowed` and checks each is refused with the log unchanged.
void refuse_all_but(EngineLab& lab, Commands& cmds, const std::set<std::string>& allowed) {
  const Phase before = phase_of(lab, cmds.id);
  for (auto& [name, run] : cmds.all()) {
    if (allowed.count(name)) continue;
    CAPTURE(name);
    CAPTURE(attempt::phase_name(before));
    const LogHead head = lab.log->head();
    Status s = run();
    CHECK_FALSE(s.is_ok());
    CHECK(same_head(head, lab.log->head()));
    CHECK(phase_of(lab, cmds.id) == before);
  }
}

}  // namespace

TEST_CASE("attempt: every out-of-phase command is refused and the log is unchanged") {
  EngineLab lab;
  auto& e = *lab.engine;
  auto id = e.start({"alice", std::string(kT0), "learn", 5});
  REQUIRE(id.ok());
  Commands cmds{lab, *id};
  const auto gold = lab.judge("gold");

  CHECK(phase_of(lab, *id) == Phase::kObserve);
  refuse_all_but(lab, cmds, {"predict"});
  REQUIRE(e.predict(*id, "alice", "stale-override", "web2 overrides app_root", 80).is_ok());

  CHECK(phase_of(lab, *id) == Phase::kInspect);
  refuse_all_but(lab, cmds, {"probe", "submit"});
  REQUIRE(e.probe(*id, "alice", gold.probe_calls_json[0]).ok());
  REQUIRE(e.submit(*id, "alice", gold.ir_json).ok());

  CHECK(phase_of(lab, *id) == Phase::kContract);
  refuse_all_but(lab, cmds, {"submit", "apply"});  // authorize of an unknown digest is refused too
  REQUIRE(e.apply(*id, "alice").ok());

  CHECK(phase_of(lab, *id) == Phase::kAck);
  refuse_all_but(lab, cmds, {"ack"});
  REQUIRE(e.ack(*id, "alice", "").is_ok());

  CHECK(phase_of(lab, *id) == Phase::kVerify);
  refuse_all_but(lab, cmds, {"verify"});
  auto v = e.verify(*id, "alice");
  REQUIRE(v.ok());
  CHECK(v->recovered);

  CHECK(phase_of(lab, *id) == Phase::kTransferGate);
  refuse_all_but(lab, cmds, {"gate"});
  auto g = e.gate(*id, "alice");
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->result.verdict == gate::Verdict::kVerified);

  CHECK(phase_of(lab, *id) == Phase::kReceipt);
  refuse_all_but(lab, cmds, {"receipt"});
  auto issued = e.receipt(*id, "alice");
  REQUIRE(issued.ok());
  // A second receipt is refused naming the one issued.
  CHECK(e.receipt(*id, "alice").status().message() ==
        "attempt " + *id + " already has its receipt " + to_hex(issued->receipt.envelope_sha256));

  CHECK(phase_of(lab, *id) == Phase::kReflect);
  refuse_all_but(lab, cmds, {"reflect"});
  REQUIRE(e.reflect(*id, "alice", "the source of truth was stale").is_ok());

  CHECK(phase_of(lab, *id) == Phase::kDone);
  refuse_all_but(lab, cmds, {});
  const LogHead head = lab.log->head();
  CHECK_FALSE(e.abandon(*id, "alice", "too late").is_ok());
  CHECK(same_head(head, lab.log->head()));
  // The live world is gone with the attempt.
  CHECK_FALSE(fs::exists(lab.lab.data() / "worlds" / *id));
}

TEST_CASE("attempt: refusals say what was expected") {
  EngineLab lab;
  auto& e = *lab.engine;
  auto id = e.start({"alice", std::string(kT0), "learn", 5});
  REQUIRE(id.ok());
  const auto gold = lab.judge("gold");

  Status s = e.probe(*id, "alice", gold.probe_calls_json[0]).status();
  CHECK(s.message().find("prediction") != std::string::npos);
  s = e.apply(*id, "alice").status();
  CHECK(s.message().find("is in phase observe; 'apply' needs phase contract") != std::string::npos);
  s = e.predict(*id, "alice", "no-such-hypothesis", "x", 10);
  CHECK(s.message().find("stale-override") != std::string::npos);
  // Each unknown hypothesis is refused naming all of the scenario's, and the nearest when close.
  for (const char* h : {"no-such-hypothesis", "stale_override", "release", "stale-proces"}) {
    CAPTURE(h);
    s = e.predict(*id, "alice", h, "x", 10);
    CHECK(s.code() == ErrorCode::kInvalidArgument);
    CHECK(s.message().find("; its hypotheses: stale-override, bad-release, stale-process") !=
          std::string::npos);
  }
  CHECK(e.predict(*id, "alice", "stale-proces", "x", 10)
            .message()
            .find("(did you mean stale-process?)") != std::string::npos);
  s = e.predict(*id, "alice", "stale-override", "", 10);
  CHECK(s.message().find("expectation is empty") != std::string::npos);
  s = e.predict(*id, "alice", "stale-override", "x", 101);
  CHECK_FALSE(s.is_ok());
  s = e.predict(*id, "alice", "stale-override", std::string("a\x01z"), 10);
  CHECK(s.message().find("control character") != std::string::npos);

  // Unknown scenario, bad learner name, bad mode: nothing is appended.
  const LogHead head = lab.log->head();
  CHECK(e.start({"alice", "no-such-scenario", "learn", 1}).status().code() == ErrorCode::kNotFound);
  for (const char* name : {"no-such-scenario", "t0-config-drfit", "O2"}) {
    CAPTURE(name);
    CHECK(
        e.start({"alice", name, "learn", 1}).status().message().find("; loaded: t0-config-drift") !=
        std::string::npos);
  }
  CHECK(e.start({"alice", "t0-config-drfit", "learn", 1})
            .status()
            .message()
            .find("(did you mean t0-config-drift?)") != std::string::npos);
  CHECK(e.start({"Alice!", std::string(kT0), "learn", 1}).status().code() ==
        ErrorCode::kInvalidArgument);
  CHECK(e.start({"alice", std::string(kT0), "exam", 1}).status().code() ==
        ErrorCode::kInvalidArgument);
  CHECK(e.predict("0123456789abcdef", "alice", "stale-override", "x", 1).code() ==
        ErrorCode::kNotFound);
  CHECK(e.predict("not-an-id", "alice", "stale-override", "x", 1).code() ==
        ErrorCode::kInvalidArgument);
  CHECK(same_head(head, lab.log->head()));
}

TEST_CASE("attempt: an attempt answers only to its learner") {
  EngineLab lab;
  auto& e = *lab.engine;
  auto id = e.start({"alice", std::string(kT0), "learn", 5});
  REQUIRE(id.ok());
  const LogHead head = lab.log->head();
  Status s = e.predict(*id, "mallory", "stale-override", "x", 50);
  CHECK(s.message().find("belongs to learner alice") != std::string::npos);
  CHECK_FALSE(e.abandon(*id, "mallory", "mine now").is_ok());
  CHECK(same_head(head, lab.log->head()));
}

TEST_CASE("attempt: probes spend a bounded budget and unlock evidence for this attempt only") {
  EngineLab lab;
  auto& e = *lab.engine;
  const std::string a = lab.start_and_probe("gold");  // ev-1 unlocked in a
  auto sa = e.state(a);
  REQUIRE(sa.ok());
  CHECK(sa->unlocked == std::set<std::string>{"ev-1"});
  CHECK(sa->spent == 1);

  // A probe's output is the world's file, and it is stored as evidence.
  auto p =
      e.probe(a, "alice", R"({"call":"file.read","params":{"path":"/fleet/group_vars.conf"}})");
  REQUIRE(p.ok());
  CHECK(p->evidence == "ev-2");
  CHECK(p->output.find("app_root") != std::string::npos);

  // A probe outside the catalog's schema is refused, and spends nothing.
  LogHead head = lab.log->head();
  auto bad = e.probe(a, "alice", R"({"call":"file.read","params":{"path":"/../../etc/shadow"}})");
  CHECK(bad.status().code() == ErrorCode::kInvalidArgument);
  bad = e.probe(a, "alice", R"({"call":"shell.exec","params":{}})");
  CHECK(bad.status().code() == ErrorCode::kInvalidArgument);
  CHECK(same_head(head, lab.log->head()));

  // Spend the rest of the budget; the next probe is refused naming it.
  const auto read = R"({"call":"file.read","params":{"path":"/fleet/inventory.conf"}})";
  while (true) {
    auto s = e.state(a);
    REQUIRE(s.ok());
    if (s->spent == s->probe_budget) break;
    REQUIRE(e.probe(a, "alice", read).ok());
  }
  head = lab.log->head();
  auto over = e.probe(a, "alice", read);
  CHECK(over.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(over.status().message().find("budget of 12") != std::string::npos);
  CHECK(same_head(head, lab.log->head()));

  // Attempt b has unlocked nothing: the gold IR's citation of ev-1 is refused there.
  auto b = e.start({"alice", std::string(kT0), "learn", 5});
  REQUIRE(b.ok());
  REQUIRE(e.predict(*b, "alice", "stale-override", "x", 50).is_ok());
  head = lab.log->head();
  auto sub = e.submit(*b, "alice", lab.judge("gold").ir_json);
  CHECK(sub.status().code() == ErrorCode::kInvalidArgument);
  CHECK(sub.status().message().find("$.evidence[0]") != std::string::npos);
  CHECK(same_head(head, lab.log->head()));
}

TEST_CASE("attempt: a probe whose target the driver refuses costs nothing and says why") {
  EngineLab lab;
  auto& e = *lab.engine;
  const std::string a = lab.start_and_probe("gold");  // ev-1, spent 1
  const auto spent_now = [&] {
    auto s = e.state(a);
    REQUIRE(s.ok());
    return s->spent;
  };
  REQUIRE(spent_now() == 1);

  // A folder where a file is read: refused by the driver's own check before anything is read.
  auto dir = e.probe(a, "alice", R"({"call":"file.read","params":{"path":"/fleet"}})");
  REQUIRE_MESSAGE(dir.ok(), dir.status().message());
  CHECK(dir->refused);
  CHECK(dir->cost == 0);
  CHECK(dir->spent == 1);
  CHECK(dir->exit_code != 0);
  CHECK(dir->error == "refused: /fleet: a dir, not a regular file");
  CHECK(spent_now() == 1);
  // The log says so: probe.requested charged 0, probe.completed says refused and why.
  const uint64_t completed_seq = lab.log->head().seq;
  auto completed = lab.log->get(completed_seq);
  auto requested = lab.log->get(completed_seq - 1);
  REQUIRE(completed.ok());
  REQUIRE(requested.ok());
  CHECK(requested->type == events::kProbeRequested);
  CHECK(std::string(requested->payload).find(R"("cost":0,"spent":1})") != std::string::npos);
  CHECK(completed->type == events::kProbeCompleted);
  CHECK(std::string(completed->payload).find(R"(,"refused":true})") != std::string::npos);
  CHECK(std::string(completed->payload).find("not a regular file") != std::string::npos);
  // The learner's event stream shows it too: the reason, and that it was refused.
  auto shown = app::learner_event_json(
      EventView{completed->seq, completed->prev_hash, completed->ts_us, completed->stream,
                completed->type, completed->actor, completed->payload, completed->hash});
  REQUIRE(shown.has_value());
  CHECK(shown->find(R"("error":"refused: /fleet: a dir, not a regular file","refused":true)") !=
        std::string::npos);

  // A missing path and a file where a folder is listed: refused the same way, free.
  auto missing = e.probe(a, "alice", R"({"call":"file.read","params":{"path":"/fleet/nope"}})");
  REQUIRE(missing.ok());
  CHECK(missing->refused);
  CHECK(missing->error == "refused: /fleet/nope: not found");
  auto list =
      e.probe(a, "alice", R"({"call":"dir.list","params":{"path":"/fleet/inventory.conf"}})");
  REQUIRE(list.ok());
  CHECK(list->refused);
  CHECK(list->error == "refused: /fleet/inventory.conf: a file, not a folder");
  CHECK(spent_now() == 1);

  // A regular file still costs its catalog cost.
  auto file =
      e.probe(a, "alice", R"({"call":"file.read","params":{"path":"/fleet/inventory.conf"}})");
  REQUIRE(file.ok());
  CHECK_FALSE(file->refused);
  CHECK(file->cost == 1);
  CHECK(file->spent == 2);
  CHECK(spent_now() == 2);
  auto st = e.state(a);
  REQUIRE(st.ok());
  CHECK(st->probes == 5);
  CHECK(st->probes_refused == 3);

  // Free, but bounded: past kMaxRefusedProbes a probe is refused before it runs, and nothing is
  // appended; a probe that would be charged is refused the same way (the attempt is capped).
  for (uint32_t i = 3; i < attempt::kMaxRefusedProbes; ++i) {
    auto r = e.probe(a, "alice", R"({"call":"file.read","params":{"path":"/fleet"}})");
    REQUIRE(r.ok());
    CHECK(r->refused);
  }
  const uint64_t head = lab.log->head().seq;
  auto over = e.probe(a, "alice", R"({"call":"file.read","params":{"path":"/fleet"}})");
  REQUIRE(!over.ok());
  CHECK(over.status().message().find("the most an attempt may have") != std::string::npos);
  CHECK(lab.log->head().seq == head);
  CHECK(spent_now() == 2);
}

TEST_CASE("attempt: a script runs only after its exact digest is authorised") {
  EngineLab lab;
  auto& e = *lab.engine;
  const std::string id = lab.start_and_probe("gold");
  const std::string script = "#!/bin/sh\\nrm -f /fleet/host_vars/web2.conf\\n";
  const std::string ir =
      R"({"v":1,"hypothesis":"stale-override","claim":"web2's host vars are stale",)"
      R"("evidence":["ev-1"],"falsifier":"web2.conf has no app_root",)"
      R"("actions":[{"script":")" +
      script +
      R"(","target":{"role":"web"}}],)"
      R"("postconditions":["fleet-healthy"],"invariants":[],)"
      R"("rollback":[{"call":"journal.undo","params":{}}]})";
  auto rev = e.submit(id, "alice", ir);
  REQUIRE_MESSAGE(rev.ok(), rev.status().message());
  auto st = e.state(id);
  REQUIRE(st.ok());
  REQUIRE(st->scripts.size() == 1);
  const std::string sha = st->scripts.begin()->first;
  CHECK(st->scripts.begin()->second == attempt::ScriptStatus::kPendingFeedback);

  LogHead head = lab.log->head();
  auto refused = e.apply(id, "alice");
  CHECK(refused.status().message().find("not authorised") != std::string::npos);
  CHECK(refused.status().message().find(sha) != std::string::npos);
  CHECK(same_head(head, lab.log->head()));

  CHECK_FALSE(e.authorize(id, "alice", std::string(64, '0')).is_ok());
  REQUIRE(e.authorize(id, "alice", sha).is_ok());
  CHECK(e.state(id)->scripts.at(sha) == attempt::ScriptStatus::kPendingExecution);
  CHECK_FALSE(e.authorize(id, "alice", sha).is_ok());  // once

  // The filetree driver has no script runner: the apply records that, it never fakes a run.
  auto applied = e.apply(id, "alice");
  REQUIRE(applied.ok());
  CHECK(applied->aborted);
  CHECK(applied->failed == 1);
  bool recorded = false;
  REQUIRE(lab.log
              ->read_stream(attempt::stream_of(id), 1,
                            [&](const EventView& ev) {
                              if (ev.type == events::kActionCompleted) {
                                recorded =
                                    ev.payload.find(sha) != std::string_view::npos &&
                                    ev.payload.find("\"exit_code\":-1") != std::string_view::npos;
                              }
                              return true;
                            })
              .is_ok());
  CHECK(recorded);
  CHECK(e.state(id)->scripts.at(sha) == attempt::ScriptStatus::kExecuted);
}

TEST_CASE("attempt: a package changed after the start is refused") {
  EngineLab lab;
  auto& e = *lab.engine;
  auto id = e.start({"alice", std::string(kT0), "learn", 5});
  REQUIRE(id.ok());
  REQUIRE(e.predict(*id, "alice", "stale-override", "x", 50).is_ok());
  write_file(lab.package_dir / "worlds" / "primary" / "extra.txt", "not signed\n");
  const LogHead head = lab.log->head();
  auto p = e.probe(*id, "alice", lab.judge("gold").probe_calls_json[0]);
  CHECK_FALSE(p.ok());
  CHECK(p.status().message().find("scenario package") != std::string::npos);
  CHECK(same_head(head, lab.log->head()));
}

TEST_CASE("attempt: gold is VERIFIED with a receipt that verifies offline and by replay") {
  EngineLab lab;
  auto& e = *lab.engine;
  const std::string id = lab.up_to_gate("gold");
  std::vector<std::string> seen;
  auto g = e.gate(id, "alice", [&](gate::Property p, gate::Outcome s) {
    seen.push_back(std::string(gate::property_name(p)) + ":" + std::string(gate::outcome_name(s)));
  });
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(seen == std::vector<std::string>{"primary:pass", "twin:pass", "control:pass", "repeat:pass",
                                         "reversal:pass"});
  CHECK(g->result.recovered);
  CHECK(g->result.verdict == gate::Verdict::kVerified);
  // Every fresh gate world is gone.
  CHECK_FALSE(fs::exists(lab.lab.data() / "worlds" / id / ("gate-" + std::to_string(g->gate_seq))));

  auto r = e.receipt(id, "alice");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  const NoteVerifierKey pinned = lab.keys->lab_verifier();
  receipt::ReceiptReport offline = receipt::verify_receipt(r->receipt.envelope, pinned);
  for (const auto& f : offline.failures) MESSAGE(f.field << ": " << f.what);
  CHECK(offline.ok());
  CHECK(offline.attempt == id);
  CHECK(offline.verdict == "VERIFIED");
  receipt::ReceiptReport replay = receipt::verify_receipt(
      r->receipt.envelope, pinned, receipt::ReplayContext{lab.log, lab.blobs});
  CHECK(replay.ok());
  CHECK(replay.replayed);
  // The stored blob is the envelope, and the state names it.
  CHECK(e.state(id)->receipt_sha256 == to_hex(r->receipt.envelope_sha256));

  // The receipt binds what the gate's worlds were built from, recomputed from the log: the
  // filetree worlds run no program, each world's image is its layers' lines of SHA256SUMS, the
  // lab build is the engine's, the evidence the IR cites is the probe's output.
  const std::string& d = r->receipt.document;
  CHECK(d.find(R"("lab_build_digest":")" + std::string(64, 'b') + '"') != std::string::npos);
  CHECK(d.find(R"("binaries":{})") != std::string::npos);
  CHECK(d.find(R"("world_images":[{"world":"primary","layers":[)") != std::string::npos);
  CHECK(d.find(R"("evidence":[{"id":"ev-1","kind":"probe.output","sha256":")") !=
        std::string::npos);

  // A single-field edit of this real receipt, re-signed with the pinned key itself, fails
  // naming the field's hash; under the old signature it fails the signature.
  struct Edit {
    std::string from, to, field;
  };
  const std::string& doc = r->receipt.document;
  const std::vector<Edit> edits = {
      {R"("id":"t0-config-drift")", R"("id":"t0-config-drifT")", "hashes.scenario"},
      {R"("kernel_release":")", R"("kernel_release":"0)", "hashes.environment"},
      {R"("evidence":[{"id":"ev-1")", R"("evidence":[{"id":"ev-2")", "hashes.evidence"},
      {R"("key":"app_root")", R"("key":"port")", "hashes.actions"},
      {R"("property":"twin","status":"pass")", R"("property":"twin","status":"fail")",
       "hashes.gate"},
      {"journal.undo", "journal.redo", "hashes.rollback"},
  };
  for (const auto& ed : edits) {
    CAPTURE(ed.field);
    const size_t at = doc.find(ed.from);
    REQUIRE(at != std::string::npos);
    std::string edited = doc;
    edited.replace(at, ed.from.size(), ed.to);
    const auto rep = receipt::verify_receipt(
        dsse_sign(receipt::receipt_format::kPayloadType, edited, lab.keys->lab_signer()), pinned);
    CHECK_FALSE(rep.ok());
    bool named = false;
    for (const auto& f : rep.failures) named = named || f.field == ed.field;
    if (!named)
      for (const auto& f : rep.failures) MESSAGE(f.field << ": " << f.what);
    CHECK(named);
  }
}

TEST_CASE("attempt: bad recovers the primary only and is RECOVERED_UNPROVEN; no receipt") {
  EngineLab lab;
  auto& e = *lab.engine;
  SUBCASE("judge mode runs every property") {
    const std::string id = lab.up_to_gate("bad", "alice", "judge");
    auto g = e.gate(id, "alice");
    REQUIRE_MESSAGE(g.ok(), g.status().message());
    CHECK(g->result.verdict == gate::Verdict::kRecoveredUnproven);
    CHECK(g->result.recovered);
    for (const auto& p : g->result.properties) CHECK(p.status != gate::Outcome::kNotRun);
    CHECK(g->result.properties[1].status == gate::Outcome::kFail);  // the twin
    CHECK(g->result.properties[1].reason.find("fleet-healthy") != std::string::npos);
    CHECK(phase_of(lab, id) == Phase::kReflect);
    auto r = e.receipt(id, "alice");
    CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
    // The refusal says why, not only that the phase is wrong.
    CHECK(r.status().message() == "attempt " + id +
                                      ": verdict RECOVERED_UNPROVEN; receipts are issued only "
                                      "for VERIFIED");
  }
  SUBCASE("learn mode stops at the first failing property") {
    const std::string id = lab.up_to_gate("bad");
    auto g = e.gate(id, "alice");
    REQUIRE(g.ok());
    // The bad fix hand-edits the rendered file: the primary's promised invariant fails first.
    CHECK(g->result.properties[0].status == gate::Outcome::kFail);
    for (size_t i = 1; i < 5; ++i) CHECK(g->result.properties[i].status == gate::Outcome::kNotRun);
    CHECK(g->result.verdict == gate::Verdict::kRecoveredUnproven);
  }
}

TEST_CASE("attempt: the live world persists across commands and is the one probed") {
  EngineLab lab;
  auto& e = *lab.engine;
  const std::string id = lab.up_to_gate("gold");
  // After the gold apply, web2's host vars no longer override app_root on the live world.
  auto st = e.state(id);
  REQUIRE(st.ok());
  CHECK(st->recovered_live);
  CHECK(fs::exists(lab.lab.data() / "worlds" / id / "live"));
  REQUIRE(e.abandon(id, "alice", "stopping here").is_ok());
  CHECK(phase_of(lab, id) == Phase::kDone);
  CHECK_FALSE(fs::exists(lab.lab.data() / "worlds" / id));
}

TEST_CASE("attempt: reset rebuilds the live world and sends the attempt back to its contract") {
  EngineLab lab;
  auto& e = *lab.engine;
  // Not before the prediction, not after a verdict.
  auto early = e.start({"alice", std::string(kT0), "learn", 3});
  REQUIRE(early.ok());
  auto refused = e.reset(*early, "alice", "");
  CHECK(refused.status().message().find("'reset' needs phase from inspect to transfer_gate") !=
        std::string::npos);
  // In transfer_gate, with the gold fix applied and verified on the live world.
  const std::string id = lab.up_to_gate("gold");
  auto st = e.state(id);
  REQUIRE(st.ok());
  REQUIRE(st->recovered_live);
  const auto head = lab.log->head().seq;
  auto reset = e.reset(id, "alice", "start the world over");
  REQUIRE_MESSAGE(reset.ok(), reset.status().message());
  CHECK(*reset == "destroyed");
  st = e.state(id);
  REQUIRE(st.ok());
  CHECK(st->phase == Phase::kInspect);
  CHECK_FALSE(st->applied);
  CHECK_FALSE(st->recovered_live);
  CHECK(st->revision == 1);  // the IR is kept; it has not run on the new world
  auto ev = lab.log->get(head + 1);
  REQUIRE(ev.ok());
  CHECK(ev->type == events::kWorldReset);
  CHECK(std::string(ev->payload).find(R"("previous":"destroyed")") != std::string::npos);
  // Apply and verify are refused until the IR is submitted and runs again; then the fresh
  // world recovers as the old one did.
  CHECK_FALSE(e.verify(id, "alice").ok());
  CHECK_FALSE(e.apply(id, "alice").ok());
  auto rev = e.submit(id, "alice", lab.judge("gold").ir_json);
  REQUIRE_MESSAGE(rev.ok(), rev.status().message());
  CHECK(*rev == 2);
  REQUIRE(e.apply(id, "alice").ok());
  REQUIRE(e.ack(id, "alice", "").is_ok());
  auto v = e.verify(id, "alice");
  REQUIRE(v.ok());
  st = e.state(id);
  REQUIRE(st.ok());
  CHECK(st->recovered_live);
  auto g = e.gate(id, "alice", nullptr);
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->result.verdict == aura::gate::Verdict::kVerified);
  CHECK_FALSE(e.reset(id, "alice", "").ok());  // a verdict is final
  REQUIRE(e.abandon(early.value(), "alice", "done").is_ok());
}

TEST_CASE("attempt: apply ends with the readback, which the learner then acknowledges") {
  EngineLab lab;
  auto& e = *lab.engine;
  const std::string id = lab.start_and_probe("gold");
  REQUIRE(e.submit(id, "alice", lab.judge("gold").ir_json).ok());
  auto applied = e.apply(id, "alice");
  REQUIRE_MESSAGE(applied.ok(), applied.status().message());

  // The apply's own events end with the supervisor's readback, before the phase moves to ack:
  // the learner sees it before confirming anything.
  const attempt::AckResult& shown = applied->readback;
  REQUIRE(shown.readback_seq != 0);
  CHECK(applied->readback_error.empty());
  CHECK(shown.as_requested);
  REQUIRE(shown.lines.size() == 2);
  CHECK(shown.lines[0].readback.observed.find("app_root=(unset)") != std::string::npos);
  auto ev = lab.log->get(shown.readback_seq);
  REQUIRE(ev.ok());
  CHECK(ev->type == events::kAckReadback);
  CHECK(ev->actor == "supervisor");
  auto phase = lab.log->get(shown.readback_seq + 1);
  REQUIRE(phase.ok());
  CHECK(phase->type == events::kAttemptPhase);
  CHECK(lab.log->head().seq == shown.readback_seq + 1);
  auto st = e.state(id);
  REQUIRE(st.ok());
  CHECK(st->phase == Phase::kAck);
  CHECK(st->readback_seq == shown.readback_seq);
  CHECK(st->readback_as_requested);

  // A seq that is not the latest readback is refused, and changes nothing.
  const LogHead head = lab.log->head();
  Status wrong = e.ack(id, "alice", "", nullptr, shown.readback_seq - 1);
  CHECK(wrong.code() == ErrorCode::kFailedPrecondition);
  CHECK(wrong.message().find("its latest is at seq " + std::to_string(shown.readback_seq)) !=
        std::string::npos);
  CHECK(same_head(head, lab.log->head()));

  // The acknowledgement cites the readback that was shown; nothing else is recorded.
  attempt::AckResult acked;
  Status s = e.ack(id, "alice", "as I meant", &acked, shown.readback_seq);
  REQUIRE_MESSAGE(s.is_ok(), s.message());
  CHECK(acked.readback_seq == shown.readback_seq);
  CHECK(acked.as_requested);
  REQUIRE(acked.lines.size() == shown.lines.size());
  CHECK(acked.lines[0].readback.observed == shown.lines[0].readback.observed);
  auto ack = lab.log->get(head.seq + 1);
  REQUIRE(ack.ok());
  CHECK(ack->type == events::kAttemptAcknowledged);
  CHECK(std::string(ack->payload).find(R"("readback":)" + std::to_string(shown.readback_seq)) !=
        std::string::npos);
  CHECK(e.state(id)->phase == Phase::kVerify);
}

TEST_CASE("attempt: ack refuses a readback that differs from the request, and one not shown") {
  EngineLab lab;
  auto& e = *lab.engine;
  const std::string id = lab.start_and_probe("gold");
  REQUIRE(e.submit(id, "alice", lab.judge("gold").ir_json).ok());
  auto applied = e.apply(id, "alice");
  REQUIRE(applied.ok());
  REQUIRE(applied->readback.as_requested);

  // From the host, between apply and ack, the override the fix removed comes back.
  const fs::path vars =
      lab.lab.data() / "worlds" / id / "live" / "root" / "fleet" / "host_vars" / "web2.conf";
  REQUIRE(fs::exists(vars));
  const std::string fixed = read_file(vars);
  CHECK(fixed.find("app_root=") == std::string::npos);
  write_file(vars, fixed + "app_root=/srv/www/release-1\n");

  attempt::AckResult r;
  Status s = e.ack(id, "alice", "looks right", &r);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == ErrorCode::kFailedPrecondition);
  CHECK(s.message().find("ACK failed") != std::string::npos);
  // The difference is named: the key the action unset is set again, and the converged config
  // no longer matches its source of truth.
  CHECK(s.message().find("action 0 (vars.unset): web2: app_root is still set "
                         "(/srv/www/release-1); requested unset") != std::string::npos);
  CHECK(s.message().find("action 1 (fleet.converge): web2: /nodes/web2/app.conf does not hold") !=
        std::string::npos);
  CHECK_FALSE(r.as_requested);
  REQUIRE(r.lines.size() == 2);
  CHECK(r.lines[0].readback.observed.find("app_root=/srv/www/release-1") != std::string::npos);
  // The fresh readback is recorded, the acknowledgement is not, and the attempt stays in ack.
  auto ev = lab.log->get(r.readback_seq);
  REQUIRE(ev.ok());
  CHECK(ev->type == events::kAckReadback);
  CHECK(ev->actor == "supervisor");
  CHECK(std::string(ev->payload).find(R"("as_requested":false)") != std::string::npos);
  CHECK(lab.log->head().seq == r.readback_seq);
  CHECK(e.state(id)->phase == Phase::kAck);
  // Acknowledging the differing readback by its seq is refused the same way.
  attempt::AckResult again;
  s = e.ack(id, "alice", "", &again, r.readback_seq);
  CHECK(s.message().find("ACK failed") != std::string::npos);
  CHECK(e.state(id)->phase == Phase::kAck);

  // Put back as the action left it: the world reads back as requested now, but that is not
  // what the learner was last shown, so it is recorded and shown, not acknowledged.
  write_file(vars, fixed);
  attempt::AckResult fresh;
  s = e.ack(id, "alice", "", &fresh);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("not the readback you were shown") != std::string::npos);
  CHECK(s.message().find("--readback " + std::to_string(fresh.readback_seq)) != std::string::npos);
  CHECK(fresh.as_requested);
  CHECK(lab.log->head().seq == fresh.readback_seq);
  CHECK(e.state(id)->phase == Phase::kAck);

  // Acknowledging that one moves on, citing it.
  attempt::AckResult ok;
  s = e.ack(id, "alice", "", &ok, fresh.readback_seq);
  REQUIRE_MESSAGE(s.is_ok(), s.message());
  CHECK(ok.readback_seq == fresh.readback_seq);
  CHECK(ok.lines[0].readback.observed.find("app_root=(unset)") != std::string::npos);
  auto acked = lab.log->get(fresh.readback_seq + 1);
  REQUIRE(acked.ok());
  CHECK(acked->type == events::kAttemptAcknowledged);
  CHECK(std::string(acked->payload).find(R"("readback":)" + std::to_string(ok.readback_seq)) !=
        std::string::npos);
  CHECK(e.state(id)->phase == Phase::kVerify);
}
