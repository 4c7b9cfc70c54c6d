// The encoder of capabilities.measured (docs/CAPABILITIES.md), the capability panel's one event:
// its payload type and strict decoder are CapabilitiesMeasured in registry_events.h; the
// measurement itself is the workers layer's (workers/caps/).
#pragma once

#include <string>

#include "engine/events/registry_events.h"

namespace aura::events {

// {"v":1,"host":...,"kernel_release":...,"capabilities":[{"name":..,"available":..,"reason":..}]}
std::string encode(const CapabilitiesMeasured& m);
// The "capabilities" member's bytes: [{"name":..,"available":..,"reason":..},...]
std::string capabilities_json(const CapabilitiesMeasured& m);

}  // namespace aura::events
