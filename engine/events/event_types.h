// The lab's event catalog: every event type the lab writes or reads (the `type` of an
// EventDraft / StoredEvent, engine/log/event.h), as one named constant. Nothing outside this
// folder spells an event type as a literal (scripts/check-event-literals.py checks it); payloads
// are described in docs/ATTEMPTS.md, docs/GATE.md, docs/WRITER.md and docs/CAPABILITIES.md, and
// the ones the lab reads back have a typed codec in attempt_events.h / registry_events.h.
#pragma once

#include <string_view>

namespace aura::events {

// ---- an attempt's stream (attempt/<id>, docs/ATTEMPTS.md) ----
inline constexpr std::string_view kAttemptStarted = "attempt.started";
inline constexpr std::string_view kAttemptPhase = "attempt.phase";
inline constexpr std::string_view kAttemptPredicted = "attempt.predicted";
inline constexpr std::string_view kAttemptAcknowledged = "attempt.acknowledged";
inline constexpr std::string_view kAttemptVerified = "attempt.verified";
inline constexpr std::string_view kAttemptReflected = "attempt.reflected";
inline constexpr std::string_view kAttemptAbandoned = "attempt.abandoned";
inline constexpr std::string_view kProbeRequested = "probe.requested";
inline constexpr std::string_view kProbeCompleted = "probe.completed";
inline constexpr std::string_view kInterventionSubmitted = "intervention.submitted";
inline constexpr std::string_view kScriptAuthorized = "script.authorized";
inline constexpr std::string_view kActionCompleted = "action.completed";
inline constexpr std::string_view kApplyCompleted = "apply.completed";
inline constexpr std::string_view kAckReadback = "ack.readback";
inline constexpr std::string_view kWorldBuilt = "world.built";
inline constexpr std::string_view kWorldReset = "world.reset";
inline constexpr std::string_view kVerifyFact = "verify.fact";
inline constexpr std::string_view kCoachUsed = "coach.used";
// The TransferGate's (docs/GATE.md).
inline constexpr std::string_view kGateStarted = "gate.started";
inline constexpr std::string_view kGateAction = "gate.action";
inline constexpr std::string_view kGateFact = "gate.fact";
inline constexpr std::string_view kGateProperty = "gate.property";
inline constexpr std::string_view kGateVerdict = "gate.verdict";
inline constexpr std::string_view kReceiptIssued = "receipt.issued";

// ---- runs and the writer socket (docs/WRITER.md, docs/RUNNER.md) ----
inline constexpr std::string_view kRunStarted = "run.started";
inline constexpr std::string_view kRunEnded = "run.ended";
inline constexpr std::string_view kRunnerEvidence = "runner.evidence";
inline constexpr std::string_view kEvidenceRejected = "evidence.rejected";

// ---- the lab's registries (streams lab/...) ----
inline constexpr std::string_view kScenarioLoaded = "scenario.loaded";
inline constexpr std::string_view kScenarioRejected = "scenario.rejected";
inline constexpr std::string_view kScenarioSigned = "scenario.signed";
inline constexpr std::string_view kCapabilitiesMeasured = "capabilities.measured";
inline constexpr std::string_view kSupervisorReaped = "supervisor.reaped";

// ---- the operator's own events (`aura log append`): operator.NAME ----
inline constexpr std::string_view kOperatorTypePrefix = "operator.";
inline constexpr std::string_view kOperatorNote = "operator.note";  // the documented example

// ---- written only by `aura demo` (to go with it): a story the engine never writes ----
inline constexpr std::string_view kDemoPredictionRecorded = "prediction.recorded";

// Every type above (the operator prefix aside), for checks and tools.
inline constexpr std::string_view kAllTypes[] = {
    kAttemptStarted,
    kAttemptPhase,
    kAttemptPredicted,
    kAttemptAcknowledged,
    kAttemptVerified,
    kAttemptReflected,
    kAttemptAbandoned,
    kProbeRequested,
    kProbeCompleted,
    kInterventionSubmitted,
    kScriptAuthorized,
    kActionCompleted,
    kApplyCompleted,
    kAckReadback,
    kWorldBuilt,
    kWorldReset,
    kVerifyFact,
    kCoachUsed,
    kGateStarted,
    kGateAction,
    kGateFact,
    kGateProperty,
    kGateVerdict,
    kReceiptIssued,
    kRunStarted,
    kRunEnded,
    kRunnerEvidence,
    kEvidenceRejected,
    kScenarioLoaded,
    kScenarioRejected,
    kScenarioSigned,
    kCapabilitiesMeasured,
    kSupervisorReaped,
    kOperatorNote,
    kDemoPredictionRecorded,
};

}  // namespace aura::events
