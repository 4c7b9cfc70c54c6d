// Small helpers the lab projections share: run a cached statement with its bindings in one
// call, and read query results as generic rows (for JSON and text output).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "projections/core/sqlite_db.h"

namespace aura::lab {

struct SqlNull {};

inline Status bind_value(Statement& st, int i, int64_t v) { return st.bind(i, v); }
inline Status bind_value(Statement& st, int i, std::string_view v) { return st.bind(i, v); }
inline Status bind_value(Statement& st, int i, const std::string& v) {
  return st.bind(i, std::string_view(v));
}
inline Status bind_value(Statement& st, int i, bool v) { return st.bind(i, int64_t{v ? 1 : 0}); }
inline Status bind_value(Statement& st, int i, SqlNull) { return st.bind_null(i); }
template <class T>
Status bind_value(Statement& st, int i, const std::optional<T>& v) {
  return v ? bind_value(st, i, *v) : st.bind_null(i);
}

// Binds `args` to ?1, ?2, ... of the cached statement `sql` and runs it to completion.
template <class... Args>
Status exec_cached(SqliteDb& db, std::string_view sql, const Args&... args) {
  auto st = db.cached(sql);
  if (!st.ok()) return st.status();
  Statement& q = **st;
  int i = 0;
  Status s;
  ((s.is_ok() ? (s = bind_value(q, ++i, args), 0) : 0), ...);
  AURA_RETURN_IF_ERROR(s);
  return q.run();
}

// One cell of a query result. kJson cells hold JSON text to embed as is.
struct Cell {
  enum class Kind { kNull, kInt, kText, kJson };
  Kind kind = Kind::kNull;
  int64_t i = 0;
  std::string s;

  bool operator==(const Cell&) const = default;
};

// The result of one query: column names and rows.
struct Rows {
  std::vector<std::string> columns;
  std::vector<std::vector<Cell>> rows;

  // The cell of `column` in row `row`; nullptr for an unknown column.
  const Cell* get(size_t row, std::string_view column) const {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (columns[c] == column) return &rows.at(row)[c];
    }
    return nullptr;
  }

  bool operator==(const Rows&) const = default;
};

// "SELECT c1, c2, ... <rest>".
std::string select_sql(const std::vector<std::string>& columns, std::string_view rest);

// Runs `st` (already bound) to completion; `columns` names its result columns in order (their
// count is checked). Columns named in `json_columns` hold JSON text and come back as kJson
// cells. At most `max_rows` rows are read: more is an error naming the SQL.
Result<Rows> read_rows(Statement& st, std::vector<std::string> columns,
                       std::initializer_list<std::string_view> json_columns = {},
                       size_t max_rows = 1000000);

// [{"col":value,...},...] with NULL as null, integers as numbers, JSON cells embedded.
std::string rows_json(const Rows& rows);
// One row as an object.
std::string row_json(const Rows& rows, size_t row);

}  // namespace aura::lab
