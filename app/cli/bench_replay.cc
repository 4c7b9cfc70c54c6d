// `aura bench replay`: builds a log of N attempts' worth of events (docs/ATTEMPTS.md) on a real
// scenario package and measures rebuilding every lab projection from it against its peer
// measured in the same run (one raw read_range pass over the same events, no projecting), and
// issuing and verifying receipts (offline and with replay). Figures are printed, never asserted.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <functional>
#include <iostream>
#include <span>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "engine/blob/blob_store.h"
#include "engine/blob/evidence_ref.h"
#include "engine/common/json_writer.h"
#include "engine/events/event_types.h"
#include "engine/gate/grader.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/keys/key_store.h"
#include "engine/log/event_log.h"
#include "engine/receipt/receipt.h"
#include "engine/scenario/manifest.h"
#include "projections/lab/lab_projections.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// User + system CPU seconds of this process so far. On a shared machine the wall time of a
// single-threaded phase includes waiting for a core; its CPU time does not.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string ref_json(EvidenceRef ref, std::string id) {
  ref.id = std::move(id);
  return evidence_ref_json(ref);
}

// One gate.fact the gate records, before its seq and outcome are known.
struct FactTemplate {
  gate::Property property;
  std::string world;
  gate::Stage stage;
  std::string check;  // a check id, or gate::kFingerprintCheck
  bool examined_ok;   // false only for `before` facts, which the grader does not examine
};

// The scenario every attempt works: a real package's manifest and its judge gold IR (stored as
// blobs, so receipts issue and replay re-grades), the facts a passing gate records, and the few
// other blobs the attempts' refs point at (reused, so the bench stays small on disk).
struct BenchScenario {
  scenario::Manifest manifest;
  std::string dir, probe_call;
  gate::GateSpec spec;
  std::vector<FactTemplate> facts;
  size_t primary_post = 0, twin_check = 0;  // facts turned to fail for the other verdicts
  EvidenceRef manifest_ref, ir_ref;
  std::vector<EvidenceRef> probe_outputs, action_outputs, receipts;
  std::vector<std::string> action_calls;  // the gold IR's actions, minified
};

bool requires_check(const gate::GateSpec& spec, const gate::GateSpec::Check& c,
                    scenario::WorldRole role) {
  return std::find(c.roles.begin(), c.roles.end(), role) != c.roles.end() ||
         std::find(spec.promised.begin(), spec.promised.end(), c.id) != spec.promised.end();
}

Result<EvidenceRef> put_blob(BlobStore& store, std::string_view bytes, std::string kind) {
  auto info = store.put(as_bytes(bytes));
  if (!info.ok()) return info.status();
  return EvidenceRef{"x", info->sha256, std::move(kind), info->bytes};
}

Result<BenchScenario> load_scenario(const fs::path& dir, BlobStore& store) {
  BenchScenario s;
  s.dir = dir.string();
  auto bytes = read_small_file(dir / "manifest.json", 1 << 20);
  if (!bytes.ok()) return bytes.status().with_context("--scenario");
  auto m = scenario::parse_manifest(*bytes);
  if (!m.ok()) return m.status().with_context(dir.string() + "/manifest.json");
  s.manifest = std::move(m).value();
  const scenario::JudgeCase* gold = s.manifest.find_judge("gold");
  if (gold == nullptr) return Status::invalid(s.dir + ": the manifest has no judge gold case");
  s.probe_call = gold->probe_calls_json.empty() ? R"({"call":"file.read","params":{"path":"/"}})"
                                                : gold->probe_calls_json.front();
  intervention::IrContext context{&s.manifest, {"ev-1", "ev-2", "ev-3"}};
  auto ir = intervention::parse_intervention(gold->ir_json, context);
  if (!ir.ok()) return ir.status().with_context(s.dir + ": the gold IR");
  for (const auto& a : ir->actions) {
    if (!a.is_script) s.action_calls.push_back(scenario::call_json(a.call));
  }
  std::vector<std::string> promised = ir->postconditions;
  promised.insert(promised.end(), ir->invariants.begin(), ir->invariants.end());
  s.spec = gate::GateSpec::from(s.manifest, promised);

  // The facts a passing gate records, in the order a gate run takes them. `before` facts sit in
  // slots no property examines (the fleet was broken before the fix).
  using gate::Property;
  using gate::Stage;
  using scenario::WorldRole;
  auto checks_for = [&](WorldRole role) {
    std::vector<const gate::GateSpec::Check*> out;
    for (const auto& c : s.spec.checks) {
      if (requires_check(s.spec, c, role)) out.push_back(&c);
    }
    return out;
  };
  auto run = [&](Property p, const std::string& world, WorldRole role, Stage stage) {
    const auto checks = checks_for(role);
    if (checks.empty()) return;
    s.facts.push_back({p, world, Stage::kBefore, checks.front()->id, false});
    for (const auto* c : checks) {
      if (p == Property::kPrimary && c->kind == scenario::CheckKind::kPostcondition &&
          s.primary_post == 0) {
        s.primary_post = s.facts.size();
      }
      if (p == Property::kTwin && s.twin_check == 0) s.twin_check = s.facts.size();
      s.facts.push_back({p, world, stage, c->id, true});
    }
  };
  run(Property::kPrimary, s.spec.primary_world, WorldRole::kPrimary, Stage::kAfterApply);
  for (const auto& w : s.spec.twin_worlds) {
    run(Property::kTwin, w, WorldRole::kTwin, Stage::kAfterApply);
  }
  run(Property::kControl, s.spec.control_world, WorldRole::kControl, Stage::kAfterApply);
  const std::string fp(gate::kFingerprintCheck);
  s.facts.push_back({Property::kRepeat, s.spec.primary_world, Stage::kAfterApply, fp, true});
  s.facts.push_back({Property::kRepeat, s.spec.primary_world, Stage::kAfterRepeat, fp, true});
  for (const auto* c : checks_for(WorldRole::kPrimary)) {
    s.facts.push_back({Property::kRepeat, s.spec.primary_world, Stage::kAfterRepeat, c->id, true});
  }
  s.facts.push_back({Property::kReversal, s.spec.primary_world, Stage::kBefore, fp, true});
  s.facts.push_back({Property::kReversal, s.spec.primary_world, Stage::kAfterRollback, fp, true});

  auto add = [&](std::vector<EvidenceRef>& into, int n, const std::string& kind,
                 size_t size) -> Status {
    for (int i = 0; i < n; ++i) {
      std::string content = kind + " " + std::to_string(i) + "\n";
      for (size_t k = content.size(); k < size; ++k) {
        content += char('a' + splitmix64(k * 131 + uint64_t(i) * 7 + kind.size()) % 26);
      }
      auto r = put_blob(store, content, kind);
      if (!r.ok()) return r.status();
      into.push_back(*r);
    }
    return Status::ok();
  };
  auto manifest_ref = put_blob(store, *bytes, "scenario.manifest");
  if (!manifest_ref.ok()) return manifest_ref.status();
  s.manifest_ref = *manifest_ref;
  auto ir_ref = put_blob(store, gold->ir_json, "intervention.ir");
  if (!ir_ref.ok()) return ir_ref.status();
  s.ir_ref = *ir_ref;
  AURA_RETURN_IF_ERROR(add(s.probe_outputs, 16, "probe.output", 1500));
  AURA_RETURN_IF_ERROR(add(s.action_outputs, 4, "action.output", 300));
  AURA_RETURN_IF_ERROR(add(s.receipts, 2, "receipt.dsse", 9000));
  return s;
}

// One attempt's events, produced one at a time so several attempts can interleave. `next` is told
// the seq its event will get (the bench is the only appender), so payloads cite earlier seqs as
// the engine's do; the gate's properties and verdict are what gate::grade says of its facts.
class AttemptScript {
 public:
  enum class Outcome { kVerified, kUnproven, kNotRecovered };

  // `hold_for_receipt`: stop after a VERIFIED gate (phase receipt), for a real receipt later.
  AttemptScript(uint64_t n, const BenchScenario& sc, bool hold_for_receipt)
      : n_(n), sc_(sc), hold_(hold_for_receipt) {
    id_ = hex64(splitmix64(n) | 1);
    stream_ = "attempt/" + id_;
    const uint64_t r = splitmix64(n ^ 0x5eed);
    outcome_ = hold_ || r % 10 < 5 ? Outcome::kVerified
                                   : (r % 10 < 8 ? Outcome::kUnproven : Outcome::kNotRecovered);
    with_script_ = !hold_ && r % 7 == 0;
    using K = Step::Kind;
    steps_ = {{K::kStarted},
              {K::kPhase, "observe", "predict"},
              {K::kPredicted},
              {K::kPhase, "predict", "inspect"}};
    for (int p = 1; p <= 3; ++p)
      steps_.insert(steps_.end(), {{K::kProbe, "", "", p}, {K::kOutput, "", "", p}});
    steps_.insert(steps_.end(), {{K::kSubmitted, "", "", 1}, {K::kPhase, "inspect", "contract"}});
    steps_.push_back(with_script_ ? Step{K::kAuthorized} : Step{K::kSubmitted, "", "", 2});
    steps_.push_back({K::kPhase, "contract", "apply"});
    for (size_t a = 0; a < sc_.action_calls.size(); ++a)
      steps_.push_back({K::kAction, "", "", int(a)});
    steps_.insert(steps_.end(), {{K::kApplied},
                                 {K::kPhase, "apply", "ack"},
                                 {K::kAcknowledged},
                                 {K::kPhase, "ack", "verify"},
                                 {K::kVerifyFact, "", "", 0},
                                 {K::kVerifyFact, "", "", 1},
                                 {K::kVerified},
                                 {K::kPhase, "verify", "transfer_gate"},
                                 {K::kGateStarted}});
    for (size_t f = 0; f < sc_.facts.size(); ++f) steps_.push_back({K::kFact, "", "", int(f)});
    for (int p = 0; p < 5; ++p) steps_.push_back({K::kProperty, "", "", p});
    steps_.push_back({K::kVerdict});  // pushes the tail, once the grader has spoken
  }

  const std::string& id() const { return id_; }
  bool done() const { return steps_.empty(); }
  // Held for a receipt, and the gate said VERIFIED.
  bool awaiting_receipt() const { return hold_ && result_.verdict == gate::Verdict::kVerified; }

  EventDraft next(uint64_t seq) {
    const Step step = steps_.front();
    steps_.pop_front();
    return make(step, seq);
  }

  // The events after a real receipt was issued for a held attempt.
  std::vector<EventDraft> after_receipt(const receipt::IssuedReceipt& r, const EvidenceRef& blob) {
    return {ev(events::kReceiptIssued, "engine",
               R"(,"receipt_sha256":")" + to_hex(r.envelope_sha256) + R"(","first_seq":)" +
                   std::to_string(r.first_seq) + R"(,"last_seq":)" + std::to_string(r.last_seq) +
                   R"(,"checkpoint_size":)" + std::to_string(r.checkpoint_size) + R"(,"refs":[)" +
                   ref_json(blob, "receipt") + "]"),
            phase("receipt", "reflect"), reflected(), phase("reflect", "done")};
  }

 private:
  struct Step {
    enum class Kind {
      kStarted,
      kPhase,
      kPredicted,
      kProbe,
      kOutput,
      kSubmitted,
      kAuthorized,
      kAction,
      kApplied,
      kAcknowledged,
      kVerifyFact,
      kVerified,
      kGateStarted,
      kFact,
      kProperty,
      kVerdict,
      kReceipt,
      kReflected
    };
    Kind kind;
    const char* from = "";
    const char* to = "";
    int i = 0;
  };

  std::string head() const { return R"({"v":1,"attempt":")" + id_ + "\""; }
  std::string learner() const { return "learner:l" + std::to_string(n_ % 500); }
  EventDraft ev(const char* type, const std::string& actor, const std::string& members) const {
    return {stream_, type, actor, head() + members + "}"};
  }
  EventDraft phase(const char* from, const char* to) const {
    return ev(events::kAttemptPhase, "engine",
              std::string(R"(,"from":")") + from + R"(","to":")" + to + "\"");
  }
  EventDraft reflected() const {
    return ev(events::kAttemptReflected, learner(), R"(,"text":"the twin drifted the same way")");
  }
  int revision() const { return with_script_ ? 1 : 2; }
  std::string fingerprint(gate::Stage stage) const {
    // Equal where the fix is idempotent and the rollback restores the world.
    const bool before = stage == gate::Stage::kBefore || stage == gate::Stage::kAfterRollback;
    return to_hex(sha256(id_ + (before ? " before" : " after")));
  }

  EventDraft make(const Step& s, uint64_t seq) {
    using K = Step::Kind;
    const std::string ir_hash = to_hex(sc_.ir_ref.sha256);
    const std::string script_hash = to_hex(sc_.action_outputs[n_ % 4].sha256);
    switch (s.kind) {
      case K::kStarted: {
        const auto& m = sc_.manifest;
        return ev(events::kAttemptStarted, learner(),
                  R"(,"learner":"l)" + std::to_string(n_ % 500) + R"(","mode":")" +
                      (n_ % 10 == 9 ? "judge" : "learn") + R"(","seed":)" +
                      std::to_string(splitmix64(n_ + 17)) + R"(,"scenario":{"id":")" + m.id +
                      R"(","version":")" + m.version + R"(","package_digest":")" +
                      to_hex(sha256(m.id + " " + m.version)) + R"(","manifest_sha256":")" +
                      to_hex(sc_.manifest_ref.sha256) +
                      R"(","publisher":"aura.publisher/bench"},"probe_budget":)" +
                      std::to_string(m.probe_budget) + R"(,"refs":[)" +
                      ref_json(sc_.manifest_ref, "manifest") + "]");
      }
      case K::kPhase:
        return phase(s.from, s.to);
      case K::kPredicted:
        return ev(events::kAttemptPredicted, learner(),
                  R"(,"hypothesis":")" + sc_.manifest.hypotheses[n_ % 2].id +
                      R"(","expect":"web2 serves the release again","confidence":)" +
                      std::to_string(40 + n_ % 60));
      case K::kProbe:
        return ev(events::kProbeRequested, learner(),
                  R"(,"probe":)" + std::to_string(s.i) + R"(,"call":)" + sc_.probe_call +
                      R"(,"cost":1,"spent":)" + std::to_string(s.i));
      case K::kOutput: {
        const std::string id = "ev-" + std::to_string(s.i);
        return ev(events::kProbeCompleted, "supervisor",
                  R"(,"probe":)" + std::to_string(s.i) + R"(,"evidence":")" + id +
                      R"(","exit_code":0,"truncated":)" + (s.i == 3 ? "true" : "false") +
                      R"(,"error":"","resolved":["/fleet/host_vars/web2.conf"],"refs":[)" +
                      ref_json(sc_.probe_outputs[(n_ * 3 + uint64_t(s.i)) % 16], id) + "]");
      }
      case K::kSubmitted: {
        // Attempts without a script revise their contract once (revision 2), same IR.
        const std::string scripts =
            with_script_ ? R"([{"sha256":")" + script_hash + R"(","status":"pending_feedback"}])"
                         : "[]";
        return ev(events::kInterventionSubmitted, learner(),
                  R"(,"revision":)" + std::to_string(s.i) + R"(,"ir_sha256":")" + ir_hash +
                      R"(","scripts":)" + scripts + R"(,"refs":[)" +
                      ref_json(sc_.ir_ref, "ir-" + std::to_string(s.i)) + "]");
      }
      case K::kAuthorized:
        return ev(events::kScriptAuthorized, learner(),
                  R"(,"revision":1,"sha256":")" + script_hash + "\"");
      case K::kAction:
        return ev(events::kActionCompleted, "supervisor",
                  R"(,"world":"live","stage":"apply","index":)" + std::to_string(s.i) +
                      R"(,"call":)" + sc_.action_calls[size_t(s.i)] +
                      R"(,"exit_code":0,"error":"","resolved":["/fleet/host_vars/web2.conf"],)" +
                      R"("refs":[)" +
                      ref_json(sc_.action_outputs[(n_ + uint64_t(s.i)) % 4],
                               "act-" + std::to_string(s.i + 1)) +
                      "]");
      case K::kApplied:
        return ev(events::kApplyCompleted, "supervisor",
                  R"(,"revision":)" + std::to_string(revision()) + R"(,"actions":)" +
                      std::to_string(sc_.action_calls.size()) + R"(,"failed":0)");
      case K::kAcknowledged:
        return ev(events::kAttemptAcknowledged, learner(), R"(,"note":"")");
      case K::kVerifyFact:
        verify_facts_.push_back(seq);
        return ev(events::kVerifyFact, "supervisor",
                  R"(,"check":")" + sc_.spec.checks[size_t(s.i) % sc_.spec.checks.size()].id +
                      R"(","kind":"postcondition","ok":)" +
                      (outcome_ == Outcome::kNotRecovered ? "false" : "true") +
                      R"(,"observed":"200 OK")");
      case K::kVerified:
        return ev(events::kAttemptVerified, "engine",
                  R"(,"recovered":)" +
                      std::string(outcome_ == Outcome::kNotRecovered ? "false" : "true") +
                      R"(,"facts":[)" + std::to_string(verify_facts_[0]) + "," +
                      std::to_string(verify_facts_[1]) + "]");
      case K::kGateStarted:
        gate_seq_ = seq;
        return ev(events::kGateStarted, "engine",
                  R"(,"revision":)" + std::to_string(revision()) + R"(,"ir_sha256":")" + ir_hash +
                      R"(","stop_at_first_failure":false,"environment":{"kernel_release":"6.1.0",)"
                      R"("lab_build_digest":")" +
                      ir_hash + R"(","sandbox_profile_digest":")" + ir_hash +
                      R"(","capability_snapshot_digest":")" + ir_hash +
                      R"("},"capabilities":{"driver":"filetree"})");
      case K::kFact: {
        const FactTemplate& t = sc_.facts[size_t(s.i)];
        gate::Fact f{seq, t.property, t.world, t.stage, t.check, t.examined_ok, ""};
        if ((outcome_ == Outcome::kNotRecovered && size_t(s.i) == sc_.primary_post) ||
            (outcome_ == Outcome::kUnproven && size_t(s.i) == sc_.twin_check)) {
          f.ok = false;
        }
        const bool fp = t.check == gate::kFingerprintCheck;
        if (fp) f.value = fingerprint(t.stage);
        facts_.push_back(f);
        return ev(events::kGateFact, "supervisor",
                  R"(,"gate":)" + std::to_string(gate_seq_) + R"(,"property":")" +
                      std::string(gate::property_name(t.property)) + R"(","world":")" + t.world +
                      R"(","stage":")" + std::string(gate::stage_name(t.stage)) + R"(","check":")" +
                      t.check + R"(","ok":)" + (f.ok ? "true" : "false") + R"(,"observed":")" +
                      (f.ok ? "ok" : "failed") + "\"" +
                      (fp ? R"(,"value":")" + f.value + "\"" : ""));
      }
      case K::kProperty: {
        if (s.i == 0) result_ = gate::grade(sc_.spec, facts_);
        const gate::PropertyResult& p = result_.properties[size_t(s.i)];
        std::string cited;
        for (uint64_t c : p.cited) cited += (cited.empty() ? "" : ",") + std::to_string(c);
        std::string reason;
        json_append_string(reason, p.reason);
        return ev(events::kGateProperty, "engine",
                  R"(,"gate":)" + std::to_string(gate_seq_) + R"(,"property":")" +
                      std::string(gate::property_name(p.property)) + R"(","status":")" +
                      std::string(gate::outcome_name(p.status)) + R"(","reason":)" + reason +
                      R"(,"cited":[)" + cited + "]");
      }
      case K::kVerdict: {
        const bool verified = result_.verdict == gate::Verdict::kVerified;
        if (verified) {
          steps_.push_back({K::kPhase, "transfer_gate", "receipt"});
          if (!hold_) {
            steps_.insert(steps_.end(), {{K::kReceipt},
                                         {K::kPhase, "receipt", "reflect"},
                                         {K::kReflected},
                                         {K::kPhase, "reflect", "done"}});
          }
        } else {
          steps_.insert(steps_.end(), {{K::kPhase, "transfer_gate", "reflect"},
                                       {K::kReflected},
                                       {K::kPhase, "reflect", "done"}});
        }
        return ev(events::kGateVerdict, "engine",
                  R"(,"gate":)" + std::to_string(gate_seq_) + R"(,"verdict":")" +
                      std::string(gate::verdict_name(result_.verdict)) + R"(","recovered":)" +
                      (result_.recovered ? "true" : "false") + R"(,"result":)" +
                      gate::result_json(result_));
      }
      case K::kReceipt: {
        // Stands in for a real receipt (those are issued for the held attempts only).
        const EvidenceRef& r = sc_.receipts[n_ % 2];
        return ev(events::kReceiptIssued, "engine",
                  R"(,"receipt_sha256":")" + to_hex(r.sha256) + R"(","first_seq":1,"last_seq":)" +
                      std::to_string(seq - 2) + R"(,"checkpoint_size":)" + std::to_string(seq - 2) +
                      R"(,"refs":[)" + ref_json(r, "receipt") + "]");
      }
      case K::kReflected:
        return reflected();
    }
    return {};
  }

  uint64_t n_;
  const BenchScenario& sc_;
  bool hold_;
  std::string id_, stream_;
  Outcome outcome_ = Outcome::kVerified;
  bool with_script_ = false;
  std::deque<Step> steps_;
  uint64_t gate_seq_ = 0;
  std::vector<uint64_t> verify_facts_;
  std::vector<gate::Fact> facts_;
  gate::GateResult result_;
};

// Appends the registry and `attempts` attempts, `kInterleave` at a time, in big append_all calls.
// Every `hold_every`-th attempt (0: none) stops at phase receipt and is returned in `held`.
Status build_log(EventLog& log, const BenchScenario& sc, uint64_t attempts, uint64_t hold_every,
                 std::vector<std::unique_ptr<AttemptScript>>& held,
                 const std::function<void(uint64_t)>& progress) {
  constexpr size_t kInterleave = 8;
  constexpr size_t kBatchEvents = 4096;
  std::vector<EventDraft> batch;
  uint64_t next_seq = log.head().seq + 1;
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::ok();
    auto r = log.append_all(batch);
    if (!r.ok()) return r.status();
    if (r->front().seq != next_seq - batch.size()) {
      return Status::failed_precondition("bench replay: another process appended to the log");
    }
    batch.clear();
    return Status::ok();
  };
  const auto& m = sc.manifest;
  batch.push_back({"lab/scenarios", events::kScenarioLoaded, "engine",
                   JsonWriter()
                       .num("v", 1)
                       .str("dir", sc.dir)
                       .str("id", m.id)
                       .str("version", m.version)
                       .str("family", m.family)
                       .str("title", m.title)
                       .str("package_digest", to_hex(sha256(m.id + " " + m.version)))
                       .str("manifest_sha256", to_hex(sc.manifest_ref.sha256))
                       .str("publisher", "aura.publisher/bench")
                       .raw("refs", "[" + ref_json(sc.manifest_ref, "manifest") + "]")
                       .done()});
  batch.push_back(
      {"lab/scenarios", events::kScenarioRejected, "engine",
       R"({"v":1,"dir":"scenarios/broken","reason":"package.sig.json: bad signature"})"});
  next_seq += 2;

  std::vector<std::unique_ptr<AttemptScript>> active;
  uint64_t started = 0, finished = 0;
  while (finished < attempts) {
    while (active.size() < kInterleave && started < attempts) {
      const bool hold = hold_every != 0 && started % hold_every == 0;
      active.push_back(std::make_unique<AttemptScript>(started++, sc, hold));
    }
    for (size_t i = 0; i < active.size();) {
      batch.push_back(active[i]->next(next_seq++));
      if (active[i]->done()) {
        if (active[i]->awaiting_receipt()) held.push_back(std::move(active[i]));
        active.erase(active.begin() + long(i));
        ++finished;
        if (finished % 5000 == 0) progress(finished);
      } else {
        ++i;
      }
    }
    if (batch.size() >= kBatchEvents) AURA_RETURN_IF_ERROR(flush());
  }
  return flush();
}

struct ReceiptFigures {
  uint64_t issued = 0, events = 0, replayed = 0;  // events: bound by all the receipts
  double issue_s = 0, verify_s = 0, verify_cpu = 0, replay_s = 0;
  std::string failure;
};

int bench_replay(Invocation& inv) {
  auto attempts = inv.get_u64("attempts", 100000);
  if (!attempts.ok()) return inv.fail(attempts.status(), 2);
  if (*attempts == 0 || *attempts > 10000000) {
    return inv.fail(Status::invalid("--attempts: must be 1..10000000"), 2);
  }
  auto receipts = inv.get_u64("receipts", 1000);
  if (!receipts.ok()) return inv.fail(receipts.status(), 2);
  auto replays = inv.get_u64("replays", 3);
  if (!replays.ok()) return inv.fail(replays.status(), 2);
  const bool keep = inv.has("keep");
  auto bench_dir = make_bench_root(inv, "/tmp/aura-bench-replay-XXXXXX");
  if (!bench_dir.ok()) return inv.fail(bench_dir.status());
  const fs::path root = *bench_dir;
  auto fail = [&](const Status& s) {
    if (!keep) fs::remove_all(root);
    return inv.fail(s);
  };
  auto say = [&](const std::string& s) {
    if (!inv.json) std::cerr << s << std::endl;
  };

  auto keys = KeyStore::init(root / "keys");
  if (!keys.ok()) return fail(keys.status());
  auto store = BlobStore::open(root / "data" / "blobs");
  if (!store.ok()) return fail(store.status());
  auto sc = load_scenario(inv.get("scenario", "scenarios/t0-config-drift"), *store);
  if (!sc.ok()) return fail(sc.status());
  const NoteVerifierKey pinned = keys->lab_verifier();

  // 1. The log, and real receipts for a sample of VERIFIED attempts.
  double build_s = 0;
  ReceiptFigures rf;
  std::vector<std::string> envelopes;
  {
    EventLog::Options lo;
    lo.signer = &keys->lab_signer();
    lo.blobs = &*store;
    auto log = EventLog::open(root / "data" / "log", lo);
    if (!log.ok()) return fail(log.status());
    say("appending " + std::to_string(*attempts) + " attempts ...");
    const uint64_t hold_every =
        *receipts == 0 ? 0 : std::max<uint64_t>(1, *attempts / std::min(*receipts, *attempts));
    std::vector<std::unique_ptr<AttemptScript>> held;
    const auto t0 = Clock::now();
    Status s = build_log(**log, *sc, *attempts, hold_every, held, [&](uint64_t done) {
      if (!inv.json) std::cerr << "\r  " << done << " attempts" << std::flush;
    });
    if (!inv.json) std::cerr << "\n";
    if (!s.is_ok()) return fail(s);
    build_s = seconds_since(t0);

    say("issuing " + std::to_string(held.size()) + " receipts ...");
    std::vector<EventDraft> after;
    const auto i0 = Clock::now();
    for (auto& a : held) {
      auto r = receipt::issue_receipt(**log, a->id(), keys->lab_signer(), *store);
      if (!r.ok()) return fail(r.status().with_context("issue_receipt " + a->id()));
      auto blob = put_blob(*store, r->envelope, "receipt.dsse");
      if (!blob.ok()) return fail(blob.status());
      for (EventDraft& d : a->after_receipt(*r, *blob)) after.push_back(std::move(d));
      envelopes.push_back(std::move(r->envelope));
    }
    rf.issue_s = seconds_since(i0);
    rf.issued = envelopes.size();
    // How many events the receipts bind (their attempts' events up to the verdict).
    for (auto& a : held) {
      Status c = (*log)->read_stream("attempt/" + a->id(), 1, [&](const EventView& e) {
        if (e.type == events::kReceiptIssued) return false;
        ++rf.events;
        return true;
      });
      if (!c.is_ok()) return fail(c);
    }
    for (size_t i = 0; i < after.size(); i += 1024) {
      std::span<const EventDraft> part(after.data() + i, std::min<size_t>(1024, after.size() - i));
      if (auto r = (*log)->append_all(part); !r.ok()) return fail(r.status());
    }
  }

  // Measured on a read-only open, as the CLI's projection and receipt commands open the log.
  EventLog::Options ro;
  ro.read_only = true;
  auto log = EventLog::open(root / "data" / "log", ro);
  if (!log.ok()) return fail(log.status());
  const uint64_t events = (*log)->head().seq;

  // 2. The peer: one raw pass over the same events, no projecting.
  say("raw read of " + std::to_string(events) + " events ...");
  uint64_t payload_bytes = 0, read_events = 0;
  const double read_cpu0 = cpu_seconds();
  const auto r0 = Clock::now();
  Status rs = (*log)->read_range(1, events, [&](const EventView& e) {
    payload_bytes += e.payload.size();
    ++read_events;
    return true;
  });
  const double read_s = seconds_since(r0);
  const double read_cpu = cpu_seconds() - read_cpu0;
  if (!rs.is_ok()) return fail(rs);

  // 3. Rebuild every projection.
  say("rebuilding the projections ...");
  auto proj = lab::LabProjections::open(**log, lab::LabProjections::file_in(root / "data"));
  if (!proj.ok()) return fail(proj.status());
  const double rebuild_cpu0 = cpu_seconds();
  const auto p0 = Clock::now();
  auto reports = (*proj)->rebuild_all();
  const double rebuild_s = seconds_since(p0);
  const double rebuild_cpu = cpu_seconds() - rebuild_cpu0;
  if (!reports.ok()) return fail(reports.status());
  if (Status s = (*proj)->serve_check_all(); !s.is_ok()) return fail(s);

  // 4. Receipts: every one offline; a few with replay (each replay verifies the whole log).
  if (!envelopes.empty()) {
    say("verifying " + std::to_string(envelopes.size()) + " receipts, " +
        std::to_string(std::min<uint64_t>(*replays, envelopes.size())) + " with replay ...");
    const double c0 = cpu_seconds();
    const auto v0 = Clock::now();
    for (const std::string& e : envelopes) {
      receipt::ReceiptReport r = receipt::verify_receipt(e, pinned);
      if (!r.ok() && rf.failure.empty()) {
        rf.failure =
            r.failures.empty() ? "no check ran" : r.failures[0].field + ": " + r.failures[0].what;
      }
    }
    rf.verify_s = seconds_since(v0);
    rf.verify_cpu = cpu_seconds() - c0;
    const auto x0 = Clock::now();
    for (size_t i = 0; i < envelopes.size() && i < *replays; ++i) {
      receipt::ReceiptReport r =
          receipt::verify_receipt(envelopes[i], pinned, receipt::ReplayContext{&**log, &*store});
      if (!r.ok() && rf.failure.empty()) {
        rf.failure =
            r.failures.empty() ? "no check ran" : r.failures[0].field + ": " + r.failures[0].what;
      }
      ++rf.replayed;
    }
    rf.replay_s = seconds_since(x0);
    if (!rf.failure.empty())
      return fail(Status::corruption("a bench receipt failed: " + rf.failure));
  }

  const double rebuild_eps = double(events) / rebuild_s;
  const double read_eps = double(read_events) / read_s;
  std::printf("aura bench replay: %llu attempts, %llu events (%.0f bytes of payload each)\n",
              (unsigned long long)*attempts, (unsigned long long)events,
              double(payload_bytes) / double(std::max<uint64_t>(1, read_events)));
  std::printf("  %-42s %12s %13s\n", "phase", "events/s", "per CPU s");
  std::printf("  %-42s %12.0f %13s  (%.1f s)\n", "build the log (append_all, 4096 per call)",
              double(events) / build_s, "", build_s);
  std::printf("  %-42s %12.0f %13.0f  (%.2f s, %.2f CPU s)\n",
              "raw read_range, no projecting (peer)", read_eps, double(events) / read_cpu, read_s,
              read_cpu);
  std::printf("  %-42s %12.0f %13.0f  (%.2f s, %.2f CPU s)\n", "rebuild all projections",
              rebuild_eps, double(events) / rebuild_cpu, rebuild_s, rebuild_cpu);
  std::printf("  rebuild as a share of the raw read: %.0f%% (wall), %.0f%% (CPU)\n",
              100.0 * rebuild_eps / read_eps, 100.0 * read_cpu / rebuild_cpu);
  JsonArray items;
  for (const auto& r : *reports) {
    std::string counts;
    JsonWriter rows;
    for (const auto& [table, n] : r.rows) {
      counts += " " + table + "=" + std::to_string(n);
      rows.num(table, n);
    }
    std::printf("    %-14s rows:%s\n", r.name.c_str(), counts.c_str());
    items.raw(JsonWriter().str("name", r.name).raw("rows", rows.done()).done());
  }
  JsonWriter rj;
  rj.num("issued", rf.issued);
  if (rf.issued > 0) {
    const double verify_eps = double(rf.events) / rf.verify_s;
    std::printf("  receipts: %llu issued in %.2f s (%.1f ms each), %.0f events each\n",
                (unsigned long long)rf.issued, rf.issue_s, 1000 * rf.issue_s / double(rf.issued),
                double(rf.events) / double(rf.issued));
    std::printf("  %-42s %12.0f %13.0f  (%.1f receipts/s)\n", "receipt verify, offline (events)",
                verify_eps, double(rf.events) / rf.verify_cpu, double(rf.issued) / rf.verify_s);
    if (rf.replayed > 0) {
      std::printf("  %-42s %12.0f %13s  (%.2f s per receipt: verifies all %llu events)\n",
                  "receipt verify --replay (events of receipts)",
                  double(rf.events) / double(rf.issued) * double(rf.replayed) / rf.replay_s, "",
                  rf.replay_s / double(rf.replayed), (unsigned long long)events);
    }
    rj.real("issue_ms_each", 1000 * rf.issue_s / double(rf.issued))
        .real("verify_events_per_s", verify_eps)
        .real("verify_receipts_per_s", double(rf.issued) / rf.verify_s)
        .num("replayed", rf.replayed)
        .real("replay_seconds_each", rf.replayed ? rf.replay_s / double(rf.replayed) : 0);
  }
  if (keep) {
    std::printf("  kept: --data %s --keys %s\n", (root / "data").c_str(), (root / "keys").c_str());
  }
  inv.emit_json(JsonWriter()
                    .num("attempts", *attempts)
                    .num("events", events)
                    .real("build_events_per_s", double(events) / build_s)
                    .real("raw_read_events_per_s", read_eps)
                    .real("raw_read_events_per_cpu_s", double(events) / read_cpu)
                    .real("rebuild_events_per_s", rebuild_eps)
                    .real("rebuild_events_per_cpu_s", double(events) / rebuild_cpu)
                    .real("rebuild_seconds", rebuild_s)
                    .raw("projections", items.done())
                    .raw("receipts", rj.done())
                    .done());
  proj->reset();
  log->reset();
  if (!keep) fs::remove_all(root);
  return 0;
}

}  // namespace

void register_bench_replay_commands(CommandTable& r) {
  r.add({"bench replay",
         "",
         "measure rebuilding every projection, and verifying receipts, on a large log",
         "Builds a log of N attempts (about 50 events each, following docs/ATTEMPTS.md) on the "
         "scenario\npackage in --scenario, in a temporary folder; issues real receipts for a "
         "sample of VERIFIED\nattempts; then times one raw read_range pass, a rebuild of every "
         "projection, and receipt\nverification offline and with replay. Figures are printed, "
         "never asserted; record them in\ndocs/PERFORMANCE.md with this command.",
         {{"attempts", "N", "attempts in the log (default 100000)"},
          {"receipts", "N", "receipts to issue and verify offline (default 1000)"},
          {"replays", "N", "of those, how many to verify with replay (default 3)"},
          {"scenario", "DIR", "the scenario package (default scenarios/t0-config-drift)"},
          {"keep", "DIR", "keep the log in DIR/data and its keys in DIR/keys"}},
         0,
         0,
         bench_replay});
}

}  // namespace aura::cli
