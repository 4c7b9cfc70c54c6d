// One row per attempt: its scenario, learner, phase, prediction, probe spending, current
// InterventionIR revision, scripts, verdict and receipt, fed by the events of its stream
// attempt/<ID> (docs/ATTEMPTS.md). Every event of the stream moves last_seq; an event at or
// below the row's last_seq is already applied and changes nothing.
#pragma once

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

// The phases of docs/ATTEMPTS.md, in order.
inline constexpr std::string_view kPhases[] = {"observe", "predict", "inspect", "contract",
                                               "apply",   "ack",     "verify",  "transfer_gate",
                                               "receipt", "reflect", "done"};

class AttemptProjection : public Projection {
 public:
  std::string_view name() const override { return "attempts"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"attempts"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

 private:
  Status started(SqliteDb& db, const EventView& event, std::string_view id);
  Payload payload_;
};

}  // namespace aura::lab
