#include "app/lab/synthetic_history.h"

#include <deque>
#include <utility>

#include "engine/crypto/sha256.h"
#include "engine/events/capability_events.h"
#include "engine/events/gate_events.h"
#include "engine/events/payload_reader.h"
#include "engine/events/world_events.h"
#include "engine/world/world_built.h"

namespace aura::app {
namespace ev = aura::events;

namespace {

using gate::Property;
using gate::Stage;
using scenario::WorldRole;

EvidenceRef named(EvidenceRef ref, std::string id) {
  ref.id = std::move(id);
  return ref;
}

template <class T>
const T& pick(const std::vector<T>& from, size_t n) {
  return from[n % from.size()];
}

std::string hex_of(std::string_view text) { return to_hex(sha256(text)); }

}  // namespace

std::string SyntheticScenario::package_digest() const { return hex_of(sums); }

Result<EvidenceRef> store_blob(BlobStore& blobs, std::string_view bytes, std::string kind) {
  auto info = blobs.put(as_bytes(bytes));
  if (!info.ok()) return info.status();
  return EvidenceRef{"x", info->sha256, std::move(kind), info->bytes};
}

Status add_package(SyntheticScenario& sc, BlobStore& blobs, size_t outputs) {
  std::vector<std::string> worlds = {sc.spec.primary_world};
  worlds.insert(worlds.end(), sc.spec.twin_worlds.begin(), sc.spec.twin_worlds.end());
  worlds.push_back(sc.spec.control_world);
  sc.sums = hex_of("base of " + sc.id) + "  worlds/common/base.conf\n";
  for (const std::string& w : worlds) {
    sc.sums += hex_of(sc.id + " world " + w) + "  worlds/" + w + "/node.conf\n";
    sc.layers[w] = {"worlds/common", "worlds/" + w};
    auto image = world::image_digest(sc.sums, sc.layers[w]);
    if (!image.ok()) return image.status();  // the sums so far already cover both layers
    sc.images[w] = to_hex(*image);
  }
  sc.binaries = {{"/aura/bin/aura-runner", hex_of("aura-runner")},
                 {"/usr/sbin/nginx", hex_of("nginx")}};
  sc.lab_build_digest = hex_of("aura synthetic build");
  AURA_ASSIGN_OR_RETURN(sc.sums_ref, store_blob(blobs, sc.sums, std::string(ev::kSumsRefKind)));
  AURA_ASSIGN_OR_RETURN(sc.profile_ref, store_blob(blobs, "profile: synthetic\nseccomp: default\n",
                                                   std::string(ev::kProfileRefKind)));
  // Outputs of realistic sizes, each its own bytes.
  const auto add = [&](std::vector<EvidenceRef>& into, const std::string& kind,
                       size_t size) -> Status {
    for (size_t i = 0; i < outputs; ++i) {
      std::string content = kind + " " + std::to_string(i) + "\n";
      while (content.size() < size)
        content += hex_of(content.substr(content.size() - std::min<size_t>(64, content.size())))
                       .substr(0, 32);
      content.resize(size);
      EvidenceRef ref;
      AURA_ASSIGN_OR_RETURN(ref, store_blob(blobs, content, kind));
      into.push_back(ref);
    }
    return Status::ok();
  };
  AURA_RETURN_IF_ERROR(add(sc.probe_outputs, "probe.output", 1500));
  AURA_RETURN_IF_ERROR(add(sc.action_outputs, "action.output", 300));
  AURA_RETURN_IF_ERROR(add(sc.receipts, "receipt.dsse", 9000));
  return Status::ok();
}

// ---- one attempt ----

struct AttemptHistory::State {
  enum class Kind {
    kStart,
    kPredict,
    kProbe,
    kAbandon,
    kSubmit,
    kAuthorize,
    kApply,
    kReadback,
    kAcknowledge,
    kVerifyFacts,
    kVerified,
    kCoach,
    kGateStarted,
    kProperty,
    kGateEnd,
    kReceipt,
    kReflect
  };
  struct Step {
    Kind kind;
    int i = 0;
  };

  State(const SyntheticScenario& scenario, SyntheticAttempt p) : sc(scenario), plan(std::move(p)) {
    using K = Kind;
    steps = {{K::kStart}, {K::kPredict}};
    for (int k = 1; k <= plan.probes; ++k) steps.push_back({K::kProbe, k});
    if (plan.verdict.empty()) {
      steps.push_back({K::kAbandon});
      return;
    }
    steps.push_back({K::kSubmit, 1});
    if (plan.second_revision) steps.push_back({K::kSubmit, 2});
    if (plan.script) steps.push_back({K::kAuthorize});
    steps.insert(
        steps.end(),
        {{K::kApply}, {K::kReadback}, {K::kAcknowledge}, {K::kVerifyFacts}, {K::kVerified}});
    if (plan.coach) steps.push_back({K::kCoach});
    steps.push_back({K::kGateStarted});
    for (int p = 0; p < 5; ++p) steps.push_back({K::kProperty, p});
    steps.push_back({K::kGateEnd});  // pushes the tail, once the grader has spoken
    if (plan.script) {
      script_sha256 = hex_of(sc.id + " script of " + plan.id);
    }
  }

  std::string stream() const { return std::string(ev::kAttemptStreamPrefix) + plan.id; }
  std::string learner() const { return "learner:" + plan.learner; }
  uint64_t revision() const { return plan.second_revision ? 2 : 1; }
  size_t actions() const { return plan.script ? 1 : sc.action_calls.size(); }

  template <class T>
  void add(std::vector<EventDraft>& out, const T& payload, std::string actor) {
    out.push_back(ev::attempt_draft(payload, std::move(actor)));
  }
  void phase(std::vector<EventDraft>& out, std::string_view from, std::string_view to) {
    add(out, ev::AttemptPhase{plan.id, std::string(from), std::string(to)}, "engine");
  }

  ev::WorldBuilt world_built(const std::string& world) const {
    ev::WorldBuilt w;
    w.attempt = plan.id;
    w.world = world;
    w.profile_sha256 = to_hex(sc.profile_ref.sha256);
    w.binaries = sc.binaries;
    w.layers = sc.layers.at(world);
    w.image_sha256 = sc.images.at(world);
    w.refs = {named(sc.profile_ref, "profile"), named(sc.sums_ref, "sums")};
    return w;
  }

  // The members of action `i` of a list of `calls` (or the script), as one run recorded them.
  ev::ActionMembers action(size_t i, const std::vector<std::string>& calls) const {
    ev::ActionMembers a;
    if (plan.script) {
      a.script_sha256 = script_sha256;
    } else {
      a.call = pick(calls, i);
    }
    const bool fails = plan.failed_action && i == 0;
    a.exit_code = fails ? 1 : 0;
    a.error = fails ? "permission denied" : "";
    a.resolved = sc.resolved;
    return a;
  }

  // Whether check `c` passes on a world of `role` the fix was applied to (`first_twin`: the
  // first twin world, where an unproven fix fails).
  bool check_ok(const gate::GateSpec::Check& c, bool first_twin, bool first_check) const {
    if (plan.verdict == "NOT_RECOVERED") return c.kind != scenario::CheckKind::kPostcondition;
    if (plan.verdict == "RECOVERED_UNPROVEN") return !(first_twin && first_check);
    return true;
  }

  // ---- the gate: one property's worlds, actions and facts, as the gate runner records them ----
  struct PropertyRun {
    State& s;
    Property property;
    uint64_t seq;  // of the next event
    std::vector<EventDraft> out;

    std::string name() const { return std::string(gate::property_name(property)); }
    void build(const std::string& world) {
      ev::WorldBuilt w = s.world_built(world);
      w.gate = ev::WorldBuilt::Gate{s.gate_seq, name()};
      push(w);
    }
    void apply(const std::string& world, std::string_view stage,
               const std::vector<std::string>& calls) {
      const size_t n = s.plan.script ? 1 : calls.size();
      for (size_t i = 0; i < n; ++i) {
        ev::GateAction a{s.action(i, calls)};
        a.attempt = s.plan.id;
        a.gate = s.gate_seq;
        a.property = name();
        a.world = world;
        a.stage = std::string(stage);
        a.index = i;
        a.refs = {named(pick(s.sc.action_outputs, s.plan.variant + i), "output")};
        push(a);
      }
    }
    void checks(const std::string& world, Stage stage, WorldRole role) {
      const bool first_twin = role == WorldRole::kTwin && world == s.sc.spec.twin_worlds.front();
      bool first = true;
      for (const auto* c : gate::required_checks(s.sc.spec, role)) {
        fact(world, stage, c->id, s.check_ok(*c, first_twin, first), "");
        first = false;
      }
    }
    void fingerprint(const std::string& world, Stage stage) {
      // Equal where the fix is idempotent and the rollback restores the world.
      const bool before = stage == Stage::kBefore || stage == Stage::kAfterRollback;
      fact(world, stage, std::string(gate::kFingerprintCheck), true,
           hex_of(s.plan.id + (before ? " before" : " after")));
    }
    void fact(const std::string& world, Stage stage, const std::string& check, bool ok,
              const std::string& value) {
      ev::GateFact f{s.plan.id,
                     s.gate_seq,
                     name(),
                     world,
                     std::string(gate::stage_name(stage)),
                     check,
                     ok,
                     value.empty() ? (ok ? "ok" : "failed") : "",
                     std::nullopt};
      if (!value.empty()) f.value = value;
      s.facts.push_back({seq, property, world, stage, check, ok, value});
      push(f);
    }
    template <class T>
    void push(const T& payload) {
      out.push_back(ev::attempt_draft(payload, "supervisor"));
      ++seq;
    }
  };

  std::vector<EventDraft> property(Property p, uint64_t seq) {
    PropertyRun run{*this, p, seq, {}};
    const gate::GateSpec& spec = sc.spec;
    const std::string& primary = spec.primary_world;
    const std::vector<std::string>& calls = sc.action_calls;
    switch (p) {
      case Property::kPrimary:
        run.build(primary);
        run.apply(primary, "apply", calls);
        run.checks(primary, Stage::kAfterApply, WorldRole::kPrimary);
        break;
      case Property::kTwin:
        for (const std::string& w : spec.twin_worlds) {
          run.build(w);
          run.apply(w, "apply", calls);
          run.checks(w, Stage::kAfterApply, WorldRole::kTwin);
        }
        break;
      case Property::kControl:
        run.build(spec.control_world);
        run.apply(spec.control_world, "apply", calls);
        run.checks(spec.control_world, Stage::kAfterApply, WorldRole::kControl);
        break;
      case Property::kRepeat:
        run.build(primary);
        run.apply(primary, "apply", calls);
        run.fingerprint(primary, Stage::kAfterApply);
        run.apply(primary, "repeat", calls);
        run.fingerprint(primary, Stage::kAfterRepeat);
        run.checks(primary, Stage::kAfterRepeat, WorldRole::kPrimary);
        break;
      case Property::kReversal:
        run.build(primary);
        run.fingerprint(primary, Stage::kBefore);
        run.apply(primary, "apply", calls);
        run.apply(primary, "rollback", sc.rollback_calls);
        run.fingerprint(primary, Stage::kAfterRollback);
        break;
    }
    // Learn mode stops at the first property that does not pass (docs/GATE.md).
    if (plan.mode != "judge" &&
        gate::grade(spec, facts).properties[size_t(p)].status != gate::Outcome::kPass) {
      stopped = true;
    }
    return std::move(run.out);
  }

  Result<std::vector<EventDraft>> make(const Step& step, uint64_t seq) {
    using K = Kind;
    std::vector<EventDraft> out;
    const std::string actor = learner();
    switch (step.kind) {
      case K::kStart: {
        started_seq = seq;
        ev::AttemptStarted a;
        a.attempt = plan.id;
        a.learner = plan.learner;
        a.mode = plan.mode;
        a.seed = plan.seed;
        a.scenario = {sc.id,        sc.version, sc.package_digest(), to_hex(sc.manifest.sha256),
                      sc.publisher, sc.dir};
        a.probe_budget = sc.probe_budget;
        a.refs = {named(sc.manifest, "manifest")};
        add(out, a, actor);
        add(out, world_built(sc.spec.primary_world), "supervisor");
        break;
      }
      case K::kPredict:
        phase(out, "observe", "predict");
        add(out,
            ev::AttemptPredicted{plan.id, pick(sc.hypotheses, plan.variant), sc.expect,
                                 plan.confidence},
            actor);
        phase(out, "predict", "inspect");
        break;
      case K::kProbe: {
        const uint64_t k = uint64_t(step.i);
        add(out,
            ev::ProbeRequested{plan.id, k, pick(sc.probe_calls, k - 1), sc.probe_cost,
                               k * sc.probe_cost},
            actor);
        const std::string evidence = "ev-" + std::to_string(k);
        ev::ProbeCompleted done{
            plan.id, k, evidence, 0, step.i == plan.truncated_probe, std::nullopt, sc.resolved, {}};
        if (plan.probe_without_output && k == 2) {
          done.exit_code = -1;
          done.error = "timed out";
          done.resolved.clear();
        } else {
          done.refs = {named(pick(sc.probe_outputs, plan.variant * 3 + k), evidence)};
        }
        add(out, done, "supervisor");
        break;
      }
      case K::kAbandon:
        add(out, ev::AttemptAbandoned{plan.id, "out of time"}, actor);
        phase(out, "inspect", "done");
        break;
      case K::kSubmit: {
        const uint64_t r = uint64_t(step.i);
        const EvidenceRef& ir = pick(sc.irs, r - 1);
        ev::InterventionSubmitted sub{plan.id, r, to_hex(ir.sha256), {}, {}};
        if (plan.script) sub.scripts.push_back({script_sha256, "pending_feedback"});
        sub.refs = {named(ir, "ir-" + std::to_string(r))};
        add(out, sub, actor);
        if (r == 1) phase(out, "inspect", "contract");
        break;
      }
      case K::kAuthorize:
        add(out, ev::ScriptAuthorized{plan.id, revision(), script_sha256}, actor);
        break;
      case K::kApply: {
        phase(out, "contract", "apply");
        uint64_t failed = 0;
        for (size_t i = 0; i < actions(); ++i) {
          ev::ActionCompleted a{action(i, sc.action_calls)};
          a.attempt = plan.id;
          a.world = "live";
          a.stage = "apply";
          a.index = i;
          a.refs = {
              named(pick(sc.action_outputs, plan.variant + i), "act-" + std::to_string(i + 1))};
          failed += a.exit_code != 0 ? 1 : 0;
          add(out, a, "supervisor");
        }
        add(out, ev::ApplyCompleted{plan.id, revision(), actions(), failed, false}, "supervisor");
        phase(out, "apply", "ack");
        break;
      }
      case K::kReadback: {
        readback_seq = seq;
        readback = ev::AckReadback{plan.id, revision(), true, {}};
        for (size_t i = 0; i < actions(); ++i) {
          const ev::ActionMembers a = action(i, sc.action_calls);
          ev::AckReadback::Line line{i, a.call, a.script_sha256, false, "", {}};
          if (a.script_sha256) {
            line.observed = "a script requests no typed effect; nothing to compare";
          } else if (a.exit_code != 0) {
            line.observed = "it failed at apply (exit 1 (permission denied)); nothing to compare";
          } else {
            line.typed = true;
            for (const std::string& r : sc.resolved) line.observed += r + ": as requested\n";
          }
          readback.actions.push_back(std::move(line));
        }
        add(out, readback, "supervisor");
        break;
      }
      case K::kAcknowledge:
        add(out,
            ev::AttemptAcknowledged{plan.id, readback_seq, hex_of(readback.actions_json()), ""},
            actor);
        phase(out, "ack", "verify");
        break;
      case K::kVerifyFacts:
        // The live world answers as the primary will at the gate.
        verified = {plan.id, true, {}};
        for (const auto* c : gate::required_checks(sc.spec, WorldRole::kPrimary)) {
          const bool ok = check_ok(*c, false, false);
          if (c->kind == scenario::CheckKind::kPostcondition) verified.recovered &= ok;
          verified.facts.push_back(seq + out.size());
          add(out,
              ev::VerifyFact{plan.id, c->id, std::string(scenario::check_kind_name(c->kind)), ok,
                             ok ? "ok" : "failed"},
              "supervisor");
        }
        break;
      case K::kVerified:
        add(out, verified, "engine");
        phase(out, "verify", "transfer_gate");
        break;
      case K::kCoach:
        add(out,
            ev::CoachUsed{plan.id, 1, hex_of("coach request " + plan.id),
                          hex_of("coach response " + plan.id), "none"},
            "engine");
        break;
      case K::kGateStarted: {
        gate_seq = seq;
        const ev::GateStarted g{plan.id,
                                revision(),
                                to_hex(pick(sc.irs, revision() - 1).sha256),
                                plan.mode != "judge",
                                {sc.kernel_release, sc.lab_build_digest,
                                 to_hex(sc.profile_ref.sha256), hex_of(sc.driver_capabilities)},
                                sc.driver_capabilities};
        add(out, g, "engine");
        break;
      }
      case K::kProperty:
        if (stopped) {
          not_run.push_back(gate::kProperties[size_t(step.i)]);
          break;
        }
        out = property(gate::kProperties[size_t(step.i)], seq);
        break;
      case K::kGateEnd: {
        result = gate::grade(sc.spec, facts, not_run);
        const std::string verdict(gate::verdict_name(result.verdict));
        if (verdict != plan.verdict) {
          return Status::invalid("synthetic attempt " + plan.id + ": its facts grade " + verdict +
                                 ", not the planned " + plan.verdict);
        }
        for (const gate::PropertyResult& p : result.properties) {
          add(out,
              ev::GateProperty{plan.id, gate_seq, std::string(gate::property_name(p.property)),
                               std::string(gate::outcome_name(p.status)), p.reason, p.cited},
              "engine");
        }
        verdict_seq = seq + out.size();
        add(out,
            ev::GateVerdict{plan.id, gate_seq, verdict, result.recovered,
                            gate::result_json(result)},
            "engine");
        const bool verified_gate = result.verdict == gate::Verdict::kVerified;
        phase(out, "transfer_gate", verified_gate ? "receipt" : "reflect");
        if (verified_gate && plan.hold_for_receipt) break;
        if (verified_gate) steps.push_back({K::kReceipt});
        steps.push_back({K::kReflect});
        break;
      }
      case K::kReceipt: {
        // Stands in for a real receipt (the held attempts get real ones).
        const EvidenceRef& r = pick(sc.receipts, plan.variant);
        add(out,
            ev::ReceiptIssued{plan.id,
                              to_hex(r.sha256),
                              started_seq,
                              verdict_seq,
                              verdict_seq,
                              {named(r, "receipt")}},
            "engine");
        phase(out, "receipt", "reflect");
        break;
      }
      case K::kReflect:
        reflect(out);
        break;
    }
    return out;
  }

  void reflect(std::vector<EventDraft>& out) {
    add(out, ev::AttemptReflected{plan.id, "the twin drifted the same way"}, learner());
    phase(out, "reflect", "done");
  }

  const SyntheticScenario& sc;
  SyntheticAttempt plan;
  std::deque<Step> steps;
  std::string script_sha256;
  uint64_t started_seq = 0, readback_seq = 0, gate_seq = 0, verdict_seq = 0;
  ev::AckReadback readback;
  ev::AttemptVerified verified;
  std::vector<gate::Fact> facts;
  std::vector<Property> not_run;
  bool stopped = false;
  gate::GateResult result;
};

AttemptHistory::AttemptHistory(const SyntheticScenario& sc, SyntheticAttempt plan)
    : s_(std::make_unique<State>(sc, std::move(plan))) {}
AttemptHistory::~AttemptHistory() = default;
AttemptHistory::AttemptHistory(AttemptHistory&&) noexcept = default;
AttemptHistory& AttemptHistory::operator=(AttemptHistory&&) noexcept = default;

const SyntheticAttempt& AttemptHistory::plan() const { return s_->plan; }
bool AttemptHistory::done() const { return s_->steps.empty(); }

Result<std::vector<EventDraft>> AttemptHistory::next(uint64_t seq) {
  const State::Step step = s_->steps.front();
  s_->steps.pop_front();
  return s_->make(step, seq);
}

bool AttemptHistory::awaiting_receipt() const {
  return s_->plan.hold_for_receipt && s_->result.verdict == gate::Verdict::kVerified;
}

std::vector<EventDraft> AttemptHistory::after_receipt(events::ReceiptIssued issued) const {
  std::vector<EventDraft> out;
  issued.attempt = s_->plan.id;
  s_->add(out, issued, "engine");
  s_->phase(out, "receipt", "reflect");
  s_->reflect(out);
  return out;
}

// ---- the registries ----

EventDraft scenario_loaded(const SyntheticScenario& sc) {
  return scenario_loaded(scenario_loaded_payload(sc));
}

EventDraft scenario_loaded(const events::ScenarioLoaded& loaded) {
  return {std::string(ev::kScenarioStream), ev::kScenarioLoaded, "engine", loaded.encode()};
}

events::ScenarioLoaded scenario_loaded_payload(const SyntheticScenario& sc) {
  ev::ScenarioLoaded e;
  e.dir = sc.dir;
  e.id = sc.id;
  e.version = sc.version;
  e.family = sc.family;
  e.title = sc.title;
  e.package_digest = sc.package_digest();
  e.manifest_sha256 = to_hex(sc.manifest.sha256);
  e.publisher = sc.publisher;
  e.refs = {named(sc.manifest, "manifest")};
  return e;
}

EventDraft scenario_rejected(std::string dir, std::string reason) {
  return {std::string(ev::kScenarioStream), ev::kScenarioRejected, "engine",
          ev::ScenarioRejected{std::move(dir), std::move(reason)}.encode()};
}

EventDraft capabilities_measured(std::string stream, events::CapabilitiesMeasured m) {
  return {std::move(stream), ev::kCapabilitiesMeasured, "supervisor", ev::encode(m)};
}

Status interleave(const SyntheticScenario& sc, size_t at_once,
                  const std::function<std::optional<SyntheticAttempt>()>& next_plan,
                  uint64_t& next_seq,
                  const std::function<Status(std::vector<EventDraft>&&)>& append,
                  const std::function<void(AttemptHistory&&)>& finished) {
  std::vector<AttemptHistory> live;
  for (bool more = true;;) {
    while (more && live.size() < at_once) {
      std::optional<SyntheticAttempt> plan = next_plan();
      more = plan.has_value();
      if (more) live.emplace_back(sc, std::move(*plan));
    }
    if (live.empty()) return Status::ok();
    for (size_t i = 0; i < live.size();) {
      std::vector<EventDraft> command;
      AURA_ASSIGN_OR_RETURN(command, live[i].next(next_seq));
      next_seq += command.size();
      if (!command.empty()) AURA_RETURN_IF_ERROR(append(std::move(command)));
      if (live[i].done()) {
        finished(std::move(live[i]));
        live.erase(live.begin() + long(i));
      } else {
        ++i;
      }
    }
  }
}

}  // namespace aura::app
