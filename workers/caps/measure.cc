// The whole panel in its documented order, and the event payload that records it.
#include <sys/utsname.h>

#include "engine/common/json_writer.h"
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

std::string capabilities_json(const std::vector<Capability>& caps) {
  JsonArray a;
  for (const Capability& c : caps) {
    a.raw(JsonWriter()
              .str("name", c.name)
              .boolean("available", c.available)
              .str("reason", c.reason)
              .done());
  }
  return a.done();
}

std::string measurement_payload(const Measurement& m) {
  return JsonWriter()
      .num("v", uint64_t{1})
      .str("host", m.host)
      .str("kernel_release", m.kernel_release)
      .raw("capabilities", capabilities_json(m.capabilities))
      .done();
}

}  // namespace aura::caps
