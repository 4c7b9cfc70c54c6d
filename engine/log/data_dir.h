// The data folder: DIR/log (RocksDB event log), DIR/blobs (blob store), DIR/aura.lock.
// One process holds it for writing (an flock on aura.lock naming its pid); others
// open it read-only or are told which pid holds it.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <optional>

#include "engine/common/status.h"

namespace aura {

class DataDir {
 public:
  // Creates the folder (0750) if needed and takes the writer lock. kBusy with
  // "in use by pid N; use --server URL" when another process holds it.
  static Result<DataDir> open_writer(const std::filesystem::path& dir);
  // For readers: the folder must exist; no lock is taken.
  static Result<DataDir> open_reader(const std::filesystem::path& dir);
  // The pid holding the writer lock, if any.
  static std::optional<pid_t> holder(const std::filesystem::path& dir);

  DataDir(DataDir&& other) noexcept;
  DataDir& operator=(DataDir&& other) noexcept;
  ~DataDir();

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path log_dir() const { return dir_ / "log"; }
  std::filesystem::path blob_dir() const { return dir_ / "blobs"; }
  bool is_writer() const { return lock_fd_ >= 0; }

 private:
  DataDir(std::filesystem::path dir, int lock_fd) : dir_(std::move(dir)), lock_fd_(lock_fd) {}
  std::filesystem::path dir_;
  int lock_fd_ = -1;
};

// True when `inner` is `outer` or lies inside it (after resolving both).
bool path_is_within(const std::filesystem::path& inner, const std::filesystem::path& outer);

}  // namespace aura
