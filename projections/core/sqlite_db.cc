#include "projections/core/sqlite_db.h"

#include <utility>

namespace aura {

// ---------------------------------------------------------------------------------------------
// Statement

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      sql_(std::move(other.sql_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    sql_ = std::move(other.sql_);
  }
  return *this;
}

Status Statement::error(std::string_view what) const {
  return Status::io("sqlite " + std::string(what) + " failed (" + sqlite3_errmsg(db_) +
                    ") in: " + sql_);
}

Status Statement::bind(int index, int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) return error("bind");
  return Status::ok();
}

Status Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()),
                        SQLITE_TRANSIENT) != SQLITE_OK) {
    return error("bind");
  }
  return Status::ok();
}

Status Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) return error("bind");
  return Status::ok();
}

Result<bool> Statement::step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Status s = error("step");
  sqlite3_reset(stmt_);
  return s;
}

Status Statement::run() {
  for (;;) {
    auto r = step();
    if (!r.ok()) return r.status();
    if (!*r) return Status::ok();
  }
}

void Statement::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int Statement::column_count() const { return sqlite3_column_count(stmt_); }
int Statement::column_type(int col) const { return sqlite3_column_type(stmt_, col); }
int64_t Statement::column_int(int col) const { return sqlite3_column_int64(stmt_, col); }
double Statement::column_double(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::column_text(int col) const {
  const unsigned char* p = sqlite3_column_text(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<size_t>(n));
}

std::string Statement::column_blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  int n = sqlite3_column_bytes(stmt_, col);
  if (p == nullptr) return {};
  return std::string(static_cast<const char*>(p), static_cast<size_t>(n));
}

// ---------------------------------------------------------------------------------------------
// SqliteDb

Result<std::unique_ptr<SqliteDb>> SqliteDb::open(const std::filesystem::path& file) {
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(file.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    std::string msg = raw != nullptr ? sqlite3_errmsg(raw) : sqlite3_errstr(rc);
    sqlite3_close(raw);
    return Status::io("sqlite open " + file.string() + " failed: " + msg);
  }
  std::unique_ptr<SqliteDb> db(new SqliteDb(raw, file));
  sqlite3_busy_timeout(raw, 5000);
  sqlite3_extended_result_codes(raw, 1);
  auto mode = db->prepare("PRAGMA journal_mode=WAL");
  if (!mode.ok()) return mode.status();
  auto row = mode->step();
  if (!row.ok()) return row.status();
  if (!*row || mode->column_text(0) != "wal") {
    return Status::io("sqlite " + file.string() + ": could not switch to WAL journal mode");
  }
  AURA_RETURN_IF_ERROR(db->exec("PRAGMA synchronous=FULL"));
  return db;
}

SqliteDb::~SqliteDb() {
  cache_.clear();  // finalize statements before closing
  if (db_ != nullptr) sqlite3_close(db_);
}

Status SqliteDb::error(std::string_view sql) const {
  return Status::io("sqlite error (" + std::string(sqlite3_errmsg(db_)) +
                    ") in: " + std::string(sql));
}

Status SqliteDb::exec(std::string_view sql) {
  std::string s(sql);
  char* msg = nullptr;
  int rc = sqlite3_exec(db_, s.c_str(), nullptr, nullptr, &msg);
  if (rc != SQLITE_OK) {
    std::string m = msg != nullptr ? msg : sqlite3_errstr(rc);
    sqlite3_free(msg);
    return Status::io("sqlite error (" + m + ") in: " + s);
  }
  return Status::ok();
}

Result<Statement> SqliteDb::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt, &tail);
  if (rc != SQLITE_OK) return error(sql);
  if (stmt == nullptr) return Status::invalid("sqlite: no statement in: " + std::string(sql));
  return Statement(db_, stmt, std::string(sql));
}

Result<Statement*> SqliteDb::cached(std::string_view sql) {
  auto it = cache_.find(sql);
  if (it == cache_.end()) {
    auto st = prepare(sql);
    if (!st.ok()) return st.status();
    it = cache_.emplace(std::string(sql), std::move(st).value()).first;
  } else {
    it->second.reset();
  }
  return &it->second;
}

Status SqliteDb::begin() { return exec("BEGIN IMMEDIATE"); }
Status SqliteDb::commit() { return exec("COMMIT"); }
Status SqliteDb::rollback() { return exec("ROLLBACK"); }
bool SqliteDb::in_transaction() const { return sqlite3_get_autocommit(db_) == 0; }

// ---------------------------------------------------------------------------------------------
// Transaction

Transaction::~Transaction() {
  if (open_ && db_.in_transaction()) (void)db_.rollback();
}

Status Transaction::begin() {
  AURA_RETURN_IF_ERROR(db_.begin());
  open_ = true;
  return Status::ok();
}

Status Transaction::commit() {
  AURA_RETURN_IF_ERROR(db_.commit());
  open_ = false;
  return Status::ok();
}

}  // namespace aura
