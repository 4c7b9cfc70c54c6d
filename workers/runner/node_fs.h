// The file-system mechanisms the runner's ops share: bounded reads that refuse anything but a
// regular file, a path's parent folder held open so the final component is never followed
// through a symlink, and atomic replacement (temporary file in the same folder, fsync, rename,
// fsync of the folder) that sets mode and owner before the new bytes become visible.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "engine/common/file_io.h"
#include "engine/common/status.h"

namespace aura::runner {

// kInvalidArgument (exit 2) unless `path` is absolute, has no NUL and fits PATH_MAX.
Status check_path(std::string_view arg, std::string_view path);

// Up to `limit` bytes from `fd`'s current offset (fewer only at end of file).
Result<std::string> read_fd_bounded(int fd, size_t limit, std::string_view what);

// `path` (symlinks followed) if it is a regular file: at most `limit` bytes of it, and
// `*more` set when it holds more. Never opens a FIFO or a device: it is stat()ed first and
// opened O_NONBLOCK|O_NOCTTY, then fstat()ed again. World errors name `what`.
Result<std::string> read_regular(const std::string& path, size_t limit, bool* more,
                                 std::string_view what);

// A system table (/etc/passwd, /proc/net/tcp, ...): at most kMaxSystemFileBytes, else an error.
// kNotFound when it does not exist.
Result<std::string> read_system_file(const std::string& path);

// "file", "dir", "symlink", "fifo", "socket", "char", "block" or "unknown".
std::string_view type_name(mode_t mode);
// The permission bits as four octal digits ("0644", "4755").
std::string mode_text(mode_t mode);
// A name as one output word-safe token: control bytes and '\' escaped as \xNN.
std::string escape_name(std::string_view name);
// Octal text of one to four digits ("644", "0640", "2775"): kInvalidArgument naming `arg`.
Result<mode_t> parse_mode(std::string_view arg, std::string_view text);

// A path's parent folder (opened O_PATH, symlinks in the folders followed like any lookup)
// and its final component, which the *at() calls then use without following it.
struct ParentDir {
  std::string path;  // the whole path, for messages
  std::string name;  // the final component
  std::shared_ptr<file_io::Fd> dir;
  int fd() const { return dir->get(); }
};
// kInvalidArgument (naming `arg`) for a path without a final component ("/", "/a/", "/a/..");
// a world error when the folder cannot be opened.
Result<ParentDir> open_parent(std::string_view arg, std::string_view path);

// fstatat(AT_SYMLINK_NOFOLLOW) of the final component; `*exists` false on ENOENT.
Status stat_final(const ParentDir& p, struct stat* st, bool* exists);

inline constexpr uint32_t kKeepId = static_cast<uint32_t>(-1);  // chown's "leave it as it is"

// Writes `bytes` to a fresh temporary file in p's folder, sets `mode` and (where it differs
// from the new file's and is not kKeepId) the owner uid:gid, fsyncs it, renames it over the final
// component and fsyncs the folder. On failure the temporary file is removed and the final component
// is untouched.
Status replace_file(const ParentDir& p, std::string_view bytes, mode_t mode, uid_t uid, gid_t gid);

}  // namespace aura::runner
