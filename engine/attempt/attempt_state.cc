#include "engine/attempt/attempt_state.h"

#include "engine/blob/evidence_ref.h"
#include "engine/events/attempt_events.h"
#include "engine/events/gate_events.h"
#include "engine/events/world_events.h"

namespace aura::attempt {
namespace {

namespace ev = aura::events;

// An error about event `e`: "seq N (type): what" (what names the member, from the decoder).
Status bad(const EventView& e, std::string_view what) {
  return Status::corruption("seq " + std::to_string(e.seq) + " (" + std::string(e.type) +
                            "): " + std::string(what));
}

// Decodes `e` as T through the catalog; a malformed payload is corruption naming the seq.
template <class T>
Result<T> decode_in_fold(ev::PayloadReader& r, const EventView& e) {
  auto p = T::decode(r, e);
  if (!p.ok()) return bad(e, p.status().message());
  return p;
}

// The ref with `id` and `kind` in `refs`.
Result<BlobRef> ref_of(const EventView& e, const std::vector<EvidenceRef>& refs,
                       std::string_view id, std::string_view kind) {
  for (const auto& r : refs) {
    if (r.id != id) continue;
    if (r.kind != kind) return bad(e, "refs: ref " + std::string(id) + " has kind " + r.kind);
    return BlobRef{r.sha256, r.bytes};
  }
  return bad(e, "refs: no ref with id " + std::string(id));
}

Status fold_started(AttemptState& s, ev::PayloadReader& r, const EventView& e) {
  ev::AttemptStarted p;
  AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::AttemptStarted>(r, e));
  if (p.scenario.dir.empty()) return bad(e, "member \"scenario.dir\": missing");
  s.id = std::move(p.attempt);
  s.learner = std::move(p.learner);
  s.mode = std::move(p.mode);
  s.seed = p.seed;
  s.scenario_id = std::move(p.scenario.id);
  s.scenario_version = std::move(p.scenario.version);
  s.package_digest = std::move(p.scenario.package_digest);
  s.manifest_sha256 = std::move(p.scenario.manifest_sha256);
  s.publisher = std::move(p.scenario.publisher);
  s.package_dir = std::move(p.scenario.dir);
  if (p.probe_budget > UINT32_MAX) return bad(e, "member \"probe_budget\": too large");
  s.probe_budget = static_cast<uint32_t>(p.probe_budget);
  AURA_ASSIGN_OR_RETURN(s.manifest, ref_of(e, p.refs, "manifest", "scenario.manifest"));
  if (to_hex(s.manifest.sha256) != s.manifest_sha256)
    return bad(e, "refs: manifest blob digest differs from scenario.manifest_sha256");
  s.phase = Phase::kObserve;
  s.first_seq = e.seq;
  return Status::ok();
}

// Folds an event after attempt.started.
Status fold_next(AttemptState& s, ev::PayloadReader& r, const EventView& e) {
  const std::string_view type = e.type;
  if (type == ev::kAttemptStarted) return bad(e, "a second attempt.started");
  if (type == ev::kAttemptPhase) {
    ev::AttemptPhase p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::AttemptPhase>(r, e));
    if (p.from != phase_name(s.phase))
      return bad(e, "member \"from\": is " + p.from + " but the attempt is in " +
                        std::string(phase_name(s.phase)));
    s.phase = *parse_phase(p.to);    // the decoder checked it is a phase
    if (s.phase == Phase::kApply) {  // a new apply: no readback of it yet
      s.readback_seq = 0;
      s.readback_as_requested = false;
      s.readback_sha256.clear();
    }
  } else if (type == ev::kAttemptPredicted) {
    ev::AttemptPredicted p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::AttemptPredicted>(r, e));
    s.hypothesis = std::move(p.hypothesis);
    s.predicted = true;
  } else if (type == ev::kProbeRequested) {
    ev::ProbeRequested p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::ProbeRequested>(r, e));
    if (p.probe != s.probes + 1u) return bad(e, "member \"probe\": out of order");
    if (p.spent > s.probe_budget) return bad(e, "member \"spent\": over the probe budget");
    if (p.spent != uint64_t(s.spent) + p.cost)
      return bad(e, "member \"spent\": is not the spent before it plus \"cost\"");
    s.last_probe_cost = p.cost;
    s.probes = static_cast<uint32_t>(p.probe);
    s.spent = static_cast<uint32_t>(p.spent);
  } else if (type == ev::kProbeCompleted) {
    ev::ProbeCompleted p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::ProbeCompleted>(r, e));
    if (p.probe != s.probes_completed + 1u || p.probe > s.probes)
      return bad(e, "member \"probe\": out of order");
    if (p.evidence != "ev-" + std::to_string(p.probe))
      return bad(e, "member \"evidence\": is not ev-" + std::to_string(p.probe));
    BlobRef out;
    AURA_ASSIGN_OR_RETURN(out, ref_of(e, p.refs, p.evidence, "probe.output"));
    (void)out;
    // A refused probe spent nothing: its probe.requested must have charged 0.
    if (p.refused && (p.probe != s.probes || s.last_probe_cost != 0))
      return bad(e, "member \"refused\": its probe.requested charged a cost");
    if (p.refused) s.probes_refused++;
    s.probes_completed = static_cast<uint32_t>(p.probe);
    s.unlocked.insert(p.evidence);
  } else if (type == ev::kInterventionSubmitted) {
    ev::InterventionSubmitted p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::InterventionSubmitted>(r, e));
    if (p.revision != s.revision + 1u) return bad(e, "member \"revision\": out of order");
    s.revision = static_cast<uint32_t>(p.revision);
    s.ir_sha256 = std::move(p.ir_sha256);
    AURA_ASSIGN_OR_RETURN(s.ir,
                          ref_of(e, p.refs, "ir-" + std::to_string(p.revision), "intervention.ir"));
    if (to_hex(s.ir.sha256) != s.ir_sha256)
      return bad(e, "refs: IR blob digest differs from ir_sha256");
    s.scripts.clear();
    for (const auto& script : p.scripts) s.scripts[script.sha256] = ScriptStatus::kPendingFeedback;
  } else if (type == ev::kScriptAuthorized) {
    ev::ScriptAuthorized p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::ScriptAuthorized>(r, e));
    auto it = s.scripts.find(p.sha256);
    if (p.revision != s.revision || it == s.scripts.end())
      return bad(e, "member \"sha256\": names no script of the current revision");
    it->second = ScriptStatus::kPendingExecution;
  } else if (type == ev::kActionCompleted) {
    AURA_RETURN_IF_ERROR(decode_in_fold<ev::ActionCompleted>(r, e).status());
    s.actions_run++;
  } else if (type == ev::kApplyCompleted) {
    AURA_RETURN_IF_ERROR(decode_in_fold<ev::ApplyCompleted>(r, e).status());
    s.applied = true;
    for (auto& [sha, st] : s.scripts)
      if (st == ScriptStatus::kPendingExecution) st = ScriptStatus::kExecuted;
  } else if (type == ev::kAckReadback) {
    ev::AckReadback p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::AckReadback>(r, e));
    s.readback_seq = e.seq;
    s.readback_as_requested = p.as_requested;
    s.readback_sha256 = to_hex(sha256(p.actions_json()));
  } else if (type == ev::kAttemptAcknowledged) {
    ev::AttemptAcknowledged p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::AttemptAcknowledged>(r, e));
    // The acknowledgement cites the latest readback, by seq and digest.
    if (p.readback != s.readback_seq || s.readback_seq == 0)
      return bad(e, "member \"readback\": is not the seq of the latest ack.readback");
    if (p.readback_sha256 != s.readback_sha256)
      return bad(e, "member \"readback_sha256\": is not the digest of that readback");
  } else if (type == ev::kWorldReset) {
    AURA_RETURN_IF_ERROR(decode_in_fold<ev::WorldReset>(r, e).status());
    // A fresh live world: nothing of the IR has run on it, and nothing is read back.
    s.readback_seq = 0;
    s.readback_as_requested = false;
    s.readback_sha256.clear();
    s.applied = false;
    s.recovered_live = false;
    for (auto& [sha, st] : s.scripts)
      if (st == ScriptStatus::kExecuted) st = ScriptStatus::kPendingExecution;
  } else if (type == ev::kAttemptVerified) {
    ev::AttemptVerified p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::AttemptVerified>(r, e));
    s.recovered_live = p.recovered;
  } else if (type == ev::kGateStarted) {
    AURA_RETURN_IF_ERROR(decode_in_fold<ev::GateStarted>(r, e).status());
    s.gate_seq = e.seq;
    s.findings.clear();
  } else if (type == ev::kGateProperty) {
    ev::GateProperty p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::GateProperty>(r, e));
    if (!p.finding_observed.empty()) {
      s.findings.push_back({std::move(p.property), std::move(p.finding_check),
                            std::move(p.finding_description), std::move(p.finding_observed)});
    }
  } else if (type == ev::kGateVerdict) {
    ev::GateVerdict p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::GateVerdict>(r, e));
    if (p.gate != s.gate_seq)
      return bad(e, "member \"gate\": names no gate.started of this attempt");
    s.verdict = std::move(p.verdict);
  } else if (type == ev::kReceiptIssued) {
    ev::ReceiptIssued p;
    AURA_ASSIGN_OR_RETURN(p, decode_in_fold<ev::ReceiptIssued>(r, e));
    s.receipt_sha256 = std::move(p.receipt_sha256);
  }
  // Other types (facts, actions, acknowledgements, reflections) carry no state a command
  // checks; projections read them. Their payload was still checked ("v", "attempt",
  // duplicates) by fold_event.
  return Status::ok();
}

}  // namespace

std::string_view phase_name(Phase p) { return ev::kPhases[static_cast<size_t>(p)]; }

std::optional<Phase> parse_phase(std::string_view name) {
  for (size_t i = 0; i < std::size(ev::kPhases); ++i)
    if (ev::kPhases[i] == name) return static_cast<Phase>(i);
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
  // One reader per thread: its parser keeps its buffers across events.
  thread_local ev::PayloadReader reader;
  // Every event: an object with no duplicate member, "v":1 first, the stream's attempt.
  auto payload = reader.open(e);
  if (!payload.ok()) return bad(e, payload.status().message());
  if (s.events == 0) {
    if (e.type != ev::kAttemptStarted) return bad(e, "the first event must be attempt.started");
    AURA_RETURN_IF_ERROR(fold_started(s, reader, e));
  } else {
    auto id = payload->required_string("attempt");
    if (!id.ok()) return bad(e, id.status().message());
    if (*id != s.id) return bad(e, "member \"attempt\": belongs to attempt " + std::string(*id));
    AURA_RETURN_IF_ERROR(fold_next(s, reader, e));
  }
  if (s.last_seq != 0 && e.seq <= s.last_seq) return bad(e, "seq does not increase");
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
