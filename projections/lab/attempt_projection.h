// One row per attempt: its scenario, learner, phase, prediction, probe spending, current
// InterventionIR revision, scripts, verdict and receipt, fed by the events of its stream
// attempt/<ID> (docs/ATTEMPTS.md). An event at or below the row's last_seq is already applied and
// changes nothing. Within a batch the rows live in memory and are written once, in end_batch()
// (an attempt's ~20 row changes become one write).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "projections/core/projection.h"
#include "projections/lab/payload.h"

namespace aura::lab {

// The phases of docs/ATTEMPTS.md, in order.
inline constexpr const auto& kPhases = ev::kPhases;

class AttemptProjection : public Projection {
 public:
  std::string_view name() const override { return "attempts"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"attempts"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;
  Status begin_batch(SqliteDb& db) override;
  Status end_batch(SqliteDb& db) override;

 private:
  // The attempts table's columns (but attempt_key), as apply() changes them.
  struct Row {
    std::string attempt, scenario_id, scenario_version, package_digest, manifest_sha256, publisher,
        learner, mode, seed, phase;
    std::optional<std::string> hypothesis, expect;
    std::optional<int64_t> confidence;
    int64_t probe_budget = 0, spent = 0, probes = 0;
    std::optional<int64_t> ir_revision;
    std::optional<std::string> ir_sha256;
    int64_t scripts_pending = 0, scripts_authorized = 0;
    std::optional<std::string> verdict;
    std::optional<int64_t> recovered;
    std::optional<std::string> receipt_sha256, abandon_reason;
    int64_t first_seq = 0, last_seq = 0, started_ts_us = 0, updated_ts_us = 0;
    bool dirty = false;
  };

  // The new row attempt.started describes.
  Result<Row> started(const EventView& event, std::string_view id);
  // Decodes `event` (of a type this projection reads) and applies it to the row `update` makes.
  template <class T, class F>
  Status update(SqliteDb& db, const EventView& event, int64_t key, F change);
  // The row of `key` from this batch's rows, else from the table (nullptr: no such attempt).
  Result<Row*> find(SqliteDb& db, int64_t key);

  ev::PayloadReader reader_;
  std::map<int64_t, Row> rows_;  // this batch's rows, by attempt_key (written in key order)
  std::set<int64_t> absent_;     // keys this batch looked up and the table does not hold
};

}  // namespace aura::lab
