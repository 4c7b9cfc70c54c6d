// The lab's read models in one SQLite file (DATA/projections.sqlite): the scenario registry,
// attempts, evidence, interventions, gate results, receipts and the capability panel, each a
// Projection with its own position. Writers catch them up from the log; readers serve only what
// serve_check accepts. Not thread-safe: one LabProjections per thread (SQLite connection rules).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/log/event_log.h"
#include "projections/core/projection.h"
#include "projections/core/projector.h"
#include "projections/core/sqlite_db.h"
#include "projections/lab/capability_projection.h"
#include "projections/lab/sql.h"

namespace aura::lab {

// What a catch-up or rebuild did to one projection.
struct ProjectionReport {
  std::string name;
  uint64_t events_applied = 0;  // every event read, whether the projection used it or not
  double seconds = 0;           // wall time of the whole catch-up or rebuild (all run together)
  std::vector<std::pair<std::string, int64_t>> rows;  // (table, row count), tables sorted
};

// Where one projection stands against the log.
struct ProjectionState {
  std::string name;
  int schema_version = 0;  // what this build expects
  std::optional<ProjectionPosition> position;
  uint64_t head_seq = 0;
  Status serve;  // serve_check(): ok, or why it refuses
};

// One attempt and everything the projections hold about it.
struct AttemptDetail {
  Rows attempt;  // one row
  Rows probes, evidence, interventions, scripts, gate_results, gate_verdicts;
  Rows receipt;  // zero or one row

  // {"attempt":{...},"probes":[...],"evidence":[...],"interventions":[...],"scripts":[...],
  //  "gate_results":[...],"gate_verdicts":[...],"receipt":{...}|null}
  std::string json() const;
};

class LabProjections {
 public:
  static constexpr std::string_view kFileName = "projections.sqlite";
  // Events per transaction. A catch-up usually has a short way to go; a rebuild replays the whole
  // log, and each commit writes every page the batch dirtied (random attempt IDs spread rows over
  // the tables), so its batches are larger.
  static constexpr size_t kDefaultBatch = 20000;
  static constexpr size_t kRebuildBatch = 500000;

  // DATA/projections.sqlite.
  static std::filesystem::path file_in(const std::filesystem::path& data_dir);

  // Opens (or creates) the database file. `log` must outlive the object. The connection runs
  // with synchronous=NORMAL (a rebuildable read model: a commit lost to a power cut only moves
  // the position back with the rows; see docs/PROJECTIONS.md).
  static Result<std::unique_ptr<LabProjections>> open(const EventLog& log,
                                                      const std::filesystem::path& db_file);
  ~LabProjections();

  // The projections, in a fixed order: scenarios, attempts, evidence, interventions, gates,
  // receipts, capabilities.
  const std::vector<std::unique_ptr<Projection>>& projections() const { return projections_; }
  SqliteDb& db() { return *db_; }

  // Applies every event after each projection's position up to the log's head, in one pass over
  // the log (Projector::catch_up_together: each batch is one transaction for all projections).
  // Another process catching up the same file at the same time is waited for (its work is kept).
  Result<std::vector<ProjectionReport>> catch_up_all(size_t max_events_per_txn = kDefaultBatch);
  // Drops every projection's tables and replays the log from seq 1.
  Result<std::vector<ProjectionReport>> rebuild_all(size_t max_events_per_txn = kRebuildBatch);
  // Ok when every projection passes serve_check; otherwise the first refusal, which names the
  // projection and why.
  Status serve_check_all() const;
  std::vector<ProjectionState> states() const;
  // Row count of each of the projection's tables, tables sorted.
  Result<std::vector<std::pair<std::string, int64_t>>> row_counts(const Projection& p);

  // Queries. Each first runs serve_check on the projections it reads and refuses with its
  // message.
  // Every scenario folder, ordered by dir.
  Result<Rows> scenarios();
  // Every attempt, ordered by first_seq.
  Result<Rows> attempts();
  // One attempt; nullopt when no attempt has that ID.
  Result<std::optional<AttemptDetail>> attempt(std::string_view id);
  // The newest measurement of each capability, ordered by name.
  Result<Rows> capabilities();
  // Each loaded scenario as a lab and whether this machine can run it, ordered by lab (the
  // scenario id), then dir.
  Result<Rows> labs();
  // What each loaded scenario requires of the machine, ordered by dir (docs/CAPABILITIES.md).
  Result<std::vector<LabRequirement>> lab_requirements();

 private:
  LabProjections(const EventLog& log, std::unique_ptr<SqliteDb> db);
  Status serve_check(std::initializer_list<std::string_view> names) const;
  Result<std::vector<ProjectionReport>> reports(const std::vector<uint64_t>& applied,
                                                double seconds);
  std::vector<Projector*> group() const;
  Result<Rows> query(const std::vector<std::string>& columns, std::string_view rest,
                     std::string_view id, std::initializer_list<std::string_view> json_columns);

  const EventLog& log_;
  std::unique_ptr<SqliteDb> db_;
  std::vector<std::unique_ptr<Projection>> projections_;
  std::vector<std::unique_ptr<Projector>> projectors_;
};

}  // namespace aura::lab
