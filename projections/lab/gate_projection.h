// TransferGate outcomes: one row per property result (gate.property) and one per verdict
// (gate.verdict), keyed by the attempt and the seq of the gate's gate.started event.
#pragma once

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

class GateProjection : public Projection {
 public:
  std::string_view name() const override { return "gates"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"gate_results", "gate_verdicts"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

 private:
  ev::PayloadReader reader_;
};

}  // namespace aura::lab
