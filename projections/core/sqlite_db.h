// A small RAII wrapper over one SQLite connection: open (WAL, synchronous=FULL), exec,
// prepared statements with bind/step, and transactions. Errors are Status values that name
// the SQL that failed. One connection per thread; nothing here is shared between threads.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "engine/common/status.h"

namespace aura {

class SqliteDb;

// A prepared statement. Bind indexes start at 1, column indexes at 0 (as in SQLite).
class Statement {
 public:
  Statement() = default;
  ~Statement();
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Status bind(int index, int64_t value);
  Status bind(int index, std::string_view text);
  Status bind_null(int index);

  // Advances one row: true when a row is available, false when done.
  Result<bool> step();
  // Runs a statement that returns no rows (or ignores them) to completion.
  Status run();
  // Makes the statement ready to bind and step again (bindings cleared).
  void reset();

  int column_count() const;
  int column_type(int col) const;  // SQLITE_INTEGER, SQLITE_TEXT, SQLITE_NULL, ...
  int64_t column_int(int col) const;
  double column_double(int col) const;
  std::string column_text(int col) const;
  std::string column_blob(int col) const;

  const std::string& sql() const { return sql_; }

 private:
  friend class SqliteDb;
  Statement(sqlite3* db, sqlite3_stmt* stmt, std::string sql)
      : db_(db), stmt_(stmt), sql_(std::move(sql)) {}
  Status error(std::string_view what) const;

  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  std::string sql_;
};

class SqliteDb {
 public:
  // Opens (or creates) the database file in WAL mode with synchronous=FULL.
  static Result<std::unique_ptr<SqliteDb>> open(const std::filesystem::path& file);
  ~SqliteDb();
  SqliteDb(const SqliteDb&) = delete;
  SqliteDb& operator=(const SqliteDb&) = delete;

  // Runs one or more statements that return no rows.
  Status exec(std::string_view sql);
  Result<Statement> prepare(std::string_view sql);
  // A statement prepared once per connection and reused; it comes back reset. Valid until the
  // connection closes.
  Result<Statement*> cached(std::string_view sql);

  // BEGIN IMMEDIATE (takes the write lock now), COMMIT, ROLLBACK.
  Status begin();
  Status commit();
  Status rollback();
  bool in_transaction() const;

  sqlite3* handle() const { return db_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  SqliteDb(sqlite3* db, std::filesystem::path file) : db_(db), file_(std::move(file)) {}
  Status error(std::string_view sql) const;

  sqlite3* db_ = nullptr;
  std::filesystem::path file_;
  std::map<std::string, Statement, std::less<>> cache_;
};

// Rolls back on scope exit unless commit() succeeded.
class Transaction {
 public:
  explicit Transaction(SqliteDb& db) : db_(db) {}
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  Status begin();
  Status commit();

 private:
  SqliteDb& db_;
  bool open_ = false;
};

}  // namespace aura
