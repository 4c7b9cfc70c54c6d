#include "app/lab/views.h"

#include <cstdio>
#include <functional>
#include <initializer_list>
#include <utility>

#include "engine/common/json_writer.h"
#include "engine/events/event_types.h"
#include "engine/json/json_reader.h"

namespace aura::app {
namespace ev = aura::events;
namespace {

using attempt::Phase;

std::string params_json(const std::vector<scenario::ParamSchema>& params) {
  JsonArray out;
  for (const auto& p : params) {
    JsonWriter j;
    j.str("name", p.name)
        .str("type", scenario::param_type_name(p.type))
        .boolean("required", p.required)
        .str("description", p.description);
    switch (p.type) {
      case scenario::ParamType::kString: {
        j.num("min_bytes", p.min_bytes).num("max_bytes", p.max_bytes);
        if (!p.enum_values.empty()) {
          JsonArray e;
          for (const auto& v : p.enum_values) e.str(v);
          j.raw("enum", e.done());
        }
        break;
      }
      case scenario::ParamType::kPath: {
        JsonArray pre, exc;
        for (const auto& v : p.path_prefixes) pre.str(v);
        for (const auto& v : p.path_excludes) exc.str(v);
        j.num("max_bytes", p.max_bytes).raw("path_prefixes", pre.done());
        j.raw("path_excludes", exc.done());
        break;
      }
      case scenario::ParamType::kInteger:
        j.num("min", p.min).num("max", p.max);
        break;
      case scenario::ParamType::kTarget:
        j.str("target_kind", p.target_kind).boolean("allow_literal", p.allow_literal);
        if (p.allow_literal) j.num("max_literal_bytes", p.max_literal_bytes);
        break;
      case scenario::ParamType::kMode: {
        char mask[8];
        std::snprintf(mask, sizeof mask, "%04o", p.mode_mask);
        j.str("mode_mask", mask);
        break;
      }
      default:
        break;
    }
    out.raw(j.done());
  }
  return out.done();
}

std::string calls_json(const std::vector<scenario::CallSpec>& calls, bool with_cost) {
  JsonArray out;
  for (const auto& c : calls) {
    JsonWriter j;
    j.str("name", c.name).str("summary", c.summary);
    if (with_cost) j.num("cost", c.cost);
    out.raw(j.raw("params", params_json(c.params)).done());
  }
  return out.done();
}

// The members of each attempt event a learner is shown. World ids, resolved node names, check
// observations of the gate's worlds and the seed are never among them: they would describe a
// hidden twin or control.
struct Shown {
  std::string_view type;
  std::vector<std::string_view> members;
};
const Shown kLearnerShown[] = {
    {ev::kAttemptStarted, {"learner", "mode", "probe_budget"}},
    {ev::kAttemptPhase, {"from", "to"}},
    {ev::kAttemptPredicted, {"hypothesis", "expect", "confidence"}},
    {ev::kProbeRequested, {"probe", "call", "cost", "spent"}},
    {ev::kProbeCompleted, {"probe", "evidence", "exit_code", "truncated", "error", "refused"}},
    {ev::kInterventionSubmitted, {"revision", "ir_sha256", "scripts"}},
    {ev::kScriptAuthorized, {"revision", "sha256"}},
    {ev::kActionCompleted, {"index", "call", "script_sha256", "exit_code", "error", "truncated"}},
    {ev::kApplyCompleted, {"revision", "actions", "failed", "aborted"}},
    {ev::kAckReadback, {"revision", "as_requested", "actions"}},
    {ev::kAttemptAcknowledged, {"readback", "note"}},
    {ev::kVerifyFact, {"check", "kind", "ok", "observed"}},
    {ev::kAttemptVerified, {"recovered"}},
    {ev::kGateStarted, {"revision", "ir_sha256", "stop_at_first_failure"}},
    // Not its error: a gate world's error names what a target resolved to there ("resolved to
    // 2 nodes (web1, web3)"), the hidden world's layout. The exit code says it failed.
    {ev::kGateAction, {"property", "stage", "index", "exit_code"}},
    {ev::kGateFact, {"property", "stage", "check", "ok"}},
    // The grader's reason names the world a check failed on; a learner is told the finding:
    // the check, its public description and what was observed, from pass or fail alone.
    {ev::kGateProperty, {"property", "status", "finding"}},
    {ev::kGateVerdict, {"verdict", "recovered"}},
    {ev::kReceiptIssued, {"receipt_sha256"}},
    {ev::kAttemptReflected, {"text"}},
    {ev::kAttemptAbandoned, {"reason"}},
    {ev::kWorldReset, {"reason", "previous"}},
    {ev::kCoachUsed, {"call", "model"}},
};

const Shown kJudgeShown[] = {
    {ev::kAttemptStarted, {"mode"}},
    {ev::kAttemptPhase, {"from", "to"}},
    {ev::kApplyCompleted, {"actions", "failed", "aborted"}},
    {ev::kVerifyFact, {"check", "kind", "ok"}},
    {ev::kAttemptVerified, {"recovered"}},
    {ev::kGateStarted, {"stop_at_first_failure"}},
    {ev::kGateFact, {"property", "world", "stage", "check", "ok"}},
    {ev::kGateProperty, {"property", "status", "reason", "finding"}},
    {ev::kGateVerdict, {"verdict", "recovered"}},
    {ev::kReceiptIssued, {"receipt_sha256"}},
};

template <size_t N>
std::optional<std::string> shown_json(const EventView& e, const Shown (&table)[N]) {
  const Shown* shown = nullptr;
  for (const auto& s : table) {
    if (s.type == e.type) shown = &s;
  }
  if (!shown) return std::nullopt;
  thread_local json::Reader reader;
  auto o = reader.parse_object(e.payload);
  if (!o.ok()) return std::nullopt;
  JsonWriter data;
  for (std::string_view m : shown->members) {
    if (auto v = o->optional_value(m)) data.raw(m, v->minified());
  }
  return JsonWriter()
      .num("seq", e.seq)
      .str("type", e.type)
      .num("ts_us", e.ts_us)
      .raw("data", data.done())
      .done();
}

}  // namespace

namespace {

// The catalog's members, written by one function for the scenario's page and an attempt's
// catalog alike: hypotheses, probes (with costs), actions, target terms, checks.
// `between` writes what comes after the hypotheses (the budget).
void catalog_members(JsonWriter& j, const scenario::Manifest& m,
                     const std::function<void(JsonWriter&)>& between) {
  JsonArray hyps, targets, checks;
  for (const auto& h : m.hypotheses)
    hyps.raw(JsonWriter().str("id", h.id).str("text", h.text).done());
  for (const auto& t : m.targets) {
    targets.raw(JsonWriter()
                    .str("name", t.name)
                    .str("kind", t.kind)
                    .str("type", t.selector ? "selector" : "role")
                    .str("description", t.description)
                    .num("max_matches", t.max_matches)
                    .done());
  }
  for (const auto& c : m.checks) {
    JsonArray reads;
    for (const auto& name : c.policies) reads.str(name);
    checks.raw(JsonWriter()
                   .str("id", c.id)
                   .str("kind", scenario::check_kind_name(c.kind))
                   .str("description", c.description)
                   .raw("policies", reads.done())
                   .done());
  }
  // The policies by name and what they say; their parameters stay with the checks (they name
  // paths of every world variant, twins' included).
  JsonArray policies;
  for (const auto& p : m.policies)
    policies.raw(JsonWriter().str("name", p.name).str("description", p.description).done());
  j.raw("hypotheses", hyps.done());
  between(j);
  j.raw("probes", calls_json(m.probes, true))
      .raw("actions", calls_json(m.actions, false))
      .raw("targets", targets.done())
      .raw("policies", policies.done())
      .raw("checks", checks.done());
  // The change surface, public before anything is submitted (docs/GATE.md, "Change set").
  if (m.changes) {
    auto rules = [](const std::vector<scenario::SurfaceRule>& list, bool what) {
      JsonArray out;
      for (const auto& r : list) {
        JsonArray paths, attrs;
        for (const auto& p : r.paths) paths.str(p);
        for (const auto& a : r.what) attrs.str(a);
        JsonWriter w;
        w.str("name", r.name).str("description", r.description).raw("paths", paths.done());
        if (what) w.raw("what", attrs.done());
        out.raw(w.done());
      }
      return out.done();
    };
    j.raw("changes", JsonWriter()
                         .raw("fix", rules(m.changes->fix, true))
                         .raw("runtime", rules(m.changes->runtime, false))
                         .done());
  }
}

}  // namespace

std::string scenario_public_json(const scenario::Manifest& m) {
  JsonWriter j;
  j.str("id", m.id)
      .str("version", m.version)
      .str("family", m.family)
      .str("title", m.title)
      .str("briefing", m.briefing);
  catalog_members(j, m, [&](JsonWriter& w) {
    w.num("probe_budget", m.probe_budget).boolean("allow_scripts", m.allow_scripts);
  });
  return j.done();
}

std::string attempt_catalog_json(const scenario::Manifest& m, const attempt::AttemptState& s) {
  JsonWriter j;
  j.str("attempt", s.id)
      .str("scenario", m.id)
      .str("version", m.version)
      .str("title", m.title)
      .str("phase", attempt::phase_name(s.phase));
  catalog_members(j, m, [&](JsonWriter& w) {
    w.num("probe_budget", s.probe_budget)
        .num("spent", s.spent)
        .num("remaining", s.spent >= s.probe_budget ? 0 : s.probe_budget - s.spent)
        .boolean("allow_scripts", m.allow_scripts);
  });
  return j.str("next", next_step(s)).done();
}

std::string next_step(const attempt::AttemptState& s) {
  switch (s.phase) {
    case Phase::kObserve:
    case Phase::kPredict:
      return "read the briefing and the hypotheses, then predict: pick the hypothesis you "
             "believe and say what you expect a probe to show (the catalog lists the probes you "
             "can run)";
    case Phase::kInspect:
      if (s.spent >= s.probe_budget) {
        return "the probe budget is spent: submit an InterventionIR citing your evidence (the "
               "catalog lists its actions, target terms and checks)";
      }
      return "probe the system (" + std::to_string(s.probe_budget - s.spent) + " of " +
             std::to_string(s.probe_budget) +
             " budget left; the catalog lists each probe with its parameters and cost), then "
             "submit an InterventionIR citing the evidence it rests on";
    case Phase::kContract:
      for (const auto& [sha, st] : s.scripts) {
        if (st == attempt::ScriptStatus::kPendingFeedback) {
          return "authorize script " + sha + " (or submit a revision), then apply";
        }
      }
      return "apply the intervention (or submit a revision first)";
    case Phase::kApply:
    case Phase::kAck:
      if (s.readback_seq != 0) {
        return "read the supervisor's readback of what the apply did (ack.readback at seq " +
               std::to_string(s.readback_seq) +
               ") and acknowledge it (or reset the world if it is not what you asked for)";
      }
      return "read the supervisor's readback of what the apply did and acknowledge it (or "
             "reset the world if it is not what you asked for)";
    case Phase::kVerify:
      return "verify: the primary's checks run on your live world";
    case Phase::kTransferGate:
      return "run the transfer gate: your fix is tried on fresh worlds (primary, a hidden twin, "
             "a healthy control, repeated and reversed)";
    case Phase::kReceipt:
      return "the gate verified your fix: issue the receipt";
    case Phase::kReflect:
      if (s.verdict == "VERIFIED") return "reflect on what you learned";
      return "the verdict is " + (s.verdict.empty() ? std::string("not VERIFIED") : s.verdict) +
             "; receipts are issued only for VERIFIED: reflect on what the gate showed";
    case Phase::kDone:
      return "this attempt is done: start a new one";
  }
  return "";
}

std::string attempt_view_json(const attempt::AttemptState& s) {
  JsonArray evidence, scripts;
  for (const auto& e : s.unlocked) evidence.str(e);
  for (const auto& [sha, st] : s.scripts) {
    if (st == attempt::ScriptStatus::kPendingFeedback) scripts.str(sha);
  }
  JsonWriter j;
  j.str("attempt", s.id)
      .str("scenario", s.scenario_id)
      .str("scenario_version", s.scenario_version)
      .str("learner", s.learner)
      .str("mode", s.mode)
      .str("phase", attempt::phase_name(s.phase));
  if (s.predicted) j.str("hypothesis", s.hypothesis);
  j.num("probe_budget", s.probe_budget).num("spent", s.spent).num("probes", s.probes);
  j.raw("evidence", evidence.done());
  if (s.revision > 0) j.num("ir_revision", s.revision).str("ir_sha256", s.ir_sha256);
  j.raw("scripts_pending", scripts.done());
  j.boolean("applied", s.applied).boolean("recovered", s.recovered_live);
  if (!s.findings.empty()) {
    // The failed properties, as the grader words them for a learner (never a world's layout).
    JsonArray findings;
    for (const auto& f : s.findings) {
      findings.raw(JsonWriter()
                       .str("property", f.property)
                       .str("check", f.check)
                       .str("description", f.description)
                       .str("observed", f.observed)
                       .done());
    }
    j.raw("findings", findings.done());
  }
  if (!s.verdict.empty()) j.str("verdict", s.verdict);
  if (!s.receipt_sha256.empty()) j.str("receipt_sha256", s.receipt_sha256);
  j.num("first_seq", s.first_seq).num("last_seq", s.last_seq);
  return j.str("next", next_step(s)).done();
}

std::optional<std::string> learner_event_json(const EventView& e) {
  return shown_json(e, kLearnerShown);
}

std::optional<std::string> judge_event_json(const EventView& e) {
  return shown_json(e, kJudgeShown);
}

}  // namespace aura::app
