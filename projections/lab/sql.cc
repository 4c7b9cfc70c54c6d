#include "projections/lab/sql.h"

#include <algorithm>

#include "engine/common/json_writer.h"

namespace aura::lab {

std::string select_sql(const std::vector<std::string>& columns, std::string_view rest) {
  std::string sql = "SELECT ";
  for (size_t c = 0; c < columns.size(); ++c) sql += (c == 0 ? "" : ", ") + columns[c];
  return sql + " " + std::string(rest);
}

Result<Rows> read_rows(Statement& st, std::vector<std::string> columns,
                       std::initializer_list<std::string_view> json_columns, size_t max_rows) {
  Rows out;
  const int cols = st.column_count();
  if (static_cast<size_t>(cols) != columns.size()) {
    st.reset();
    return Status::invalid("query returns " + std::to_string(cols) + " columns, " +
                           std::to_string(columns.size()) + " named: " + st.sql());
  }
  out.columns = std::move(columns);
  std::vector<bool> is_json(out.columns.size(), false);
  for (size_t c = 0; c < out.columns.size(); ++c) {
    is_json[c] =
        std::find(json_columns.begin(), json_columns.end(), out.columns[c]) != json_columns.end();
  }
  for (;;) {
    auto row = st.step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    if (out.rows.size() == max_rows) {
      st.reset();
      return Status::invalid("query returned more than " + std::to_string(max_rows) +
                             " rows: " + st.sql());
    }
    std::vector<Cell> cells(static_cast<size_t>(cols));
    for (int c = 0; c < cols; ++c) {
      Cell& cell = cells[static_cast<size_t>(c)];
      switch (st.column_type(c)) {
        case SQLITE_NULL:
          break;
        case SQLITE_INTEGER:
          cell.kind = Cell::Kind::kInt;
          cell.i = st.column_int(c);
          break;
        default:
          cell.kind = is_json[static_cast<size_t>(c)] ? Cell::Kind::kJson : Cell::Kind::kText;
          cell.s = st.column_text(c);
          break;
      }
    }
    out.rows.push_back(std::move(cells));
  }
  st.reset();
  return out;
}

std::string row_json(const Rows& rows, size_t row) {
  JsonWriter w;
  const std::vector<Cell>& cells = rows.rows[row];
  for (size_t c = 0; c < rows.columns.size(); ++c) {
    const Cell& cell = cells[c];
    switch (cell.kind) {
      case Cell::Kind::kNull:
        w.null(rows.columns[c]);
        break;
      case Cell::Kind::kInt:
        w.num(rows.columns[c], cell.i);
        break;
      case Cell::Kind::kText:
        w.str(rows.columns[c], cell.s);
        break;
      case Cell::Kind::kJson:
        w.raw(rows.columns[c], cell.s);
        break;
    }
  }
  return w.done();
}

std::string rows_json(const Rows& rows) {
  JsonArray a;
  for (size_t r = 0; r < rows.rows.size(); ++r) a.raw(row_json(rows, r));
  return a.done();
}

}  // namespace aura::lab
