// Every InterventionIR revision an attempt submitted (intervention.submitted) and the status of
// each of its scripts (pending_feedback until script.authorized, then pending_execution).
#pragma once

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

class InterventionProjection : public Projection {
 public:
  std::string_view name() const override { return "interventions"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"interventions", "scripts"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

 private:
  Status submitted(SqliteDb& db, const EventView& event, std::string_view id);
  ev::PayloadReader reader_;
};

}  // namespace aura::lab
