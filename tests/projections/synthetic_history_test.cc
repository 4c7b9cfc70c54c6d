// The lab's synthetic history generator (app/lab/synthetic_history.h) writes what the engine
// would: every event of the story decodes through the event catalog, and every attempt stream
// folds through the engine's own attempt state machine to the phase and verdict its plan says.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "engine/attempt/attempt_state.h"
#include "engine/events/attempt_events.h"
#include "engine/events/gate_events.h"
#include "engine/events/registry_events.h"
#include "engine/events/world_events.h"
#include "tests/projections/lab_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
namespace ev = aura::events;

namespace {

// Decodes `e` with the catalog's type for it; an error for a type without one.
Status decode_any(ev::PayloadReader& r, const EventView& e) {
  const std::string_view t = e.type;
  auto as = [&](auto tag) -> Status {
    using T = decltype(tag);
    return T::decode(r, e).status();
  };
  if (t == ev::kAttemptStarted) return as(ev::AttemptStarted{});
  if (t == ev::kAttemptPhase) return as(ev::AttemptPhase{});
  if (t == ev::kAttemptPredicted) return as(ev::AttemptPredicted{});
  if (t == ev::kProbeRequested) return as(ev::ProbeRequested{});
  if (t == ev::kProbeCompleted) return as(ev::ProbeCompleted{});
  if (t == ev::kInterventionSubmitted) return as(ev::InterventionSubmitted{});
  if (t == ev::kScriptAuthorized) return as(ev::ScriptAuthorized{});
  if (t == ev::kActionCompleted) return as(ev::ActionCompleted{});
  if (t == ev::kApplyCompleted) return as(ev::ApplyCompleted{});
  if (t == ev::kAckReadback) return as(ev::AckReadback{});
  if (t == ev::kAttemptAcknowledged) return as(ev::AttemptAcknowledged{});
  if (t == ev::kVerifyFact) return as(ev::VerifyFact{});
  if (t == ev::kAttemptVerified) return as(ev::AttemptVerified{});
  if (t == ev::kCoachUsed) return as(ev::CoachUsed{});
  if (t == ev::kWorldBuilt) return as(ev::WorldBuilt{});
  if (t == ev::kGateStarted) return as(ev::GateStarted{});
  if (t == ev::kGateAction) return as(ev::GateAction{});
  if (t == ev::kGateFact) return as(ev::GateFact{});
  if (t == ev::kGateProperty) return as(ev::GateProperty{});
  if (t == ev::kGateVerdict) return as(ev::GateVerdict{});
  if (t == ev::kReceiptIssued) return as(ev::ReceiptIssued{});
  if (t == ev::kAttemptReflected) return as(ev::AttemptReflected{});
  if (t == ev::kAttemptAbandoned) return as(ev::AttemptAbandoned{});
  if (t == ev::kScenarioLoaded) return as(ev::ScenarioLoaded{});
  if (t == ev::kScenarioRejected) return as(ev::ScenarioRejected{});
  if (t == ev::kCapabilitiesMeasured) return as(ev::CapabilitiesMeasured{});
  if (t == ev::kOperatorNote) return Status::ok();  // an operator's payload is free-form
  return Status::invalid(std::string(t) + ": no codec in the catalog");
}

}  // namespace

TEST_CASE("synthetic history: every event of the story decodes through the event catalog") {
  testing::TempDir dir;
  testing::StoryLog s(dir.path(), 2);
  ev::PayloadReader r;
  std::map<std::string, int> types;
  uint64_t seq = 0;
  for (const EventDraft& d : s.story.drafts) {
    ++seq;
    CAPTURE(seq);
    CAPTURE(d.type);
    const EventView e{seq, {}, 0, d.stream, d.type, d.actor, d.payload, {}};
    const Status st = decode_any(r, e);
    CHECK_MESSAGE(st.is_ok(), st.message());
    ++types[d.type];
  }
  // Every kind of an attempt's event is in it, the gate's and the worlds' included.
  for (std::string_view t :
       {ev::kWorldBuilt, ev::kGateAction, ev::kGateFact, ev::kAckReadback, ev::kCoachUsed,
        ev::kScriptAuthorized, ev::kReceiptIssued, ev::kAttemptAbandoned, ev::kVerifyFact}) {
    CAPTURE(t);
    CHECK(types[std::string(t)] > 0);
  }
}

TEST_CASE("synthetic history: each attempt folds through the engine's state machine as planned") {
  testing::TempDir dir;
  testing::StoryLog s(dir.path(), 1);
  s.append_all_of_story();
  for (const testing::AttemptPlan& plan : s.story.attempts) {
    CAPTURE(plan.id);
    // A probe without output lists no ref, which the engine never writes: the fold refuses it.
    if (plan.probe_without_output) continue;
    auto state = attempt::replay_attempt(*s.log, plan.id);
    REQUIRE_MESSAGE(state.ok(), state.status().message());
    CHECK(state->phase == attempt::Phase::kDone);
    CHECK(state->verdict == plan.verdict);
    CHECK(state->revision == (plan.verdict.empty() ? 0u : plan.second_revision ? 2u : 1u));
    CHECK(state->receipt_sha256.empty() == (plan.verdict != "VERIFIED"));
  }
}
