// The capability panel: what this machine can run, measured now and recorded in the log
// (capabilities.measured, docs/CAPABILITIES.md), so what is unavailable is said, with the
// reason, before anyone starts a lab that needs it. Set-up, `aura caps measure` and the
// standalone supervisor all record it here.
#pragma once

#include <cstdint>

#include "engine/log/event_log.h"
#include "workers/caps/capability.h"

namespace aura::app {

struct RecordedMeasurement {
  caps::Measurement measurement;
  uint64_t seq = 0;  // of its capabilities.measured event
  size_t available() const;
};

// Measures the panel and appends it to `log`.
Result<RecordedMeasurement> measure_and_record(EventLog& log);

}  // namespace aura::app
