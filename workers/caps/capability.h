// The capability panel's measurement (docs/CAPABILITIES.md): which isolation features, kernel
// features and tools this machine really has. Every entry is measured by trying the thing, never
// read from configuration; an unavailable entry carries the reason (an errno, an absence).
#pragma once

#include <string>
#include <vector>

#include "engine/events/event_types.h"
#include "engine/events/registry_events.h"

namespace aura::caps {

struct Capability {
  std::string name;        // "ns_user", "overlayfs", "cgroup_v1_memory", "tool_nginx", ...
  bool available = false;  // true only when the probe itself succeeded
  std::string reason;      // what was measured: why it is unavailable, or what was found

  bool operator==(const Capability&) const = default;
};

// One measurement of the whole panel, with the host it was taken on.
struct Measurement {
  std::string host;                      // uname nodename
  std::string kernel_release;            // uname release
  std::vector<Capability> capabilities;  // in a fixed order (docs/CAPABILITIES.md)
};

// Runs every probe. Each probe that can block or change process state runs in a forked child
// that is killed after its deadline; nothing is left behind (mounts die with the child's mount
// namespace, probe cgroups and temp folders are removed). Not thread-safe with other forks that
// share file descriptors; takes a few seconds (the tool probes run real binaries).
Measurement measure_capabilities();

// Only the named tools (on PATH, run with their version flag); used by measure_capabilities.
std::vector<Capability> measure_tools();

// The measurement as the capability event (docs/CAPABILITIES.md), and that event's payload
// encoded by the event catalog:
// {"v":1,"host":...,"kernel_release":...,"capabilities":[{"name":..,"available":..,"reason":..}]}
events::CapabilitiesMeasured measurement_event(const Measurement& m);
std::string measurement_payload(const Measurement& m);
// [{"name":..,"available":..,"reason":..},...]
std::string capabilities_json(const std::vector<Capability>& caps);

inline constexpr const char* kCapabilityStream = "lab/capabilities";
inline constexpr const char* kCapabilityEventType = events::kCapabilitiesMeasured;
inline constexpr const char* kCapabilityActor = "supervisor";

}  // namespace aura::caps
