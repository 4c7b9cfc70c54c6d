// The evidence an attempt unlocked: one row per probe requested (its call, cost and spending) and
// one per evidence blob: probe outputs (probe.completed, id ev-<probe>, with the call of the
// probe's request) and action outputs (action.completed refs of kind action.output). Rows are
// written once, keyed by (attempt, probe) and (attempt, evidence id), so re-applying an event
// changes nothing.
#pragma once

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

class EvidenceProjection : public Projection {
 public:
  std::string_view name() const override { return "evidence"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"evidence", "probes"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

 private:
  Status probe_completed(SqliteDb& db, const EventView& event, std::string_view id);
  Status action_completed(SqliteDb& db, const EventView& event, std::string_view id);
  ev::PayloadReader reader_;
};

}  // namespace aura::lab
