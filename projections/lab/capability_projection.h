// The capability panel (docs/CAPABILITIES.md): the newest measurement of each capability from
// `capabilities.measured` events, what each loaded scenario requires of the machine (its
// `scenario.loaded` event carries its manifest's "requires"), and each loaded scenario's
// availability as a lab, derived from both. A lab is available only if every capability it
// requires was measured available; otherwise its reason names each missing capability and why.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

inline constexpr std::string_view kCapabilityStream = ev::kCapabilityStream;

// One loaded scenario (a lab) and what it requires; `optional` ones are reported, never
// required. `state` says whether requirements were declared (docs/CAPABILITIES.md, "Labs").
struct LabRequirement {
  std::string dir;    // the package folder, as the scenario registry names it
  std::string lab;    // the scenario id ("o1-fleet-drift")
  std::string title;  // its manifest's title
  ev::ScenarioLoaded::Requirements state = ev::ScenarioLoaded::Requirements::kNotRecorded;
  std::vector<std::string> required, optional;  // capability ids

  bool operator==(const LabRequirement&) const = default;
};

// One capability as measured.
struct CapabilityRow {
  std::string name;
  bool available = false;
  std::string reason;
};

struct LabAvailability {
  std::string lab, title;
  bool available = false;
  // Available: "" or the optional capabilities missing ("without optional sched_ext: ...");
  // unavailable: "missing <name>: <reason>; ...", "missing <name> not measured", or why the
  // scenario's requirements are unknown.
  std::string reason;
  std::string dir;

  bool operator==(const LabAvailability&) const = default;
};

// Each lab of `labs`, in that order, judged against `measured` (a pure function: the projection
// stores its result, `aura caps` prints it for a fresh measurement).
std::vector<LabAvailability> derive_labs(const std::vector<LabRequirement>& labs,
                                         const std::vector<CapabilityRow>& measured);

// What every scenario loaded now requires, ordered by dir, from the projection's
// `lab_requirements` table (a folder whose newest registry event is a rejection is not listed).
Result<std::vector<LabRequirement>> read_lab_requirements(SqliteDb& db);

class CapabilityProjection : public Projection {
 public:
  std::string_view name() const override { return "capabilities"; }
  // 2: labs come from the loaded scenarios' requirements (lab_requirements), no longer from a
  // table in the code.
  int schema_version() const override { return 2; }
  std::vector<std::string> tables() const override {
    return {"capabilities", "lab_requirements", "labs"};
  }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

 private:
  ev::PayloadReader reader_;
};

}  // namespace aura::lab
