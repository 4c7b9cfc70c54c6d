#include "engine/attempt/attempt_state.h"

#include <simdjson.h>

#include "engine/blob/evidence_ref.h"

namespace aura::attempt {
namespace {

constexpr std::string_view kPhaseNames[] = {
    "observe", "predict",       "inspect", "contract", "apply", "ack",
    "verify",  "transfer_gate", "receipt", "reflect",  "done",
};

// Typed access to a payload's members; every error names the seq, type and member.
class Payload {
 public:
  Status parse(const EventView& e) {
    e_ = &e;
    auto r = parser_.parse(e.payload.data(), e.payload.size());
    if (r.error()) return bad("", "does not parse as JSON");
    if (r.value().get_object().get(obj_)) return bad("", "is not an object");
    return Status::ok();
  }
  Result<std::string> str(std::string_view key) {
    std::string_view v;
    if (obj_[key].get_string().get(v)) return bad(key, "missing or not a string");
    return std::string(v);
  }
  Result<uint64_t> u64(std::string_view key) {
    uint64_t v = 0;
    if (obj_[key].get_uint64().get(v)) return bad(key, "missing or not an unsigned integer");
    return v;
  }
  Result<bool> boolean(std::string_view key) {
    bool v = false;
    if (obj_[key].get_bool().get(v)) return bad(key, "missing or not a boolean");
    return v;
  }
  Result<simdjson::dom::object> object(std::string_view key) {
    simdjson::dom::object o;
    if (obj_[key].get_object().get(o)) return bad(key, "missing or not an object");
    return o;
  }
  Result<simdjson::dom::array> array(std::string_view key) {
    simdjson::dom::array a;
    if (obj_[key].get_array().get(a)) return bad(key, "missing or not an array");
    return a;
  }
  // The ref with `id` in the payload's "refs".
  Result<BlobRef> ref(std::string_view id, std::string_view kind) {
    auto refs = extract_refs(e_->payload);
    if (!refs.ok()) return bad("refs", refs.status().message());
    for (const auto& r : *refs) {
      if (r.id != id) continue;
      if (r.kind != kind) return bad("refs", "ref " + std::string(id) + " has kind " + r.kind);
      return BlobRef{r.sha256, r.bytes};
    }
    return bad("refs", "no ref with id " + std::string(id));
  }
  Status bad(std::string_view member, std::string_view what) const {
    std::string m = "seq " + std::to_string(e_->seq) + " (" + std::string(e_->type) + ")";
    if (!member.empty()) m += " member \"" + std::string(member) + "\"";
    return Status::corruption(m + ": " + std::string(what));
  }

 private:
  simdjson::dom::parser parser_;
  simdjson::dom::object obj_;
  const EventView* e_ = nullptr;
};

Status fold_started(AttemptState& s, Payload& p, const EventView& e) {
  AURA_ASSIGN_OR_RETURN(s.id, p.str("attempt"));
  AURA_ASSIGN_OR_RETURN(s.learner, p.str("learner"));
  AURA_ASSIGN_OR_RETURN(s.mode, p.str("mode"));
  AURA_ASSIGN_OR_RETURN(s.seed, p.u64("seed"));
  simdjson::dom::object sc;
  AURA_ASSIGN_OR_RETURN(sc, p.object("scenario"));
  auto field = [&](std::string_view k, std::string& out) -> Status {
    std::string_view v;
    if (sc[k].get_string().get(v)) return p.bad("scenario." + std::string(k), "missing");
    out = std::string(v);
    return Status::ok();
  };
  AURA_RETURN_IF_ERROR(field("id", s.scenario_id));
  AURA_RETURN_IF_ERROR(field("version", s.scenario_version));
  AURA_RETURN_IF_ERROR(field("package_digest", s.package_digest));
  AURA_RETURN_IF_ERROR(field("manifest_sha256", s.manifest_sha256));
  AURA_RETURN_IF_ERROR(field("publisher", s.publisher));
  AURA_RETURN_IF_ERROR(field("dir", s.package_dir));
  uint64_t budget = 0;
  AURA_ASSIGN_OR_RETURN(budget, p.u64("probe_budget"));
  s.probe_budget = static_cast<uint32_t>(budget);
  AURA_ASSIGN_OR_RETURN(s.manifest, p.ref("manifest", "scenario.manifest"));
  if (to_hex(s.manifest.sha256) != s.manifest_sha256)
    return p.bad("refs", "manifest blob digest differs from scenario.manifest_sha256");
  s.phase = Phase::kObserve;
  s.first_seq = e.seq;
  return Status::ok();
}

}  // namespace

std::string_view phase_name(Phase p) { return kPhaseNames[static_cast<size_t>(p)]; }

std::optional<Phase> parse_phase(std::string_view name) {
  for (size_t i = 0; i < std::size(kPhaseNames); ++i)
    if (kPhaseNames[i] == name) return static_cast<Phase>(i);
  return std::nullopt;
}

std::string stream_of(std::string_view attempt_id) { return "attempt/" + std::string(attempt_id); }

bool is_valid_attempt_id(std::string_view id) {
  if (id.size() != 16) return false;
  for (char c : id)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

std::string_view script_status_name(ScriptStatus s) {
  switch (s) {
    case ScriptStatus::kPendingFeedback:
      return "pending_feedback";
    case ScriptStatus::kPendingExecution:
      return "pending_execution";
    case ScriptStatus::kExecuted:
      return "executed";
  }
  return "?";
}

Status fold_event(AttemptState& s, const EventView& e) {
  Payload p;
  AURA_RETURN_IF_ERROR(p.parse(e));
  const std::string_view type = e.type;
  if (s.events == 0) {
    if (type != "attempt.started") return p.bad("", "the first event must be attempt.started");
    AURA_RETURN_IF_ERROR(fold_started(s, p, e));
  } else {
    std::string id;
    AURA_ASSIGN_OR_RETURN(id, p.str("attempt"));
    if (id != s.id) return p.bad("attempt", "belongs to attempt " + id);
    if (type == "attempt.started") {
      return p.bad("", "a second attempt.started");
    } else if (type == "attempt.phase") {
      std::string from, to;
      AURA_ASSIGN_OR_RETURN(from, p.str("from"));
      AURA_ASSIGN_OR_RETURN(to, p.str("to"));
      if (from != phase_name(s.phase))
        return p.bad("from",
                     "is " + from + " but the attempt is in " + std::string(phase_name(s.phase)));
      auto next = parse_phase(to);
      if (!next) return p.bad("to", "unknown phase " + to);
      s.phase = *next;
    } else if (type == "attempt.predicted") {
      AURA_ASSIGN_OR_RETURN(s.hypothesis, p.str("hypothesis"));
      s.predicted = true;
    } else if (type == "probe.requested") {
      uint64_t n = 0, spent = 0;
      AURA_ASSIGN_OR_RETURN(n, p.u64("probe"));
      AURA_ASSIGN_OR_RETURN(spent, p.u64("spent"));
      if (n != s.probes + 1u) return p.bad("probe", "out of order");
      if (spent > s.probe_budget) return p.bad("spent", "over the probe budget");
      s.probes = static_cast<uint32_t>(n);
      s.spent = static_cast<uint32_t>(spent);
    } else if (type == "probe.completed") {
      uint64_t n = 0;
      std::string ev;
      AURA_ASSIGN_OR_RETURN(n, p.u64("probe"));
      AURA_ASSIGN_OR_RETURN(ev, p.str("evidence"));
      if (n != s.probes_completed + 1u || n > s.probes) return p.bad("probe", "out of order");
      if (ev != "ev-" + std::to_string(n))
        return p.bad("evidence", "is not ev-" + std::to_string(n));
      BlobRef out;
      AURA_ASSIGN_OR_RETURN(out, p.ref(ev, "probe.output"));
      (void)out;
      s.probes_completed = static_cast<uint32_t>(n);
      s.unlocked.insert(ev);
    } else if (type == "intervention.submitted") {
      uint64_t rev = 0;
      AURA_ASSIGN_OR_RETURN(rev, p.u64("revision"));
      if (rev != s.revision + 1u) return p.bad("revision", "out of order");
      s.revision = static_cast<uint32_t>(rev);
      AURA_ASSIGN_OR_RETURN(s.ir_sha256, p.str("ir_sha256"));
      AURA_ASSIGN_OR_RETURN(s.ir, p.ref("ir-" + std::to_string(rev), "intervention.ir"));
      if (to_hex(s.ir.sha256) != s.ir_sha256)
        return p.bad("refs", "IR blob digest differs from ir_sha256");
      s.scripts.clear();
      simdjson::dom::array scripts;
      AURA_ASSIGN_OR_RETURN(scripts, p.array("scripts"));
      for (auto item : scripts) {
        std::string_view sha;
        if (item["sha256"].get_string().get(sha)) return p.bad("scripts", "entry without sha256");
        s.scripts[std::string(sha)] = ScriptStatus::kPendingFeedback;
      }
    } else if (type == "script.authorized") {
      std::string sha;
      uint64_t rev = 0;
      AURA_ASSIGN_OR_RETURN(sha, p.str("sha256"));
      AURA_ASSIGN_OR_RETURN(rev, p.u64("revision"));
      auto it = s.scripts.find(sha);
      if (rev != s.revision || it == s.scripts.end())
        return p.bad("sha256", "names no script of the current revision");
      it->second = ScriptStatus::kPendingExecution;
    } else if (type == "action.completed") {
      s.actions_run++;
    } else if (type == "apply.completed") {
      s.applied = true;
      for (auto& [sha, st] : s.scripts)
        if (st == ScriptStatus::kPendingExecution) st = ScriptStatus::kExecuted;
    } else if (type == "world.reset") {
      // A fresh live world: nothing of the IR has run on it.
      s.applied = false;
      s.recovered_live = false;
      for (auto& [sha, st] : s.scripts)
        if (st == ScriptStatus::kExecuted) st = ScriptStatus::kPendingExecution;
    } else if (type == "attempt.verified") {
      AURA_ASSIGN_OR_RETURN(s.recovered_live, p.boolean("recovered"));
    } else if (type == "gate.started") {
      s.gate_seq = e.seq;
    } else if (type == "gate.verdict") {
      uint64_t gate = 0;
      AURA_ASSIGN_OR_RETURN(gate, p.u64("gate"));
      if (gate != s.gate_seq) return p.bad("gate", "names no gate.started of this attempt");
      AURA_ASSIGN_OR_RETURN(s.verdict, p.str("verdict"));
    } else if (type == "receipt.issued") {
      AURA_ASSIGN_OR_RETURN(s.receipt_sha256, p.str("receipt_sha256"));
    }
    // Other types (facts, actions, acknowledgements, reflections) carry no state a command
    // checks; projections read them.
  }
  if (s.last_seq != 0 && e.seq <= s.last_seq) return p.bad("", "seq does not increase");
  s.last_seq = e.seq;
  s.events++;
  return Status::ok();
}

Result<AttemptState> replay_attempt(const EventLog& log, std::string_view attempt_id) {
  if (!is_valid_attempt_id(attempt_id))
    return Status::invalid("attempt id \"" + std::string(attempt_id) +
                           "\" is not 16 lowercase hex digits");
  AttemptState s;
  Status fold = Status::ok();
  Status read = log.read_stream(stream_of(attempt_id), 1, [&](const EventView& e) {
    fold = fold_event(s, e);
    return fold.is_ok();
  });
  AURA_RETURN_IF_ERROR(read);
  AURA_RETURN_IF_ERROR(fold.with_context("attempt " + std::string(attempt_id)));
  if (s.events == 0) return Status::not_found("no attempt " + std::string(attempt_id));
  return s;
}

}  // namespace aura::attempt
