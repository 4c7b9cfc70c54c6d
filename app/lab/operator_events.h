// The events an operator may append by hand (`aura log append`, from the CLI or through the
// daemon that holds the lab): the operator's own, never one the lab records as a fact.
#pragma once

#include "engine/common/status.h"
#include "engine/log/event_log.h"

namespace aura::app {

// What the engine, the supervisor, the gate, receipts, runners, attempts, the scenario
// registry and the capability panel record is a fact only when the code that measured or
// decided it wrote it: an operator event is of type operator.NAME, by the actor "operator",
// on a stream outside attempt/ and lab/. kInvalidArgument naming what is refused otherwise.
Status check_operator_event(const EventDraft& d);

}  // namespace aura::app
