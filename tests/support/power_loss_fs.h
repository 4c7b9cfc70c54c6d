// PowerLossFileSystem: a rocksdb::FileSystem for crash tests that can put the disk into the state
// a power cut would leave. Invariant: for every file written through it, it knows the length the
// last successful Sync/Fsync made durable, and it keeps, in order, every create/rename/delete/link
// that the directories involved have not fsynced since.
#pragma once

#include <rocksdb/env.h>
#include <rocksdb/file_system.h>

#include <cstdint>
#include <memory>
#include <string>

#include "engine/common/status.h"

namespace aura::testing {

// Writes go through to the base file system at once (so reads, and the page cache, behave as on a
// real machine); what is remembered is how much of it a power cut would keep.
//
// A power cut modelled by power_off() + drop_unsynced() leaves:
//   - every tracked file truncated to its length at its last successful Sync/Fsync (RangeSync and
//     Close make nothing durable);
//   - every namespace change not followed by an fsync of each directory it touched undone, newest
//     first: created files removed, renames reversed (restoring an overwritten target), deleted
//     files restored with their durable bytes, hard links removed.
// Files that existed before this file system first touched them count as fully durable.
//
// Thread safety: every method may be called from any thread (RocksDB syncs and deletes from
// background threads). Files handed out stay valid after this object is destroyed.
class PowerLossFileSystem : public rocksdb::FileSystemWrapper {
 public:
  static const char* kClassName() { return "PowerLossFileSystem"; }

  explicit PowerLossFileSystem(
      std::shared_ptr<rocksdb::FileSystem> base = rocksdb::FileSystem::Default());
  ~PowerLossFileSystem() override;

  const char* Name() const override { return kClassName(); }

  // --- rocksdb::FileSystem: calls that change the disk, all refused once power is off.
  rocksdb::IOStatus NewWritableFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSWritableFile>* result,
                                    rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus ReopenWritableFile(const std::string& fname,
                                       const rocksdb::FileOptions& options,
                                       std::unique_ptr<rocksdb::FSWritableFile>* result,
                                       rocksdb::IODebugContext* dbg) override;
  // WAL recycling: modelled as a rename of `old_fname` to `fname` followed by an overwrite from
  // offset 0 (see drop_unsynced() for what a power cut keeps of it).
  rocksdb::IOStatus ReuseWritableFile(const std::string& fname, const std::string& old_fname,
                                      const rocksdb::FileOptions& options,
                                      std::unique_ptr<rocksdb::FSWritableFile>* result,
                                      rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus NewRandomRWFile(const std::string& fname, const rocksdb::FileOptions& options,
                                    std::unique_ptr<rocksdb::FSRandomRWFile>* result,
                                    rocksdb::IODebugContext* dbg) override;
  // Directories handed out count their Fsync as a sync and make pending namespace changes durable.
  rocksdb::IOStatus NewDirectory(const std::string& name, const rocksdb::IOOptions& options,
                                 std::unique_ptr<rocksdb::FSDirectory>* result,
                                 rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus RenameFile(const std::string& src, const std::string& target,
                               const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus LinkFile(const std::string& src, const std::string& target,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteFile(const std::string& fname, const rocksdb::IOOptions& options,
                               rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus Truncate(const std::string& fname, size_t size,
                             const rocksdb::IOOptions& options,
                             rocksdb::IODebugContext* dbg) override;
  // Directory creation and removal are refused after power off but not modelled otherwise.
  rocksdb::IOStatus CreateDir(const std::string& dirname, const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus CreateDirIfMissing(const std::string& dirname,
                                       const rocksdb::IOOptions& options,
                                       rocksdb::IODebugContext* dbg) override;
  rocksdb::IOStatus DeleteDir(const std::string& dirname, const rocksdb::IOOptions& options,
                              rocksdb::IODebugContext* dbg) override;
  // NewLogger is not overridden: the info LOG goes straight to the base file system, is not
  // tracked and keeps being written after power off (RocksDB's logger asserts on write errors).

  // --- Power control.

  // Every later write, append, truncate, sync, close, create, rename, link and delete (through
  // this object or any file or directory it handed out) returns IOError("power off"). Reads,
  // listings, locks and unlocks keep working so a DB can still be closed.
  void power_off();
  // Turns power off when the n-th sync from now is attempted (a file's Sync/Fsync/RangeSync or a
  // directory's Fsync); that sync fails and is not durable. n == 0 turns power off at once.
  void power_off_after_syncs(uint64_t n);
  bool is_power_on() const;
  // Sync attempts made while power was on (including the one that cut it), since construction
  // or the last reset().
  uint64_t sync_count() const;

  // Rewrites the disk to what the power cut left (see the class comment), then forgets all
  // tracking, so the disk now counts as fully durable. Power stays off.
  // REQUIRES: power is off, and every DB or file using this object is closed or abandoned with no
  // thread still inside it. Fails with kFailedPrecondition while power is on; with kIo, naming the
  // path, if the base file system refuses a step (the remaining steps are still attempted).
  aura::Status drop_unsynced();
  // One line per action the last drop_unsynced() took or could not take, for test diagnostics.
  std::string last_drop_report() const;

  // Forgets all tracking, zeroes sync_count() and turns power back on, for reuse.
  // REQUIRES: no file handed out earlier is still being written (its bytes would go untracked).
  void reset();

  // The shared bookkeeping the handed-out files and directories also hold.
  struct State;

 private:
  std::shared_ptr<State> state_;
};

// An Env that uses `fs` for all file operations and the default Env for everything else.
// `fs` is kept alive by the Env.
std::unique_ptr<rocksdb::Env> make_env(std::shared_ptr<rocksdb::FileSystem> fs);

}  // namespace aura::testing
