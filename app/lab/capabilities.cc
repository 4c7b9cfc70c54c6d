#include "app/lab/capabilities.h"

namespace aura::app {

size_t RecordedMeasurement::available() const {
  size_t n = 0;
  for (const auto& c : measurement.capabilities) n += c.available ? 1 : 0;
  return n;
}

Result<RecordedMeasurement> measure_and_record(EventLog& log) {
  RecordedMeasurement r;
  r.measurement = caps::measure_capabilities();
  auto appended = log.append({caps::kCapabilityStream, caps::kCapabilityEventType,
                              caps::kCapabilityActor, caps::measurement_payload(r.measurement)});
  if (!appended.ok()) {
    return appended.status().with_context(std::string("record ") + caps::kCapabilityEventType);
  }
  r.seq = appended->seq;
  return r;
}

}  // namespace aura::app
