#include "tests/support/power_loss_fs.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>

namespace {

using aura::testing::make_env;
using aura::testing::PowerLossFileSystem;

constexpr auto kCloseDeadline = std::chrono::seconds(30);

// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "aura-plfs-XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string join(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string key_of(int i) {
  char key[16];
  std::snprintf(key, sizeof key, "k%04d", i);
  return key;
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

rocksdb::Options db_options(rocksdb::Env* env) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.env = env;
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  return options;
}

// Destroys `db` on another thread and fails the whole run if that does not finish in time: a DB
// whose close hangs after power off cannot be waited for, nor safely left behind.
void close_within_deadline(std::unique_ptr<rocksdb::DB> db) {
  auto closed = std::make_shared<std::promise<void>>();
  std::future<void> done = closed->get_future();
  std::thread([db = std::move(db), closed]() mutable {
    db.reset();
    closed->set_value();
  }).detach();
  if (done.wait_for(kCloseDeadline) != std::future_status::ready) {
    std::fprintf(stderr, "closing the DB after power off hung\n");
    std::_Exit(2);
  }
}

// A RocksDB in a fresh directory, opened through a PowerLossFileSystem.
struct CrashableDb {
  TempDir dir;
  std::shared_ptr<PowerLossFileSystem> fs = std::make_shared<PowerLossFileSystem>();
  std::unique_ptr<rocksdb::Env> env = make_env(fs);
  std::string path = dir.join("db");
  std::unique_ptr<rocksdb::DB> db;

  void open(rocksdb::Options options) {
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, path, &raw);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    db.reset(raw);
  }
  void open() { open(db_options(env.get())); }

  rocksdb::Status put(int i, bool sync) {
    rocksdb::WriteOptions write;
    write.sync = sync;
    return db->Put(write, key_of(i), "value-" + std::to_string(i));
  }

  // Cuts power (if still on), closes the DB, and rewrites the disk to what a power cut leaves.
  void crash() {
    fs->power_off();
    close_within_deadline(std::move(db));
    aura::Status dropped = fs->drop_unsynced();
    INFO(fs->last_drop_report());
    REQUIRE_MESSAGE(dropped.is_ok(), dropped.message());
  }

  // Closes the DB without dropping anything: what SIGKILL leaves (the page cache survives).
  void kill() {
    fs->power_off();
    close_within_deadline(std::move(db));
  }

  // Opens the directory with the default file system, as the restarted machine would.
  std::unique_ptr<rocksdb::DB> reopen() const {
    rocksdb::Options options = db_options(rocksdb::Env::Default());
    options.create_if_missing = false;
    rocksdb::DB* raw = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, path, &raw);
    REQUIRE_MESSAGE(s.ok(), s.ToString());
    return std::unique_ptr<rocksdb::DB>(raw);
  }
};

std::optional<std::string> get(rocksdb::DB& db, int i) {
  std::string value;
  rocksdb::Status s = db.Get(rocksdb::ReadOptions(), key_of(i), &value);
  if (s.IsNotFound()) return std::nullopt;
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  return value;
}

// Number of leading keys 0, 1, ... present; CHECKs that none after the first gap is present.
int present_prefix(rocksdb::DB& db, int written) {
  int prefix = 0;
  while (prefix < written && get(db, prefix)) ++prefix;
  for (int i = prefix; i < written; ++i) {
    CAPTURE(i);
    CHECK_FALSE(get(db, i).has_value());
  }
  return prefix;
}

// Runs the crash workload: synced single-key writes with a memtable flush every few writes, so
// WAL syncs, new WALs, SSTs, MANIFEST appends, directory fsyncs and deletes are all in play.
// Returns how many writes were acknowledged before the first failure.
constexpr int kWorkloadWrites = 12;
constexpr int kFlushEvery = 5;

int run_workload(CrashableDb& t) {
  int acked = 0;
  for (int i = 0; i < kWorkloadWrites; ++i) {
    if (!t.put(i, /*sync=*/true).ok()) break;
    acked = i + 1;
    if (acked % kFlushEvery == 0 && !t.db->Flush(rocksdb::FlushOptions()).ok()) break;
  }
  return acked;
}

// Raw file system helpers for the tests below that need no DB.
rocksdb::IOStatus write_file(rocksdb::FileSystem& fs, const std::string& path,
                             const std::string& bytes, bool sync) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  rocksdb::IOStatus s = fs.NewWritableFile(path, rocksdb::FileOptions(), &file, nullptr);
  if (s.ok()) s = file->Append(bytes, rocksdb::IOOptions(), nullptr);
  if (s.ok() && sync) s = file->Sync(rocksdb::IOOptions(), nullptr);
  if (s.ok()) s = file->Close(rocksdb::IOOptions(), nullptr);
  return s;
}

rocksdb::IOStatus fsync_dir(rocksdb::FileSystem& fs, const std::string& path) {
  std::unique_ptr<rocksdb::FSDirectory> dir;
  rocksdb::IOStatus s = fs.NewDirectory(path, rocksdb::IOOptions(), &dir, nullptr);
  return s.ok() ? dir->Fsync(rocksdb::IOOptions(), nullptr) : s;
}

void drop(PowerLossFileSystem& fs) {
  aura::Status dropped = fs.drop_unsynced();
  INFO(fs.last_drop_report());
  REQUIRE_MESSAGE(dropped.is_ok(), dropped.message());
}

}  // namespace

TEST_CASE("power loss fs: writes with sync=true survive power off, drop_unsynced and reopen") {
  CrashableDb t;
  t.open();
  constexpr int kWrites = 50;
  for (int i = 0; i < kWrites; ++i) REQUIRE(t.put(i, /*sync=*/true).ok());
  CHECK(t.fs->sync_count() >= kWrites);

  t.crash();

  auto db = t.reopen();
  for (int i = 0; i < kWrites; ++i) {
    CAPTURE(i);
    CHECK(get(*db, i) == "value-" + std::to_string(i));
  }
}

TEST_CASE("power loss fs: sync=false writes after the last synced write are lost") {
  CrashableDb t;
  t.open();
  REQUIRE(t.put(0, /*sync=*/true).ok());
  REQUIRE(t.put(1, /*sync=*/false).ok());
  REQUIRE(t.put(2, /*sync=*/false).ok());

  t.crash();

  auto db = t.reopen();
  CHECK(get(*db, 0) == "value-0");
  CHECK_FALSE(get(*db, 1).has_value());
  CHECK_FALSE(get(*db, 2).has_value());
}

// The control for the test above: the unsynced writes do reach the disk (the page cache), so only
// drop_unsynced() can make them disappear.
TEST_CASE("power loss fs: without drop_unsynced the sync=false writes are still recovered") {
  CrashableDb t;
  t.open();
  REQUIRE(t.put(0, /*sync=*/true).ok());
  REQUIRE(t.put(1, /*sync=*/false).ok());

  t.kill();

  auto db = t.reopen();
  CHECK(get(*db, 0) == "value-0");
  CHECK(get(*db, 1) == "value-1");
}

TEST_CASE("power loss fs: a cut at any sync recovers a prefix holding every acked write") {
  // Count the syncs a full run makes, so every one of them gets its turn to fail.
  uint64_t workload_syncs = 0;
  {
    CrashableDb t;
    t.open();
    const uint64_t before = t.fs->sync_count();
    REQUIRE(run_workload(t) == kWorkloadWrites);
    workload_syncs = t.fs->sync_count() - before;
  }
  REQUIRE(workload_syncs >= kWorkloadWrites);

  uint64_t runs_cut_short = 0;
  for (uint64_t n = 1; n <= workload_syncs + 1; ++n) {
    CAPTURE(n);
    CrashableDb t;
    t.open();
    t.fs->power_off_after_syncs(n);
    const int acked = run_workload(t);
    if (!t.fs->is_power_on()) ++runs_cut_short;
    CAPTURE(acked);

    t.crash();
    const std::string report = t.fs->last_drop_report();
    INFO(report);

    auto db = t.reopen();
    const int recovered = present_prefix(*db, kWorkloadWrites);
    CAPTURE(recovered);
    CHECK(recovered >= acked);
    // Beyond the acknowledged writes, at most the one whose sync was cut can have made it.
    CHECK(recovered <= acked + 1);
  }
  CHECK(runs_cut_short == workload_syncs);  // each n <= workload_syncs cut power mid-workload
}

TEST_CASE("power loss fs: closing a DB with background flushes failing after power off returns") {
  CrashableDb t;
  rocksdb::Options options = db_options(t.env.get());
  options.write_buffer_size = 64 << 10;
  options.max_write_buffer_number = 4;
  t.open(options);
  constexpr int kWrites = 4000;
  const std::string padding(200, 'x');
  rocksdb::WriteOptions unsynced;
  int written = 0;
  for (; written < kWrites; ++written) {
    if (!t.db->Put(unsynced, key_of(written), padding).ok()) break;
    if (written == kWrites / 2) t.fs->power_off();  // flushes are likely in flight now
  }
  CHECK(written < kWrites);  // writes after power off fail instead of being acknowledged

  t.crash();

  auto db = t.reopen();
  (void)present_prefix(*db, kWrites);
}

TEST_CASE("power loss fs: a file whose directory was never fsynced disappears") {
  TempDir dir;
  PowerLossFileSystem fs;
  REQUIRE(write_file(fs, dir.join("durable"), "kept", /*sync=*/true).ok());
  REQUIRE(fsync_dir(fs, dir.path()).ok());
  REQUIRE(write_file(fs, dir.join("lost"), "synced, but its name is not", /*sync=*/true).ok());

  fs.power_off();
  drop(fs);

  CHECK(read_file(dir.join("durable")) == "kept");
  CHECK_FALSE(std::filesystem::exists(dir.join("lost")));
}

TEST_CASE("power loss fs: bytes appended after the last sync are cut off") {
  TempDir dir;
  PowerLossFileSystem fs;
  std::unique_ptr<rocksdb::FSWritableFile> file;
  REQUIRE(fs.NewWritableFile(dir.join("f"), rocksdb::FileOptions(), &file, nullptr).ok());
  REQUIRE(file->Append("synced|", rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(file->Sync(rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(fsync_dir(fs, dir.path()).ok());
  REQUIRE(file->Append("range-synced|", rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(file->RangeSync(0, 20, rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(file->Append("closed", rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(file->Close(rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(read_file(dir.join("f")) == "synced|range-synced|closed");

  fs.power_off();
  drop(fs);

  CHECK(read_file(dir.join("f")) == "synced|");
}

TEST_CASE("power loss fs: a rename without a directory fsync is undone, restoring the target") {
  TempDir dir;
  PowerLossFileSystem fs;
  const std::string current = dir.join("CURRENT");
  const std::string temp = dir.join("CURRENT.tmp");
  REQUIRE(write_file(fs, current, "MANIFEST-1\n", /*sync=*/true).ok());
  REQUIRE(fsync_dir(fs, dir.path()).ok());
  REQUIRE(write_file(fs, temp, "MANIFEST-2\n", /*sync=*/true).ok());
  REQUIRE(fs.RenameFile(temp, current, rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(read_file(current) == "MANIFEST-2\n");

  fs.power_off();
  drop(fs);

  CHECK(read_file(current) == "MANIFEST-1\n");
  CHECK_FALSE(std::filesystem::exists(temp));  // its creation was not fsynced either
}

TEST_CASE("power loss fs: a rename followed by a directory fsync survives") {
  TempDir dir;
  PowerLossFileSystem fs;
  const std::string current = dir.join("CURRENT");
  REQUIRE(write_file(fs, current, "MANIFEST-1\n", /*sync=*/true).ok());
  REQUIRE(fsync_dir(fs, dir.path()).ok());
  REQUIRE(write_file(fs, dir.join("tmp"), "MANIFEST-2\n", /*sync=*/true).ok());
  REQUIRE(fs.RenameFile(dir.join("tmp"), current, rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(fsync_dir(fs, dir.path()).ok());

  fs.power_off();
  drop(fs);

  CHECK(read_file(current) == "MANIFEST-2\n");
  CHECK_FALSE(std::filesystem::exists(dir.join("tmp")));
}

TEST_CASE("power loss fs: a delete without a directory fsync is undone with the durable bytes") {
  TempDir dir;
  PowerLossFileSystem fs;
  const std::string path = dir.join("old.log");
  std::unique_ptr<rocksdb::FSWritableFile> file;
  REQUIRE(fs.NewWritableFile(path, rocksdb::FileOptions(), &file, nullptr).ok());
  REQUIRE(file->Append("durable", rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(file->Sync(rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(file->Append("+volatile", rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(file->Close(rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(fsync_dir(fs, dir.path()).ok());
  REQUIRE(fs.DeleteFile(path, rocksdb::IOOptions(), nullptr).ok());
  REQUIRE(write_file(fs, dir.join("born-and-deleted"), "x", /*sync=*/true).ok());
  REQUIRE(fs.DeleteFile(dir.join("born-and-deleted"), rocksdb::IOOptions(), nullptr).ok());

  fs.power_off();
  drop(fs);

  CHECK(read_file(path) == "durable");
  CHECK_FALSE(std::filesystem::exists(dir.join("born-and-deleted")));
}

TEST_CASE("power loss fs: after power_off every mutation fails and reads still work") {
  TempDir dir;
  PowerLossFileSystem fs;
  REQUIRE(write_file(fs, dir.join("a"), "abc", /*sync=*/true).ok());
  std::unique_ptr<rocksdb::FSWritableFile> open_file;
  REQUIRE(fs.NewWritableFile(dir.join("open"), rocksdb::FileOptions(), &open_file, nullptr).ok());
  std::unique_ptr<rocksdb::FSDirectory> directory;
  REQUIRE(fs.NewDirectory(dir.path(), rocksdb::IOOptions(), &directory, nullptr).ok());

  fs.power_off();
  CHECK_FALSE(fs.is_power_on());

  const rocksdb::IOOptions io;
  CHECK(open_file->Append("x", io, nullptr).IsIOError());
  CHECK(open_file->Flush(io, nullptr).IsIOError());
  CHECK(open_file->Sync(io, nullptr).IsIOError());
  CHECK(open_file->Fsync(io, nullptr).IsIOError());
  CHECK(open_file->Close(io, nullptr).IsIOError());
  CHECK(directory->Fsync(io, nullptr).IsIOError());
  CHECK(write_file(fs, dir.join("b"), "x", /*sync=*/false).IsIOError());
  CHECK(fs.RenameFile(dir.join("a"), dir.join("c"), io, nullptr).IsIOError());
  CHECK(fs.DeleteFile(dir.join("a"), io, nullptr).IsIOError());
  CHECK(fs.CreateDir(dir.join("d"), io, nullptr).IsIOError());
  CHECK_FALSE(std::filesystem::exists(dir.join("b")));

  std::string bytes;
  CHECK(rocksdb::ReadFileToString(&fs, dir.join("a"), &bytes).ok());
  CHECK(bytes == "abc");
  CHECK(fs.FileExists(dir.join("a"), io, nullptr).ok());
}

TEST_CASE("power loss fs: power_off_after_syncs(n) fails the n-th sync and cuts power") {
  TempDir dir;
  PowerLossFileSystem fs;
  std::unique_ptr<rocksdb::FSWritableFile> file;
  REQUIRE(fs.NewWritableFile(dir.join("f"), rocksdb::FileOptions(), &file, nullptr).ok());
  REQUIRE(fsync_dir(fs, dir.path()).ok());
  const uint64_t before = fs.sync_count();

  fs.power_off_after_syncs(3);
  const rocksdb::IOOptions io;
  REQUIRE(file->Append("1", io, nullptr).ok());
  CHECK(file->Sync(io, nullptr).ok());
  REQUIRE(file->Append("2", io, nullptr).ok());
  CHECK(file->Fsync(io, nullptr).ok());
  REQUIRE(file->Append("3", io, nullptr).ok());
  CHECK(fs.is_power_on());
  CHECK(file->Sync(io, nullptr).IsIOError());
  CHECK_FALSE(fs.is_power_on());
  CHECK(fs.sync_count() == before + 3);
  CHECK(file->Sync(io, nullptr).IsIOError());
  CHECK(fs.sync_count() == before + 3);  // attempts without power are not counted

  file.reset();
  drop(fs);
  CHECK(read_file(dir.join("f")) == "12");
}

TEST_CASE("power loss fs: drop_unsynced refuses while power is on; reset powers back on") {
  TempDir dir;
  PowerLossFileSystem fs;
  REQUIRE(write_file(fs, dir.join("a"), "abc", /*sync=*/false).ok());
  aura::Status refused = fs.drop_unsynced();
  CHECK(refused.code() == aura::ErrorCode::kFailedPrecondition);
  CHECK(read_file(dir.join("a")) == "abc");

  fs.power_off();
  fs.reset();
  CHECK(fs.is_power_on());
  CHECK(fs.sync_count() == 0);
  fs.power_off();
  drop(fs);  // nothing is tracked any more, so nothing is dropped
  CHECK(read_file(dir.join("a")) == "abc");
}
