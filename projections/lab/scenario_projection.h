// The scenario registry: one row per package folder `aura scenario load` tried, from the
// lab/scenarios stream (scenario.loaded / scenario.rejected). The newest event for a folder wins.
#pragma once

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

class ScenarioProjection : public Projection {
 public:
  std::string_view name() const override { return "scenarios"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"scenarios"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

 private:
  ev::PayloadReader reader_;
};

}  // namespace aura::lab
