#include "projections/lab/lab_projections.h"

#include <algorithm>
#include <chrono>

#include "engine/common/json_writer.h"
#include "projections/lab/attempt_projection.h"
#include "projections/lab/capability_projection.h"
#include "projections/lab/evidence_projection.h"
#include "projections/lab/gate_projection.h"
#include "projections/lab/intervention_projection.h"
#include "projections/lab/payload.h"
#include "projections/lab/receipt_projection.h"
#include "projections/lab/scenario_projection.h"

namespace aura::lab {

namespace {

// Two processes catching up the same file: the loser of a batch sees the position move and
// retries from the winner's position.
constexpr int kBusyRetries = 5;

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

std::string AttemptDetail::json() const {
  return JsonWriter()
      .raw("attempt", attempt.rows.empty() ? "null" : row_json(attempt, 0))
      .raw("probes", rows_json(probes))
      .raw("evidence", rows_json(evidence))
      .raw("interventions", rows_json(interventions))
      .raw("scripts", rows_json(scripts))
      .raw("gate_results", rows_json(gate_results))
      .raw("gate_verdicts", rows_json(gate_verdicts))
      .raw("receipt", receipt.rows.empty() ? "null" : row_json(receipt, 0))
      .done();
}

std::filesystem::path LabProjections::file_in(const std::filesystem::path& data_dir) {
  return data_dir / std::string(kFileName);
}

LabProjections::LabProjections(const EventLog& log, std::unique_ptr<SqliteDb> db)
    : log_(log), db_(std::move(db)) {
  projections_.push_back(std::make_unique<ScenarioProjection>());
  projections_.push_back(std::make_unique<AttemptProjection>());
  projections_.push_back(std::make_unique<EvidenceProjection>());
  projections_.push_back(std::make_unique<InterventionProjection>());
  projections_.push_back(std::make_unique<GateProjection>());
  projections_.push_back(std::make_unique<ReceiptProjection>());
  projections_.push_back(std::make_unique<CapabilityProjection>());
  for (auto& p : projections_) projectors_.push_back(std::make_unique<Projector>(log_, *db_, *p));
}

LabProjections::~LabProjections() = default;

Result<std::unique_ptr<LabProjections>> LabProjections::open(const EventLog& log,
                                                             const std::filesystem::path& db_file) {
  auto db = SqliteDb::open(db_file);
  if (!db.ok()) return db.status();
  // A read model rebuilt from the log: in WAL mode synchronous=NORMAL never corrupts the file,
  // and a commit lost to a power cut takes its position with it (replayed on the next catch-up).
  AURA_RETURN_IF_ERROR(
      (*db)->exec("PRAGMA synchronous=NORMAL; PRAGMA cache_size=-262144; "
                  "PRAGMA temp_store=MEMORY; PRAGMA mmap_size=1073741824"));
  return std::unique_ptr<LabProjections>(new LabProjections(log, std::move(db).value()));
}

Result<std::vector<std::pair<std::string, int64_t>>> LabProjections::row_counts(
    const Projection& p) {
  std::vector<std::string> tables = p.tables();
  std::sort(tables.begin(), tables.end());
  std::vector<std::pair<std::string, int64_t>> out;
  for (const std::string& t : tables) {
    auto st = db_->prepare("SELECT count(*) FROM \"" + t + "\"");
    if (!st.ok()) return st.status();
    auto row = st->step();
    if (!row.ok()) return row.status();
    out.emplace_back(t, *row ? st->column_int(0) : 0);
  }
  return out;
}

Result<std::vector<ProjectionReport>> LabProjections::reports(const std::vector<uint64_t>& applied,
                                                              double seconds) {
  std::vector<ProjectionReport> out;
  for (size_t i = 0; i < projections_.size(); ++i) {
    ProjectionReport r;
    r.name = std::string(projections_[i]->name());
    r.events_applied = applied[i];
    r.seconds = seconds;
    auto counts = row_counts(*projections_[i]);
    if (!counts.ok()) return counts.status();
    r.rows = std::move(counts).value();
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<Projector*> LabProjections::group() const {
  std::vector<Projector*> out;
  for (const auto& p : projectors_) out.push_back(p.get());
  return out;
}

Result<std::vector<ProjectionReport>> LabProjections::catch_up_all(size_t max_events_per_txn) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<Projector*> all = group();
  std::vector<uint64_t> applied(all.size(), 0);
  for (int attempt = 0;; ++attempt) {
    auto r = Projector::catch_up_together(all, max_events_per_txn);
    if (r.ok()) {
      for (size_t i = 0; i < applied.size(); ++i) applied[i] += (*r)[i];
      break;
    }
    if (r.status().code() != ErrorCode::kBusy || attempt == kBusyRetries) return r.status();
  }
  return reports(applied, seconds_since(t0));
}

Result<std::vector<ProjectionReport>> LabProjections::rebuild_all(size_t max_events_per_txn) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = Projector::rebuild_together(group(), max_events_per_txn);
  if (!r.ok()) return r.status();
  return reports(*r, seconds_since(t0));
}

Status LabProjections::serve_check_all() const {
  for (const auto& projector : projectors_) AURA_RETURN_IF_ERROR(projector->serve_check());
  return Status::ok();
}

Status LabProjections::serve_check(std::initializer_list<std::string_view> names) const {
  for (size_t i = 0; i < projections_.size(); ++i) {
    if (std::find(names.begin(), names.end(), projections_[i]->name()) == names.end()) continue;
    AURA_RETURN_IF_ERROR(projectors_[i]->serve_check());
  }
  return Status::ok();
}

std::vector<ProjectionState> LabProjections::states() const {
  std::vector<ProjectionState> out;
  const uint64_t head = log_.head().seq;
  for (size_t i = 0; i < projections_.size(); ++i) {
    ProjectionState s;
    s.name = std::string(projections_[i]->name());
    s.schema_version = projections_[i]->schema_version();
    s.head_seq = head;
    auto pos = projectors_[i]->position();
    if (pos.ok()) {
      s.position = *pos;
      s.serve = projectors_[i]->serve_check();
    } else {
      s.serve = pos.status();
    }
    out.push_back(std::move(s));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Queries

namespace {

// The table's column names in declaration order, without the internal attempt_key (the
// attempt ID's bits, which the attempt column spells).
Result<std::vector<std::string>> table_columns(SqliteDb& db, std::string_view table) {
  auto st =
      db.prepare("SELECT name FROM pragma_table_info(?1) WHERE name != 'attempt_key' ORDER BY cid");
  if (!st.ok()) return st.status();
  AURA_RETURN_IF_ERROR(st->bind(1, table));
  std::vector<std::string> out;
  for (;;) {
    auto row = st->step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back(st->column_text(0));
  }
  if (out.empty()) return Status::not_found("table " + std::string(table) + " does not exist");
  return out;
}

}  // namespace

Result<Rows> LabProjections::query(const std::vector<std::string>& columns, std::string_view rest,
                                   std::string_view id,
                                   std::initializer_list<std::string_view> json_columns) {
  auto st = db_->prepare(select_sql(columns, rest));
  if (!st.ok()) return st.status();
  // ?1 is the attempt ID, or its row key for the attempts table.
  if (!id.empty()) {
    AURA_RETURN_IF_ERROR(rest.starts_with("FROM attempts ") ? st->bind(1, attempt_key(id))
                                                            : st->bind(1, id));
  }
  return read_rows(*st, columns, json_columns);
}

Result<Rows> LabProjections::scenarios() {
  AURA_RETURN_IF_ERROR(serve_check({"scenarios"}));
  LAB_TRY(columns, table_columns(*db_, "scenarios"));
  return query(columns, "FROM scenarios ORDER BY dir", "", {});
}

Result<Rows> LabProjections::attempts() {
  AURA_RETURN_IF_ERROR(serve_check({"attempts"}));
  LAB_TRY(columns, table_columns(*db_, "attempts"));
  return query(columns, "FROM attempts ORDER BY first_seq", "", {"seed"});
}

Result<Rows> LabProjections::capabilities() {
  AURA_RETURN_IF_ERROR(serve_check({"capabilities"}));
  LAB_TRY(columns, table_columns(*db_, "capabilities"));
  return query(columns, "FROM capabilities ORDER BY name", "", {});
}

Result<Rows> LabProjections::labs() {
  AURA_RETURN_IF_ERROR(serve_check({"capabilities"}));
  LAB_TRY(columns, table_columns(*db_, "labs"));
  return query(columns, "FROM labs ORDER BY lab, dir", "", {});
}

Result<std::vector<LabRequirement>> LabProjections::lab_requirements() {
  AURA_RETURN_IF_ERROR(serve_check({"capabilities"}));
  return read_lab_requirements(*db_);
}

Result<std::optional<AttemptDetail>> LabProjections::attempt(std::string_view id) {
  AURA_RETURN_IF_ERROR(serve_check({"attempts", "evidence", "interventions", "gates", "receipts"}));
  if (attempt_id_of_stream(std::string(kAttemptStreamPrefix) + std::string(id)).empty()) {
    return std::optional<AttemptDetail>();
  }
  AttemptDetail d;
  struct Part {
    Rows* rows;
    std::string_view table;
    std::string_view where;
    std::initializer_list<std::string_view> json_columns;
  };
  const Part parts[] = {
      {&d.attempt, "attempts", "attempt_key = ?1", {"seed"}},
      {&d.probes, "probes", "attempt = ?1 ORDER BY probe", {"call"}},
      {&d.evidence, "evidence", "attempt = ?1 ORDER BY seq, evidence_id", {"call"}},
      {&d.interventions, "interventions", "attempt = ?1 ORDER BY revision", {}},
      {&d.scripts, "scripts", "attempt = ?1 ORDER BY revision, submitted_seq, sha256", {}},
      {&d.gate_results, "gate_results", "attempt = ?1 ORDER BY gate, seq", {"cited"}},
      {&d.gate_verdicts, "gate_verdicts", "attempt = ?1 ORDER BY gate", {}},
      {&d.receipt, "receipts", "attempt = ?1", {}},
  };
  for (const Part& part : parts) {
    LAB_TRY(columns, table_columns(*db_, part.table));
    const std::string rest =
        "FROM " + std::string(part.table) + " WHERE " + std::string(part.where);
    LAB_TRY(rows, query(columns, rest, id, part.json_columns));
    *part.rows = std::move(rows);
    if (part.rows == &d.attempt && d.attempt.rows.empty()) {
      return std::optional<AttemptDetail>();
    }
  }
  return std::optional<AttemptDetail>(std::move(d));
}

}  // namespace aura::lab
