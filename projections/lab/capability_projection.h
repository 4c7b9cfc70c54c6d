// The capability panel (docs/CAPABILITIES.md): the newest measurement of each capability from
// `capabilities.measured` events, and each lab's availability derived from it by one declared
// requirements table. A lab is available only if every capability it requires was measured
// available; otherwise its reason names each missing capability and why.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

inline constexpr std::string_view kCapabilityStream = ev::kCapabilityStream;

// One lab and the capabilities it needs. `optional` ones are reported, never required.
struct LabRequirement {
  std::string_view lab;    // "O1"
  std::string_view title;  // "web fleet"
  std::span<const std::string_view> required;
  std::span<const std::string_view> optional;
};

// The declared table (capability_projection.cc; docs/CAPABILITIES.md lists it).
std::span<const LabRequirement> lab_requirements();

// One capability as measured.
struct CapabilityRow {
  std::string name;
  bool available = false;
  std::string reason;
};

struct LabAvailability {
  std::string lab, title;
  bool available = false;
  // Available: "" or the optional capabilities missing ("optional sched_ext: ..."); unavailable:
  // "missing <name>: <reason>; ..." or "<name> not measured".
  std::string reason;

  bool operator==(const LabAvailability&) const = default;
};

// Each lab of the table, in table order, judged against `measured` (a pure function: the
// projection stores its result, `aura caps` prints it for a fresh measurement).
std::vector<LabAvailability> derive_labs(const std::vector<CapabilityRow>& measured);

class CapabilityProjection : public Projection {
 public:
  std::string_view name() const override { return "capabilities"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"capabilities", "labs"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

 private:
  ev::PayloadReader reader_;
};

}  // namespace aura::lab
