#include "tests/support/power_loss_fs.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <system_error>
#include <utility>
#include <vector>

namespace aura::testing {

using rocksdb::FileOptions;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

namespace {

// Durable bytes of deleted or overwritten files are kept in memory until their directory is
// fsynced, so drop_unsynced() can bring them back; past this total they are not kept.
constexpr uint64_t kMaxKeptBytes = uint64_t{64} << 20;
constexpr size_t kCopyChunkBytes = size_t{64} << 10;

IOStatus power_off_error() { return IOStatus::IOError("power off"); }

// One spelling per file, so "db//CURRENT" and "/abs/db/CURRENT" are tracked as the same file.
std::string normalize(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::absolute(path, ec);
  if (ec) p = path;
  std::string s = p.lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

std::string parent_of(const std::string& normalized) {
  const size_t slash = normalized.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return normalized.substr(0, slash);
}

bool exists(rocksdb::FileSystem& fs, const std::string& path) {
  return fs.FileExists(path, IOOptions(), nullptr).ok();
}

IOStatus read_prefix(rocksdb::FileSystem& fs, const std::string& path, uint64_t limit_bytes,
                     std::string* out) {
  out->clear();
  std::unique_ptr<rocksdb::FSSequentialFile> file;
  IOStatus s = fs.NewSequentialFile(path, FileOptions(), &file, nullptr);
  if (!s.ok()) return s;
  std::string scratch(kCopyChunkBytes, '\0');
  while (out->size() < limit_bytes) {
    const size_t want =
        static_cast<size_t>(std::min<uint64_t>(kCopyChunkBytes, limit_bytes - out->size()));
    Slice got;
    s = file->Read(want, IOOptions(), &got, scratch.data(), nullptr);
    if (!s.ok()) return s;
    if (got.empty()) break;
    out->append(got.data(), got.size());
  }
  return IOStatus::OK();
}

IOStatus write_whole_file(rocksdb::FileSystem& fs, const std::string& path,
                          const std::string& bytes) {
  std::unique_ptr<rocksdb::FSWritableFile> file;
  IOStatus s = fs.NewWritableFile(path, FileOptions(), &file, nullptr);
  if (!s.ok()) return s;
  s = file->Append(bytes, IOOptions(), nullptr);
  if (s.ok()) s = file->Fsync(IOOptions(), nullptr);
  IOStatus closed = file->Close(IOOptions(), nullptr);
  return s.ok() ? closed : s;
}

IOStatus truncate_file(rocksdb::FileSystem& fs, const std::string& path, uint64_t size_bytes) {
  IOStatus s = fs.Truncate(path, static_cast<size_t>(size_bytes), IOOptions(), nullptr);
  if (!s.IsNotSupported()) return s;
  std::error_code ec;
  std::filesystem::resize_file(path, size_bytes, ec);
  return ec ? IOStatus::IOError("truncate " + path + ": " + ec.message()) : IOStatus::OK();
}

}  // namespace

struct PowerLossFileSystem::State {
  // What a power cut keeps of one file's contents. Shared by every path (hard link) naming it and
  // by the open handles writing it, so renames while open are followed.
  struct TrackedFile {
    uint64_t size_bytes = 0;    // logical length written so far
    uint64_t synced_bytes = 0;  // length at the last successful Sync/Fsync
  };

  enum class OpKind { kCreate, kRename, kDelete, kLink };

  // What became of the durable bytes a delete or an overwriting rename removed from a name.
  enum class Replaced {
    kNothing,    // the name held no file (a rename to a fresh name)
    kKept,       // kept in `replaced_bytes`
    kNotNeeded,  // the name itself was never made durable, so a power cut removes it anyway
    kNotKept,    // too large for kMaxKeptBytes, or unreadable
  };

  // A namespace change not yet made durable by an fsync of every directory it touched.
  struct PendingOp {
    uint64_t seq = 0;
    OpKind kind = OpKind::kCreate;
    std::string path;    // kCreate, kDelete: the file; kRename, kLink: the source
    std::string target;  // kRename, kLink: the destination
    std::set<std::string> unsynced_dirs;
    Replaced replaced = Replaced::kNothing;
    std::string replaced_bytes;
  };

  explicit State(std::shared_ptr<rocksdb::FileSystem> base_fs) : base(std::move(base_fs)) {}

  const std::shared_ptr<rocksdb::FileSystem> base;

  mutable std::mutex mu;
  bool power_on = true;
  uint64_t syncs = 0;
  std::optional<uint64_t> power_off_at_sync;
  std::map<std::string, std::shared_ptr<TrackedFile>> files;  // by normalized path
  std::vector<PendingOp> ops;                                 // oldest first
  uint64_t last_seq = 0;
  uint64_t kept_bytes = 0;
  std::string report;

  IOStatus admit_write() const {
    std::lock_guard lock(mu);
    return power_on ? IOStatus::OK() : power_off_error();
  }

  // Counts a sync attempt; the one power_off_after_syncs() picked cuts the power and fails.
  IOStatus admit_sync() {
    std::lock_guard lock(mu);
    if (!power_on) return power_off_error();
    ++syncs;
    if (power_off_at_sync && syncs >= *power_off_at_sync) {
      power_on = false;
      power_off_at_sync.reset();
      return power_off_error();
    }
    return IOStatus::OK();
  }

  void extend_to(TrackedFile& file, uint64_t end_bytes) {
    std::lock_guard lock(mu);
    file.size_bytes = std::max(file.size_bytes, end_bytes);
  }

  void grow_by(TrackedFile& file, uint64_t n_bytes) {
    std::lock_guard lock(mu);
    file.size_bytes += n_bytes;
  }

  void truncated_to(TrackedFile& file, uint64_t size_bytes) {
    std::lock_guard lock(mu);
    file.size_bytes = size_bytes;
    file.synced_bytes = std::min(file.synced_bytes, size_bytes);
  }

  uint64_t size_of(const TrackedFile& file) const {
    std::lock_guard lock(mu);
    return file.size_bytes;
  }

  // `observed_bytes` is the length seen before the sync started: bytes appended while it ran may
  // or may not have made it, so they do not count.
  void synced(TrackedFile& file, uint64_t observed_bytes) {
    std::lock_guard lock(mu);
    file.synced_bytes = std::max(file.synced_bytes, observed_bytes);
  }

  uint64_t current_seq() const {
    std::lock_guard lock(mu);
    return last_seq;
  }

  // A successful fsync of `dir` that began after op `upto_seq` makes `dir`'s part of every op up
  // to it durable.
  void dir_synced(const std::string& dir, uint64_t upto_seq) {
    std::lock_guard lock(mu);
    for (PendingOp& op : ops) {
      if (op.seq <= upto_seq) op.unsynced_dirs.erase(dir);
    }
    auto durable = std::remove_if(ops.begin(), ops.end(), [&](const PendingOp& op) {
      if (!op.unsynced_dirs.empty()) return false;
      kept_bytes -= op.replaced_bytes.size();
      return true;
    });
    ops.erase(durable, ops.end());
  }

  // --- The rest REQUIRES: `mu` held.

  void record_locked(PendingOp op) {
    op.seq = ++last_seq;
    ops.push_back(std::move(op));
  }

  // True if the file now at `path` got its name from a create no fsync has made durable.
  bool name_is_pending_create_locked(const std::string& path) const {
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) {
      if (it->kind == OpKind::kCreate && it->path == path) return true;
      if (it->kind == OpKind::kDelete && it->path == path) return false;
      if ((it->kind == OpKind::kRename || it->kind == OpKind::kLink) && it->target == path) {
        return false;
      }
      if (it->kind == OpKind::kRename && it->path == path) return false;
    }
    return false;
  }

  // Before `path` loses its file (delete, or rename over it): keep what a power cut would restore.
  void keep_replaced_locked(const std::string& path, PendingOp& op) {
    if (name_is_pending_create_locked(path)) {
      op.replaced = Replaced::kNotNeeded;
      return;
    }
    uint64_t durable_bytes = 0;
    if (auto it = files.find(path); it != files.end()) {
      durable_bytes = it->second->synced_bytes;
    } else if (!base->GetFileSize(path, IOOptions(), &durable_bytes, nullptr).ok()) {
      op.replaced = Replaced::kNotKept;
      return;
    }
    if (kept_bytes + durable_bytes > kMaxKeptBytes ||
        !read_prefix(*base, path, durable_bytes, &op.replaced_bytes).ok()) {
      op.replaced = Replaced::kNotKept;
      op.replaced_bytes.clear();
      return;
    }
    op.replaced = Replaced::kKept;
    kept_bytes += op.replaced_bytes.size();
  }

  void forget_kept_locked(PendingOp& op) {
    kept_bytes -= op.replaced_bytes.size();
    op.replaced_bytes.clear();
  }

  // A file was just opened for writing at `path`, truncated (`truncated`) or kept as it was.
  std::shared_ptr<TrackedFile> opened_locked(const std::string& path, bool existed,
                                             bool truncated) {
    if (!existed) {
      PendingOp op;
      op.kind = OpKind::kCreate;
      op.path = path;
      op.unsynced_dirs = {parent_of(path)};
      record_locked(std::move(op));
      return files[path] = std::make_shared<TrackedFile>();
    }
    if (truncated) return files[path] = std::make_shared<TrackedFile>();
    auto it = files.find(path);
    if (it != files.end()) return it->second;
    uint64_t size_bytes = 0;
    (void)base->GetFileSize(path, IOOptions(), &size_bytes, nullptr);
    auto file = std::make_shared<TrackedFile>();
    file->size_bytes = size_bytes;
    file->synced_bytes = size_bytes;  // it predates tracking, so it counts as durable
    return files[path] = file;
  }

  void moved_locked(const std::string& src, const std::string& dst) {
    auto file = files.find(src);
    if (file == files.end()) {
      files.erase(dst);
      return;
    }
    std::shared_ptr<TrackedFile> moved = file->second;
    files.erase(file);
    files[dst] = std::move(moved);
  }

  void undo_locked(const PendingOp& op, std::vector<std::string>& lines,
                   aura::Status& first_error) {
    auto failed = [&](const std::string& what, const IOStatus& s) {
      lines.push_back("FAILED " + what + ": " + s.ToString());
      if (first_error.is_ok()) first_error = aura::Status::io(what + ": " + s.ToString());
    };
    rocksdb::FileSystem& fs = *base;
    switch (op.kind) {
      case OpKind::kCreate:
      case OpKind::kLink: {
        const std::string& name = op.kind == OpKind::kCreate ? op.path : op.target;
        if (!exists(fs, name)) break;
        IOStatus s = fs.DeleteFile(name, IOOptions(), nullptr);
        if (!s.ok()) {
          failed("remove " + name, s);
        } else {
          lines.push_back("removed " + name + " (" +
                          (op.kind == OpKind::kCreate ? "created" : "hard-linked") +
                          ", directory not fsynced since)");
        }
        break;
      }
      case OpKind::kRename: {
        const std::string what = "rename " + op.path + " -> " + op.target;
        if (op.replaced == Replaced::kNotKept) {
          lines.push_back("kept " + what + ": the file it overwrote was not kept");
          break;
        }
        if (!exists(fs, op.target)) {
          lines.push_back("cannot undo " + what + ": " + op.target + " is gone");
          break;
        }
        if (exists(fs, op.path)) {
          lines.push_back("cannot undo " + what + ": " + op.path + " exists again");
          break;
        }
        IOStatus s = fs.RenameFile(op.target, op.path, IOOptions(), nullptr);
        if (!s.ok()) {
          failed("undo " + what, s);
          break;
        }
        lines.push_back("undid " + what + " (directory not fsynced since)");
        if (op.replaced == Replaced::kKept) {
          s = write_whole_file(fs, op.target, op.replaced_bytes);
          if (!s.ok()) {
            failed("restore " + op.target, s);
          } else {
            lines.push_back("restored " + op.target + " (" +
                            std::to_string(op.replaced_bytes.size()) +
                            " durable bytes the rename had replaced)");
          }
        }
        break;
      }
      case OpKind::kDelete: {
        if (op.replaced == Replaced::kNotKept) {
          lines.push_back("cannot restore deleted " + op.path + ": its bytes were not kept");
          break;
        }
        if (op.replaced != Replaced::kKept) break;
        if (exists(fs, op.path)) {
          lines.push_back("cannot restore deleted " + op.path + ": a file is there again");
          break;
        }
        IOStatus s = write_whole_file(fs, op.path, op.replaced_bytes);
        if (!s.ok()) {
          failed("restore " + op.path, s);
        } else {
          lines.push_back("restored deleted " + op.path + " (" +
                          std::to_string(op.replaced_bytes.size()) +
                          " durable bytes; directory not fsynced since)");
        }
        break;
      }
    }
  }
};

namespace {

using State = PowerLossFileSystem::State;

class PowerLossWritableFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  PowerLossWritableFile(std::unique_ptr<rocksdb::FSWritableFile> base, std::shared_ptr<State> state,
                        std::shared_ptr<State::TrackedFile> file)
      : FSWritableFileOwnerWrapper(std::move(base)),
        state_(std::move(state)),
        file_(std::move(file)) {}

  IOStatus Append(const Slice& data, const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    if (s.ok()) s = target()->Append(data, options, dbg);
    if (s.ok()) state_->grow_by(*file_, data.size());
    return s;
  }
  IOStatus Append(const Slice& data, const IOOptions& options,
                  const rocksdb::DataVerificationInfo& info, IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    if (s.ok()) s = target()->Append(data, options, info, dbg);
    if (s.ok()) state_->grow_by(*file_, data.size());
    return s;
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& options,
                            IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    if (s.ok()) s = target()->PositionedAppend(data, offset, options, dbg);
    if (s.ok()) state_->extend_to(*file_, offset + data.size());
    return s;
  }
  IOStatus PositionedAppend(const Slice& data, uint64_t offset, const IOOptions& options,
                            const rocksdb::DataVerificationInfo& info,
                            IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    if (s.ok()) s = target()->PositionedAppend(data, offset, options, info, dbg);
    if (s.ok()) state_->extend_to(*file_, offset + data.size());
    return s;
  }
  IOStatus Truncate(uint64_t size, const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    if (s.ok()) s = target()->Truncate(size, options, dbg);
    if (s.ok()) state_->truncated_to(*file_, size);
    return s;
  }
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    return s.ok() ? target()->Close(options, dbg) : s;
  }
  IOStatus Flush(const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    return s.ok() ? target()->Flush(options, dbg) : s;
  }
  IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override {
    return sync_with([&] { return target()->Sync(options, dbg); });
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    return sync_with([&] { return target()->Fsync(options, dbg); });
  }
  // sync_file_range persists neither the file size nor metadata, so nothing counts as durable.
  IOStatus RangeSync(uint64_t offset, uint64_t nbytes, const IOOptions& options,
                     IODebugContext* dbg) override {
    IOStatus s = state_->admit_sync();
    return s.ok() ? target()->RangeSync(offset, nbytes, options, dbg) : s;
  }
  IOStatus Allocate(uint64_t offset, uint64_t len, const IOOptions& options,
                    IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    return s.ok() ? target()->Allocate(offset, len, options, dbg) : s;
  }

 private:
  template <class SyncFn>
  IOStatus sync_with(SyncFn&& sync) {
    IOStatus s = state_->admit_sync();
    if (!s.ok()) return s;
    const uint64_t observed_bytes = state_->size_of(*file_);
    s = sync();
    if (s.ok()) state_->synced(*file_, observed_bytes);
    return s;
  }

  std::shared_ptr<State> state_;
  std::shared_ptr<State::TrackedFile> file_;
};

// Overwrites inside the durable prefix are not modelled: only the length is tracked.
class PowerLossRandomRWFile : public rocksdb::FSRandomRWFileOwnerWrapper {
 public:
  PowerLossRandomRWFile(std::unique_ptr<rocksdb::FSRandomRWFile> base, std::shared_ptr<State> state,
                        std::shared_ptr<State::TrackedFile> file)
      : FSRandomRWFileOwnerWrapper(std::move(base)),
        state_(std::move(state)),
        file_(std::move(file)) {}

  IOStatus Write(uint64_t offset, const Slice& data, const IOOptions& options,
                 IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    if (s.ok()) s = target()->Write(offset, data, options, dbg);
    if (s.ok()) state_->extend_to(*file_, offset + data.size());
    return s;
  }
  IOStatus Flush(const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    return s.ok() ? target()->Flush(options, dbg) : s;
  }
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    IOStatus s = state_->admit_write();
    return s.ok() ? target()->Close(options, dbg) : s;
  }
  IOStatus Sync(const IOOptions& options, IODebugContext* dbg) override {
    return sync_with([&] { return target()->Sync(options, dbg); });
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    return sync_with([&] { return target()->Fsync(options, dbg); });
  }

 private:
  template <class SyncFn>
  IOStatus sync_with(SyncFn&& sync) {
    IOStatus s = state_->admit_sync();
    if (!s.ok()) return s;
    const uint64_t observed_bytes = state_->size_of(*file_);
    s = sync();
    if (s.ok()) state_->synced(*file_, observed_bytes);
    return s;
  }

  std::shared_ptr<State> state_;
  std::shared_ptr<State::TrackedFile> file_;
};

class PowerLossDirectory : public rocksdb::FSDirectory {
 public:
  PowerLossDirectory(std::unique_ptr<rocksdb::FSDirectory> base, std::shared_ptr<State> state,
                     std::string path)
      : base_(std::move(base)), state_(std::move(state)), path_(std::move(path)) {}

  IOStatus Fsync(const IOOptions& options, IODebugContext* dbg) override {
    return fsync_with([&] { return base_->Fsync(options, dbg); });
  }
  IOStatus FsyncWithDirOptions(const IOOptions& options, IODebugContext* dbg,
                               const rocksdb::DirFsyncOptions& dir_options) override {
    return fsync_with([&] { return base_->FsyncWithDirOptions(options, dbg, dir_options); });
  }
  IOStatus Close(const IOOptions& options, IODebugContext* dbg) override {
    return base_->Close(options, dbg);
  }
  size_t GetUniqueId(char* id, size_t max_size) const override {
    return base_->GetUniqueId(id, max_size);
  }

 private:
  template <class FsyncFn>
  IOStatus fsync_with(FsyncFn&& fsync) {
    IOStatus s = state_->admit_sync();
    if (!s.ok()) return s;
    // Every change recorded by now completed before this fsync began.
    const uint64_t upto_seq = state_->current_seq();
    s = fsync();
    if (s.ok()) state_->dir_synced(path_, upto_seq);
    return s;
  }

  std::unique_ptr<rocksdb::FSDirectory> base_;
  std::shared_ptr<State> state_;
  std::string path_;
};

}  // namespace

PowerLossFileSystem::PowerLossFileSystem(std::shared_ptr<rocksdb::FileSystem> base)
    : rocksdb::FileSystemWrapper(base), state_(std::make_shared<State>(base)) {}

PowerLossFileSystem::~PowerLossFileSystem() = default;

IOStatus PowerLossFileSystem::NewWritableFile(const std::string& fname, const FileOptions& options,
                                              std::unique_ptr<rocksdb::FSWritableFile>* result,
                                              IODebugContext* dbg) {
  std::lock_guard lock(state_->mu);
  if (!state_->power_on) return power_off_error();
  const bool existed = exists(*target(), fname);
  std::unique_ptr<rocksdb::FSWritableFile> base;
  IOStatus s = target()->NewWritableFile(fname, options, &base, dbg);
  if (!s.ok()) return s;
  auto file = state_->opened_locked(normalize(fname), existed, /*truncated=*/true);
  *result = std::make_unique<PowerLossWritableFile>(std::move(base), state_, std::move(file));
  return s;
}

IOStatus PowerLossFileSystem::ReopenWritableFile(const std::string& fname,
                                                 const FileOptions& options,
                                                 std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                 IODebugContext* dbg) {
  std::lock_guard lock(state_->mu);
  if (!state_->power_on) return power_off_error();
  const bool existed = exists(*target(), fname);
  std::unique_ptr<rocksdb::FSWritableFile> base;
  IOStatus s = target()->ReopenWritableFile(fname, options, &base, dbg);
  if (!s.ok()) return s;
  auto file = state_->opened_locked(normalize(fname), existed, /*truncated=*/false);
  *result = std::make_unique<PowerLossWritableFile>(std::move(base), state_, std::move(file));
  return s;
}

IOStatus PowerLossFileSystem::ReuseWritableFile(const std::string& fname,
                                                const std::string& old_fname,
                                                const FileOptions& options,
                                                std::unique_ptr<rocksdb::FSWritableFile>* result,
                                                IODebugContext* dbg) {
  std::lock_guard lock(state_->mu);
  if (!state_->power_on) return power_off_error();
  const std::string src = normalize(old_fname);
  const std::string dst = normalize(fname);
  State::PendingOp op;
  op.kind = State::OpKind::kRename;
  op.path = src;
  op.target = dst;
  op.unsynced_dirs = {parent_of(src), parent_of(dst)};
  if (exists(*target(), fname)) state_->keep_replaced_locked(dst, op);
  std::unique_ptr<rocksdb::FSWritableFile> base;
  IOStatus s = target()->ReuseWritableFile(fname, old_fname, options, &base, dbg);
  if (!s.ok()) {
    state_->forget_kept_locked(op);
    return s;
  }
  state_->record_locked(std::move(op));
  // The old log's bytes stay on disk but are overwritten from offset 0; only what is synced from
  // now on counts, so a power cut before the first sync leaves the file empty.
  state_->files.erase(src);
  auto file = state_->files[dst] = std::make_shared<State::TrackedFile>();
  *result = std::make_unique<PowerLossWritableFile>(std::move(base), state_, std::move(file));
  return s;
}

IOStatus PowerLossFileSystem::NewRandomRWFile(const std::string& fname, const FileOptions& options,
                                              std::unique_ptr<rocksdb::FSRandomRWFile>* result,
                                              IODebugContext* dbg) {
  std::lock_guard lock(state_->mu);
  if (!state_->power_on) return power_off_error();
  const bool existed = exists(*target(), fname);
  std::unique_ptr<rocksdb::FSRandomRWFile> base;
  IOStatus s = target()->NewRandomRWFile(fname, options, &base, dbg);
  if (!s.ok()) return s;
  auto file = state_->opened_locked(normalize(fname), existed, /*truncated=*/false);
  *result = std::make_unique<PowerLossRandomRWFile>(std::move(base), state_, std::move(file));
  return s;
}

IOStatus PowerLossFileSystem::NewDirectory(const std::string& name, const IOOptions& options,
                                           std::unique_ptr<rocksdb::FSDirectory>* result,
                                           IODebugContext* dbg) {
  std::unique_ptr<rocksdb::FSDirectory> base;
  IOStatus s = target()->NewDirectory(name, options, &base, dbg);
  if (!s.ok()) return s;
  *result = std::make_unique<PowerLossDirectory>(std::move(base), state_, normalize(name));
  return s;
}

IOStatus PowerLossFileSystem::RenameFile(const std::string& src, const std::string& target,
                                         const IOOptions& options, IODebugContext* dbg) {
  std::lock_guard lock(state_->mu);
  if (!state_->power_on) return power_off_error();
  const std::string from = normalize(src);
  const std::string to = normalize(target);
  if (from == to) return this->target()->RenameFile(src, target, options, dbg);
  State::PendingOp op;
  op.kind = State::OpKind::kRename;
  op.path = from;
  op.target = to;
  op.unsynced_dirs = {parent_of(from), parent_of(to)};
  if (exists(*this->target(), target)) state_->keep_replaced_locked(to, op);
  IOStatus s = this->target()->RenameFile(src, target, options, dbg);
  if (!s.ok()) {
    state_->forget_kept_locked(op);
    return s;
  }
  state_->record_locked(std::move(op));
  state_->moved_locked(from, to);
  return s;
}

IOStatus PowerLossFileSystem::LinkFile(const std::string& src, const std::string& target,
                                       const IOOptions& options, IODebugContext* dbg) {
  std::lock_guard lock(state_->mu);
  if (!state_->power_on) return power_off_error();
  IOStatus s = this->target()->LinkFile(src, target, options, dbg);
  if (!s.ok()) return s;
  const std::string from = normalize(src);
  const std::string to = normalize(target);
  State::PendingOp op;
  op.kind = State::OpKind::kLink;
  op.path = from;
  op.target = to;
  op.unsynced_dirs = {parent_of(to)};
  state_->record_locked(std::move(op));
  if (auto it = state_->files.find(from); it != state_->files.end()) {
    state_->files[to] = it->second;
  }
  return s;
}

IOStatus PowerLossFileSystem::DeleteFile(const std::string& fname, const IOOptions& options,
                                         IODebugContext* dbg) {
  std::lock_guard lock(state_->mu);
  if (!state_->power_on) return power_off_error();
  const std::string path = normalize(fname);
  State::PendingOp op;
  op.kind = State::OpKind::kDelete;
  op.path = path;
  op.unsynced_dirs = {parent_of(path)};
  if (exists(*target(), fname)) state_->keep_replaced_locked(path, op);
  IOStatus s = target()->DeleteFile(fname, options, dbg);
  if (!s.ok()) {
    state_->forget_kept_locked(op);
    return s;
  }
  state_->record_locked(std::move(op));
  state_->files.erase(path);
  return s;
}

IOStatus PowerLossFileSystem::Truncate(const std::string& fname, size_t size,
                                       const IOOptions& options, IODebugContext* dbg) {
  std::lock_guard lock(state_->mu);
  if (!state_->power_on) return power_off_error();
  IOStatus s = target()->Truncate(fname, size, options, dbg);
  if (!s.ok()) return s;
  if (auto it = state_->files.find(normalize(fname)); it != state_->files.end()) {
    it->second->size_bytes = size;
    it->second->synced_bytes = std::min<uint64_t>(it->second->synced_bytes, size);
  }
  return s;
}

IOStatus PowerLossFileSystem::CreateDir(const std::string& dirname, const IOOptions& options,
                                        IODebugContext* dbg) {
  IOStatus s = state_->admit_write();
  return s.ok() ? target()->CreateDir(dirname, options, dbg) : s;
}

IOStatus PowerLossFileSystem::CreateDirIfMissing(const std::string& dirname,
                                                 const IOOptions& options, IODebugContext* dbg) {
  IOStatus s = state_->admit_write();
  return s.ok() ? target()->CreateDirIfMissing(dirname, options, dbg) : s;
}

IOStatus PowerLossFileSystem::DeleteDir(const std::string& dirname, const IOOptions& options,
                                        IODebugContext* dbg) {
  IOStatus s = state_->admit_write();
  return s.ok() ? target()->DeleteDir(dirname, options, dbg) : s;
}

void PowerLossFileSystem::power_off() {
  std::lock_guard lock(state_->mu);
  state_->power_on = false;
}

void PowerLossFileSystem::power_off_after_syncs(uint64_t n) {
  std::lock_guard lock(state_->mu);
  if (n == 0) {
    state_->power_on = false;
    return;
  }
  state_->power_off_at_sync = state_->syncs + n;
}

bool PowerLossFileSystem::is_power_on() const {
  std::lock_guard lock(state_->mu);
  return state_->power_on;
}

uint64_t PowerLossFileSystem::sync_count() const {
  std::lock_guard lock(state_->mu);
  return state_->syncs;
}

aura::Status PowerLossFileSystem::drop_unsynced() {
  std::lock_guard lock(state_->mu);
  if (state_->power_on) {
    return aura::Status::failed_precondition("drop_unsynced: power is still on");
  }
  rocksdb::FileSystem& fs = *state_->base;
  std::vector<std::string> lines;
  aura::Status first_error;

  // Contents first, at the names the files have now; the namespace is rolled back after.
  for (const auto& [path, file] : state_->files) {
    uint64_t on_disk_bytes = 0;
    if (!fs.GetFileSize(path, IOOptions(), &on_disk_bytes, nullptr).ok()) continue;
    if (on_disk_bytes <= file->synced_bytes) continue;
    IOStatus s = truncate_file(fs, path, file->synced_bytes);
    if (!s.ok()) {
      lines.push_back("FAILED truncate " + path + ": " + s.ToString());
      if (first_error.is_ok()) {
        first_error = aura::Status::io("truncate " + path + ": " + s.ToString());
      }
      continue;
    }
    lines.push_back("truncated " + path + " from " + std::to_string(on_disk_bytes) + " to " +
                    std::to_string(file->synced_bytes) + " bytes (the rest was never synced)");
  }
  for (auto op = state_->ops.rbegin(); op != state_->ops.rend(); ++op) {
    state_->undo_locked(*op, lines, first_error);
  }

  state_->files.clear();
  state_->ops.clear();
  state_->kept_bytes = 0;
  state_->report.clear();
  for (const std::string& line : lines) state_->report += line + "\n";
  return first_error.with_context("drop_unsynced");
}

std::string PowerLossFileSystem::last_drop_report() const {
  std::lock_guard lock(state_->mu);
  return state_->report;
}

void PowerLossFileSystem::reset() {
  std::lock_guard lock(state_->mu);
  state_->power_on = true;
  state_->syncs = 0;
  state_->power_off_at_sync.reset();
  state_->files.clear();
  state_->ops.clear();
  state_->kept_bytes = 0;
  state_->report.clear();
}

std::unique_ptr<rocksdb::Env> make_env(std::shared_ptr<rocksdb::FileSystem> fs) {
  return rocksdb::NewCompositeEnv(fs);
}

}  // namespace aura::testing
