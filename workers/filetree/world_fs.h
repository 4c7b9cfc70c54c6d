// Confined access to one filetree world's files. Every path inside a world is resolved by
// openat2() relative to an O_PATH descriptor of the world root with RESOLVE_IN_ROOT |
// RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV; FIFOs, sockets and devices are
// refused before any read; every read is bounded. Rules: docs/WORLDS.md, "Confinement".
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::workers::filetree {

inline constexpr uint64_t kMaxFileBytes = 1 << 20;   // the largest file read or written whole
inline constexpr uint64_t kMaxHashBytes = 64 << 20;  // the largest file a fingerprint hashes
inline constexpr size_t kMaxDirEntries = 4096;       // entries of one folder
inline constexpr size_t kMaxTreeEntries = 65536;     // entries of a world or of a package layer
inline constexpr size_t kMaxTreeDepth = 32;          // folder nesting of a world or a layer

enum class EntryType { kFile, kDir, kSymlink, kFifo, kSocket, kCharDevice, kBlockDevice };
// "file" "dir" "symlink" "fifo" "socket" "chardev" "blockdev"
std::string_view entry_type_name(EntryType type);
EntryType entry_type_of(mode_t st_mode);

struct Entry {
  std::string name;  // one component (list_dir) or a world path (stat)
  EntryType type = EntryType::kFile;
  uint32_t mode = 0;   // permission bits, st_mode & 07777
  uint64_t bytes = 0;  // st_size
};

struct FileData {
  std::string bytes;
  bool truncated = false;  // the file holds more than the limit; `bytes` is its first part
  uint32_t mode = 0;
};

// Errors: kNotFound when the path (or a folder on it) does not exist; kInvalidArgument when
// the driver refuses it (a symlink on the path, a special file, a folder where a file is
// needed, a file over a bound, a path that is not a normalised world path); kIo when the OS
// fails; kUnavailable when the kernel has no openat2(). Messages start with the world path.
//
// Not thread-safe: one caller at a time per world.
class WorldFs {
 public:
  // Opens the world root `root` (a host folder the driver made).
  static Result<std::unique_ptr<WorldFs>> open(const std::filesystem::path& root);
  ~WorldFs();
  WorldFs(const WorldFs&) = delete;
  WorldFs& operator=(const WorldFs&) = delete;

  // The entry at `path`, or nullopt when it does not exist. A symlink on the way (the final
  // component included) is refused, never followed.
  Result<std::optional<Entry>> stat(std::string_view path) const;
  // Reads at most `limit` (capped at kMaxFileBytes) bytes of the regular file `path`; more
  // sets `truncated`.
  Result<FileData> read_file(std::string_view path, uint64_t limit) const;
  // Whether `path` is a regular file (missing, a folder or refused: false; I/O errors: error).
  Result<bool> is_regular_file(std::string_view path) const;
  // The entries of the folder `path` sorted by name (at most kMaxDirEntries).
  Result<std::vector<Entry>> list_dir(std::string_view path) const;

  // Replaces (or creates) the regular file `path` atomically: a temporary file in the same
  // folder, then renameat(). Its mode is `mode`, or the replaced file's mode, or 0644 for a
  // new file. The parent folder must exist; a non-regular file at `path` is refused.
  Status write_file(std::string_view path, std::string_view bytes,
                    std::optional<uint32_t> mode = std::nullopt);
  // Creates the folder `path` with `mode` unless a folder is there already.
  Status make_dir(std::string_view path, uint32_t mode);
  // Removes the regular file `path`; absent is fine.
  Status remove_file(std::string_view path);
  // Sets the permission bits (at most 0777) of the regular file or folder `path`.
  Status chmod(std::string_view path, uint32_t mode);

  // SHA-256 over every entry of the world (docs/WORLDS.md, "Fingerprint"); 64 lowercase hex.
  Result<std::string> fingerprint() const;

 private:
  explicit WorldFs(int root_fd) : root_fd_(root_fd) {}
  int root_fd_;  // O_PATH | O_DIRECTORY of the world root
};

// Whether openat2() with the resolve flags above works on this kernel (measured once).
bool openat2_available();

// Host-side helpers for folders the driver owns (never inside a world's tree).

// Copies the folder `layer` (a safe relative package path, resolved beneath `package_dir`
// without following symlinks) into the world root. Folders and regular files only, names safe
// package path components, at most kMaxTreeEntries entries, each file at most kMaxFileBytes.
// Modes are normalised: folders 0755, files 0755 when the source has an execute bit, else
// 0644. Existing folders merge; a file replaces a file of an earlier layer; a file over a
// folder or a folder over a file is refused.
Status copy_layer(const std::filesystem::path& package_dir, std::string_view layer, WorldFs& world);

// Removes `dir` and everything under it without following symlinks (each folder is opened
// with O_NOFOLLOW and emptied with unlinkat). A missing `dir` is fine.
Status remove_tree(const std::filesystem::path& dir);

}  // namespace aura::workers::filetree
