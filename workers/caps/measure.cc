// The whole panel in its documented order, and the event payload that records it.
#include <sys/utsname.h>

#include "engine/events/capability_events.h"
#include "workers/caps/capability.h"
#include "workers/caps/probes.h"

namespace aura::caps {

Measurement measure_capabilities() {
  Measurement m;
  utsname u{};
  if (::uname(&u) == 0) {
    m.host = u.nodename;
    m.kernel_release = u.release;
  }
  for (auto part :
       {measure_namespaces(), measure_kernel_features(), measure_cgroups(), measure_tools()}) {
    for (Capability& c : part) m.capabilities.push_back(std::move(c));
  }
  return m;
}

events::CapabilitiesMeasured measurement_event(const Measurement& m) {
  events::CapabilitiesMeasured e{m.host, m.kernel_release, {}};
  for (const Capability& c : m.capabilities)
    e.capabilities.push_back({c.name, c.available, c.reason});
  return e;
}

std::string measurement_payload(const Measurement& m) {
  return events::encode(measurement_event(m));
}

std::string capabilities_json(const std::vector<Capability>& caps) {
  return events::capabilities_json(measurement_event({"", "", caps}));
}

}  // namespace aura::caps
