#include "engine/events/capability_events.h"

#include "engine/common/json_writer.h"

namespace aura::events {

std::string capabilities_json(const CapabilitiesMeasured& m) {
  JsonArray list;
  for (const CapabilitiesMeasured::Capability& c : m.capabilities) {
    list.raw(JsonWriter()
                 .str("name", c.name)
                 .boolean("available", c.available)
                 .str("reason", c.reason)
                 .done());
  }
  return list.done();
}

std::string encode(const CapabilitiesMeasured& m) {
  return JsonWriter()
      .num("v", kPayloadVersion)
      .str("host", m.host)
      .str("kernel_release", m.kernel_release)
      .raw("capabilities", capabilities_json(m))
      .done();
}

}  // namespace aura::events
