#include "app/lab/operator_events.h"

#include <string>
#include <string_view>

#include "app/lab/scenario_registry.h"

namespace aura::app {

namespace {
constexpr std::string_view kOperatorTypePrefix = "operator.";
}  // namespace

Status check_operator_event(const EventDraft& d) {
  if (!d.type.starts_with(kOperatorTypePrefix) || d.type.size() == kOperatorTypePrefix.size()) {
    return Status::invalid(
        "refused type \"" + d.type + "\": log append writes only operator events, of type " +
        std::string(kOperatorTypePrefix) +
        "NAME (e.g. operator.note); the engine, supervisor, gate, receipt, runner, attempt, "
        "scenario and capability types are written only by the lab itself");
  }
  if (d.actor != kOperatorActor) {
    return Status::invalid("refused actor \"" + d.actor +
                           "\": log append writes only as the actor \"" +
                           std::string(kOperatorActor) + "\"");
  }
  // The lab's own streams: an attempt's (its receipt binds every event of it) and the lab's
  // registries (scenarios, capabilities, supervisor).
  for (std::string_view reserved : {"attempt/", "lab/"}) {
    if (d.stream.starts_with(reserved)) {
      return Status::invalid("refused stream \"" + d.stream + "\": streams under " +
                             std::string(reserved) +
                             " are written only by the lab itself; use an operator stream such "
                             "as ops/notes");
    }
  }
  return Status::ok();
}

}  // namespace aura::app
