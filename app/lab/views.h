// What a learner may see, for every front end: a scenario's public parts (never its worlds, its
// checks' calls and parameters, or its judge cases), an attempt's state with the next step in
// words, and each attempt event as the learner's view of it (members that could name a hidden
// world's nodes or a check's parameters are left out). The HTTP API and the CLI show these.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "engine/attempt/attempt_state.h"
#include "engine/log/event.h"
#include "engine/scenario/manifest.h"

namespace aura::app {

// docs/api/openapi.yaml, Scenario.
std::string scenario_public_json(const scenario::Manifest& m);

// The catalog an attempt is worked from, for every front end (`aura attempt catalog`, the
// attempt page): the scenario's hypotheses, probes with their parameter schemas and costs, the
// probe budget left, actions, target terms (role or selector, kind, description) and checks
// (postcondition or invariant, description), then the next step. Its catalog members are
// written by the same code as scenario_public_json's, so the two cannot differ; like it, it never
// holds a world, a check's call or parameters, or a judge case.
std::string attempt_catalog_json(const scenario::Manifest& m, const attempt::AttemptState& s);

// The next step for an attempt in its phase, in words (one sentence naming the command).
std::string next_step(const attempt::AttemptState& s);

// docs/api/openapi.yaml, AttemptState.
std::string attempt_view_json(const attempt::AttemptState& s);

// {"seq":N,"type":T,"ts_us":U,"data":{...}}: the learner's view of one event of the attempt's
// stream, or nullopt for an event a learner is not shown (access grants, world builds of the
// gate's fresh worlds) or that does not parse.
std::optional<std::string> learner_event_json(const EventView& e);

// The same for a judge run's attempts, which anyone may watch: the gate's progress, each fact
// with the world it ran on and the check that decided it, the verdict and the receipt; never the
// judge's probes or its InterventionIR (a learner would read the answer there).
std::optional<std::string> judge_event_json(const EventView& e);

}  // namespace aura::app
