// Helpers for the projection tests: open a SQLite file, fill a log, unwrap results, and a
// projection that fails on its K-th apply.
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "projections/core/projection.h"
#include "projections/core/sqlite_db.h"
#include "projections/streams/stream_projection.h"
#include "tests/log/log_test_util.h"

namespace aura::testing {

template <class T>
T must(Result<T> r) {
  if (!r.ok()) throw std::runtime_error(r.status().message());
  return std::move(r).value();
}

inline std::unique_ptr<SqliteDb> open_db(const std::filesystem::path& file) {
  return must(SqliteDb::open(file));
}

// Appends sample(first) .. sample(first + count - 1) in groups of up to 500.
inline void append_samples(EventLog& log, uint64_t first, uint64_t count) {
  std::vector<EventDraft> drafts;
  for (uint64_t i = first; i < first + count; ++i) {
    drafts.push_back(sample(i));
    if (drafts.size() == 500 || i + 1 == first + count) {
      must(log.append_all(drafts));
      drafts.clear();
    }
  }
}

// The streams projection that returns an error on its `fail_at`-th apply (counted from 1 over
// this object's life; 0 never fails), optionally claiming another schema version.
class FailingProjection : public Projection {
 public:
  explicit FailingProjection(uint64_t fail_at, int schema_version = 1)
      : fail_at_(fail_at), schema_version_(schema_version) {}
  std::string_view name() const override { return inner_.name(); }
  int schema_version() const override { return schema_version_; }
  std::vector<std::string> tables() const override { return inner_.tables(); }
  Status create_schema(SqliteDb& db) override { return inner_.create_schema(db); }
  Status apply(SqliteDb& db, const EventView& e) override {
    ++applies_;
    // Write first, then fail, so the rollback has something to undo.
    AURA_RETURN_IF_ERROR(inner_.apply(db, e));
    if (applies_ == fail_at_) return Status::io("injected failure");
    return Status::ok();
  }

 private:
  StreamProjection inner_;
  uint64_t fail_at_;
  int schema_version_;
  uint64_t applies_ = 0;
};

}  // namespace aura::testing
