// Small file helpers: bounded reads that refuse symlinks and special files, and durable
// atomic writes (temporary file, fsync, rename or link, fsync of the folder), the rules
// engine/keys/key_store.cc follows for lab.key.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"

namespace aura::file_io {

// Reads `path`, which must be a regular file (not a symlink, FIFO or device) of at most
// `limit` bytes. `name` names the file in errors. kNotFound when missing, kInvalidArgument
// for a symlink, special file or oversize file, kIo when the OS fails.
Result<std::string> read_regular_file(const std::filesystem::path& path, std::string_view name,
                                      size_t limit);

// The SHA-256 and size of a regular file, read with the same refusals as
// read_regular_file(); `limit` bounds the bytes read.
struct FileDigest {
  Digest sha256{};
  uint64_t bytes = 0;
};
Result<FileDigest> hash_regular_file(const std::filesystem::path& path, std::string_view name,
                                     uint64_t limit);

// Writes `bytes` to a new temporary file in `tmp_dir` with exactly `mode`, fsyncs it and
// renames it over `target` (replacing it), then fsyncs target's folder (and tmp_dir when
// it differs). A crash leaves the old file or the new one, never a partial file.
// REQUIRES: tmp_dir and target's folder are on one filesystem.
Status replace_file_durably(const std::filesystem::path& tmp_dir,
                            const std::filesystem::path& target, std::string_view bytes,
                            mode_t mode);

// Like replace_file_durably() but never replaces: link()s the temporary file to `target`,
// failing with kFailedPrecondition if `target` exists (so of two racing writers one wins).
Status create_file_durably(const std::filesystem::path& tmp_dir,
                           const std::filesystem::path& target, std::string_view bytes,
                           mode_t mode);

// Creates `dir` with `mode` (parents with default modes) unless it exists; refuses a
// non-directory.
Status ensure_dir(const std::filesystem::path& dir, mode_t mode);

Status fsync_dir(const std::filesystem::path& dir);

// Closes a file descriptor on scope exit.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void release() { fd_ = -1; }
  int close_now() {
    const int rc = ::close(fd_);
    fd_ = -1;
    return rc == 0 ? 0 : errno;
  }

 private:
  int fd_;
};

std::string errno_text(int err);

}  // namespace aura::file_io
