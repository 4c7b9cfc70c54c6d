// The streams projection: one row per event stream with its event count, first and last seq
// and the type of its newest event. The smallest real projection; it proves the framework.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "projections/core/projection.h"

namespace aura {

struct StreamRow {
  std::string stream;
  int64_t events = 0;
  int64_t first_seq = 0;
  int64_t last_seq = 0;
  std::string last_type;

  bool operator==(const StreamRow&) const = default;
};

class StreamProjection : public Projection {
 public:
  std::string_view name() const override { return "streams"; }
  int schema_version() const override { return 1; }
  std::vector<std::string> tables() const override { return {"streams"}; }
  Status create_schema(SqliteDb& db) override;
  Status apply(SqliteDb& db, const EventView& event) override;

  // Every row, ordered by stream (byte order).
  static Result<std::vector<StreamRow>> all_streams(SqliteDb& db);
};

}  // namespace aura
