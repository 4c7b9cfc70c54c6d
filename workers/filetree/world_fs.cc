#include "workers/filetree/world_fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "engine/common/file_io.h"
#include "engine/crypto/ed25519.h"
#include "engine/crypto/sha256.h"
#include "engine/package/package.h"
#include "engine/scenario/call.h"

namespace aura::workers::filetree {
namespace fs = std::filesystem;
using file_io::errno_text;
using file_io::Fd;

namespace {

// Paths inside a world: clamped to the root, no symlink of any kind, no mount crossing. The
// worlds this driver builds have no symlinks (layers refuse them and no call makes one), so a
// symlink is never needed to resolve a path and refusing every one removes a whole class of
// escapes and of confusions (a probe reading a file other than the one it names).
constexpr uint64_t kInRoot =
    RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV;
// One name relative to a folder already opened: beneath it, same refusals.
constexpr uint64_t kBeneath =
    RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV;
constexpr size_t kMaxPathBytes = 4096;
constexpr size_t kMaxRemoveDepth = 256;

int openat2_raw(int dirfd, const char* path, uint64_t flags, uint64_t resolve, mode_t mode = 0) {
  struct open_how how {};
  how.flags = flags;
  how.mode = (flags & O_CREAT) != 0 ? mode : 0;
  how.resolve = resolve;
  for (int attempt = 0;; ++attempt) {
    const long rc = ::syscall(SYS_openat2, dirfd, path, &how, sizeof how);
    if (rc >= 0) return static_cast<int>(rc);
    // RESOLVE_IN_ROOT returns EAGAIN when a rename raced the walk; retrying is the documented
    // answer.
    if (errno == EINTR || (errno == EAGAIN && attempt < 16)) continue;
    return -1;
  }
}

Status open_error(std::string_view path, int err) {
  const std::string p(path);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Status::not_found(p + ": not found");
    case ELOOP:
      return Status::invalid(p +
                             ": a symlink on the path is refused (the filetree driver "
                             "follows no symlink)");
    case EXDEV:
      return Status::invalid(p + ": crosses a mount point");
    case ENAMETOOLONG:
      return Status::invalid(p + ": name too long");
    case ENOSYS:
      return Status::unavailable("openat2() is not available on this kernel");
    default:
      return Status::io(p + ": open: " + errno_text(err));
  }
}

Status check_world_path(std::string_view path) {
  if (path.size() > kMaxPathBytes || !scenario::is_normalised_absolute_path(path)) {
    return Status::invalid("\"" + std::string(path.substr(0, 80)) +
                           "\": not a normalised absolute world path");
  }
  return Status::ok();
}

// "/a/b/c" -> {"/a/b", "c"}; "/c" -> {"/", "c"}. REQUIRES: a checked path other than "/".
std::pair<std::string, std::string> split(std::string_view path) {
  const size_t slash = path.rfind('/');
  return {slash == 0 ? std::string("/") : std::string(path.substr(0, slash)),
          std::string(path.substr(slash + 1))};
}

std::string child_path(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out != "/") out += '/';
  out += name;
  return out;
}

std::string mode_text(uint32_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

enum class Want { kFile, kDir, kFileOrDir };

// Opens `path` in the world for reading (a folder: O_DIRECTORY). First an O_PATH descriptor is
// opened and fstat()ed, so a FIFO, socket or device is refused without ever being opened for
// I/O; then the real open (O_NONBLOCK, so even a FIFO swapped in meanwhile cannot block) must
// land on the same inode.
Result<int> open_checked(int root_fd, std::string_view path, Want want, struct stat* st) {
  AURA_RETURN_IF_ERROR(check_world_path(path));
  const std::string p(path);
  const int raw = openat2_raw(root_fd, p.c_str(), O_PATH | O_CLOEXEC, kInRoot);
  if (raw < 0) return open_error(path, errno);
  Fd probe(raw);
  struct stat pst;
  if (::fstat(probe.get(), &pst) != 0) return Status::io(p + ": fstat: " + errno_text(errno));
  const bool is_dir = S_ISDIR(pst.st_mode);
  const bool is_reg = S_ISREG(pst.st_mode);
  const std::string_view type = entry_type_name(entry_type_of(pst.st_mode));
  if (want == Want::kFile && !is_reg) {
    return Status::invalid(p + ": a " + std::string(type) + ", not a regular file; refused");
  }
  if (want == Want::kDir && !is_dir) {
    return Status::invalid(p + ": a " + std::string(type) + ", not a folder; refused");
  }
  if (want == Want::kFileOrDir && !is_dir && !is_reg) {
    return Status::invalid(p + ": a " + std::string(type) +
                           ", neither a regular file nor a folder; refused");
  }
  const uint64_t flags =
      is_dir ? O_RDONLY | O_DIRECTORY | O_CLOEXEC : O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
  const int fd = openat2_raw(root_fd, p.c_str(), flags, kInRoot);
  if (fd < 0) return open_error(path, errno);
  Fd owned(fd);
  if (::fstat(fd, st) != 0) return Status::io(p + ": fstat: " + errno_text(errno));
  if (!same_inode(*st, pst)) return Status::invalid(p + ": changed while it was opened");
  owned.release();
  return fd;
}

// Reads `fd` to EOF or to `limit` bytes (one more byte tells truncation).
Status read_bounded(int fd, uint64_t limit, std::string_view what, FileData& out) {
  out.bytes.clear();
  out.truncated = false;
  std::array<char, 16384> buf;
  while (true) {
    const uint64_t room = limit + 1 - out.bytes.size();
    const ssize_t n = ::read(fd, buf.data(), std::min<uint64_t>(buf.size(), room));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io(std::string(what) + ": read: " + errno_text(errno));
    if (n == 0) return Status::ok();
    out.bytes.append(buf.data(), static_cast<size_t>(n));
    if (out.bytes.size() > limit) {
      out.bytes.resize(limit);
      out.truncated = true;
      return Status::ok();
    }
  }
}

Status write_all(int fd, std::string_view bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::io("write: " + errno_text(errno));
    done += static_cast<size_t>(n);
  }
  return Status::ok();
}

// The entries of the open folder `dir_fd` (not followed: lstat semantics), sorted by name.
Result<std::vector<Entry>> read_entries(int dir_fd, size_t max_entries, std::string_view what) {
  const int dup_fd = ::fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return Status::io(std::string(what) + ": dup: " + errno_text(errno));
  DIR* dir = ::fdopendir(dup_fd);
  if (dir == nullptr) {
    const int err = errno;
    ::close(dup_fd);
    return Status::io(std::string(what) + ": fdopendir: " + errno_text(err));
  }
  ::rewinddir(dir);
  std::vector<Entry> out;
  Status status;
  while (true) {
    errno = 0;
    const struct dirent* d = ::readdir(dir);
    if (d == nullptr) {
      if (errno != 0) status = Status::io(std::string(what) + ": readdir: " + errno_text(errno));
      break;
    }
    const std::string_view name = d->d_name;
    if (name == "." || name == "..") continue;
    if (out.size() >= max_entries) {
      status = Status::invalid(std::string(what) + ": more than " + std::to_string(max_entries) +
                               " entries");
      break;
    }
    struct stat st;
    if (::fstatat(dir_fd, d->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // removed meanwhile
      status = Status::io(child_path(what, name) + ": fstatat: " + errno_text(errno));
      break;
    }
    out.push_back({std::string(name), entry_type_of(st.st_mode),
                   static_cast<uint32_t>(st.st_mode & 07777), static_cast<uint64_t>(st.st_size)});
  }
  ::closedir(dir);
  if (!status.is_ok()) return status;
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.name < b.name; });
  return out;
}

std::string random_suffix() {
  std::array<uint8_t, 8> rnd;
  random_bytes(rnd);
  return to_hex(rnd);
}

char type_char(EntryType type) {
  switch (type) {
    case EntryType::kFile:
      return 'f';
    case EntryType::kDir:
      return 'd';
    case EntryType::kSymlink:
      return 'l';
    case EntryType::kFifo:
      return 'p';
    case EntryType::kSocket:
      return 's';
    case EntryType::kCharDevice:
      return 'c';
    case EntryType::kBlockDevice:
      return 'b';
  }
  return '?';
}

// Hashes the regular file `name` in `dir_fd` (which fstatat() reported as `expect`).
Result<std::string> hash_file(int dir_fd, const std::string& name, const struct stat& expect,
                              std::string_view path) {
  const int raw =
      openat2_raw(dir_fd, name.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, kBeneath);
  if (raw < 0) return open_error(path, errno);
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) {
    return Status::io(std::string(path) + ": fstat: " + errno_text(errno));
  }
  if (!S_ISREG(st.st_mode) || !same_inode(st, expect)) {
    return Status::invalid(std::string(path) + ": changed while the world was fingerprinted");
  }
  Sha256 h;
  std::array<char, 65536> buf;
  uint64_t total = 0;
  while (true) {
    const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io(std::string(path) + ": read: " + errno_text(errno));
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > kMaxHashBytes) {
      return Status::invalid(std::string(path) + ": larger than " + std::to_string(kMaxHashBytes) +
                             " bytes; refused");
    }
    h.update(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
  return to_hex(h.finish());
}

struct Record {
  std::string path;
  std::string line;
};

std::string record_line(char type, uint32_t mode, std::string_view digest, std::string_view path) {
  std::string line;
  line += type;
  line += ' ';
  line += mode_text(mode);
  line += ' ';
  line += digest;
  line += ' ';
  line += std::to_string(path.size());
  line += ' ';
  line += path;
  line += '\n';
  return line;
}

Status walk(int dir_fd, const std::string& dir_path, size_t depth, std::vector<Record>& out) {
  if (depth > kMaxTreeDepth) {
    return Status::invalid(dir_path + ": folders nested deeper than " +
                           std::to_string(kMaxTreeDepth));
  }
  auto entries = read_entries(dir_fd, kMaxDirEntries, dir_path);
  if (!entries.ok()) return entries.status();
  for (const Entry& e : *entries) {
    if (out.size() >= kMaxTreeEntries) {
      return Status::invalid("the world has more than " + std::to_string(kMaxTreeEntries) +
                             " entries");
    }
    const std::string path = child_path(dir_path, e.name);
    struct stat st;
    if (::fstatat(dir_fd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Status::io(path + ": fstatat: " + errno_text(errno));
    }
    std::string digest = "-";
    if (S_ISREG(st.st_mode)) {
      auto d = hash_file(dir_fd, e.name, st, path);
      if (!d.ok()) return d.status();
      digest = *d;
    } else if (S_ISLNK(st.st_mode)) {
      std::array<char, 4096> target;
      const ssize_t n = ::readlinkat(dir_fd, e.name.c_str(), target.data(), target.size());
      if (n < 0) return Status::io(path + ": readlinkat: " + errno_text(errno));
      digest = to_hex(sha256(std::string_view(target.data(), static_cast<size_t>(n))));
    }
    out.push_back({path, record_line(type_char(entry_type_of(st.st_mode)),
                                     static_cast<uint32_t>(st.st_mode & 07777), digest, path)});
    if (S_ISDIR(st.st_mode)) {
      const int raw =
          openat2_raw(dir_fd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, kBeneath);
      if (raw < 0) return open_error(path, errno);
      Fd child(raw);
      struct stat cst;
      if (::fstat(child.get(), &cst) != 0 || !same_inode(cst, st)) {
        return Status::invalid(path + ": changed while the world was fingerprinted");
      }
      AURA_RETURN_IF_ERROR(walk(child.get(), path, depth + 1, out));
    }
  }
  return Status::ok();
}

Status copy_dir(int src_fd, const std::string& rel, const std::string& world_dir, size_t depth,
                size_t& count, std::string_view layer_name, WorldFs& world) {
  const std::string where = "package layer " + std::string(layer_name);
  if (depth > kMaxTreeDepth) {
    return Status::invalid(where + ": folders nested deeper than " + std::to_string(kMaxTreeDepth));
  }
  auto entries = read_entries(src_fd, kMaxDirEntries, where + "/" + rel);
  if (!entries.ok()) return entries.status();
  for (const Entry& e : *entries) {
    const std::string src_rel = rel.empty() ? e.name : rel + "/" + e.name;
    if (!is_safe_package_path(e.name)) {
      return Status::invalid(where + ": " + src_rel + ": unsafe name");
    }
    if (++count > kMaxTreeEntries) {
      return Status::invalid(where + ": more than " + std::to_string(kMaxTreeEntries) + " entries");
    }
    const std::string dst = child_path(world_dir, e.name);
    if (e.type == EntryType::kDir) {
      AURA_RETURN_IF_ERROR(world.make_dir(dst, 0755).with_context(where));
      const int raw =
          openat2_raw(src_fd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, kBeneath);
      if (raw < 0) return open_error(where + ": " + src_rel, errno);
      Fd child(raw);
      AURA_RETURN_IF_ERROR(
          copy_dir(child.get(), src_rel, dst, depth + 1, count, layer_name, world));
    } else if (e.type == EntryType::kFile) {
      const int raw = openat2_raw(src_fd, e.name.c_str(),
                                  O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, kBeneath);
      if (raw < 0) return open_error(where + ": " + src_rel, errno);
      Fd fd(raw);
      struct stat st;
      if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        return Status::invalid(where + ": " + src_rel + ": not a regular file");
      }
      FileData data;
      AURA_RETURN_IF_ERROR(read_bounded(fd.get(), kMaxFileBytes, where + ": " + src_rel, data));
      if (data.truncated) {
        return Status::invalid(where + ": " + src_rel + ": larger than " +
                               std::to_string(kMaxFileBytes) + " bytes");
      }
      const uint32_t mode = (st.st_mode & 0111) != 0 ? 0755 : 0644;
      AURA_RETURN_IF_ERROR(world.write_file(dst, data.bytes, mode).with_context(where));
    } else {
      return Status::invalid(where + ": " + src_rel + ": a " +
                             std::string(entry_type_name(e.type)) +
                             "; layers hold folders and regular files only");
    }
  }
  return Status::ok();
}

Status empty_dir(int dir_fd, const std::string& what, size_t depth) {
  if (depth > kMaxRemoveDepth) return Status::invalid(what + ": nested too deep to remove");
  auto entries = read_entries(dir_fd, SIZE_MAX, what);
  if (!entries.ok()) return entries.status();
  for (const Entry& e : *entries) {
    const std::string path = what + "/" + e.name;
    if (e.type == EntryType::kDir) {
      const int raw =
          ::openat(dir_fd, e.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (raw < 0) return Status::io(path + ": open: " + errno_text(errno));
      Fd child(raw);
      AURA_RETURN_IF_ERROR(empty_dir(child.get(), path, depth + 1));
      if (::unlinkat(dir_fd, e.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT) {
        return Status::io(path + ": rmdir: " + errno_text(errno));
      }
    } else if (::unlinkat(dir_fd, e.name.c_str(), 0) != 0 && errno != ENOENT) {
      return Status::io(path + ": unlink: " + errno_text(errno));
    }
  }
  return Status::ok();
}

}  // namespace

std::string_view entry_type_name(EntryType type) {
  switch (type) {
    case EntryType::kFile:
      return "file";
    case EntryType::kDir:
      return "dir";
    case EntryType::kSymlink:
      return "symlink";
    case EntryType::kFifo:
      return "fifo";
    case EntryType::kSocket:
      return "socket";
    case EntryType::kCharDevice:
      return "chardev";
    case EntryType::kBlockDevice:
      return "blockdev";
  }
  return "unknown";
}

EntryType entry_type_of(mode_t st_mode) {
  if (S_ISREG(st_mode)) return EntryType::kFile;
  if (S_ISDIR(st_mode)) return EntryType::kDir;
  if (S_ISLNK(st_mode)) return EntryType::kSymlink;
  if (S_ISFIFO(st_mode)) return EntryType::kFifo;
  if (S_ISSOCK(st_mode)) return EntryType::kSocket;
  if (S_ISBLK(st_mode)) return EntryType::kBlockDevice;
  return EntryType::kCharDevice;
}

bool openat2_available() {
  static const bool available = [] {
    const int fd = openat2_raw(AT_FDCWD, "/", O_PATH | O_CLOEXEC, kInRoot);
    if (fd < 0) return false;
    ::close(fd);
    return true;
  }();
  return available;
}

Result<std::unique_ptr<WorldFs>> WorldFs::open(const fs::path& root) {
  if (!openat2_available()) return Status::unavailable("openat2() is not available on this kernel");
  const int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return Status::io("world root " + root.string() + ": open: " + errno_text(errno));
  return std::unique_ptr<WorldFs>(new WorldFs(fd));
}

WorldFs::~WorldFs() { ::close(root_fd_); }

Result<std::optional<Entry>> WorldFs::stat(std::string_view path) const {
  AURA_RETURN_IF_ERROR(check_world_path(path));
  const std::string p(path);
  const int raw = openat2_raw(root_fd_, p.c_str(), O_PATH | O_CLOEXEC, kInRoot);
  if (raw < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::optional<Entry>();
    return open_error(path, errno);
  }
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::io(p + ": fstat: " + errno_text(errno));
  return std::optional<Entry>(Entry{p, entry_type_of(st.st_mode),
                                    static_cast<uint32_t>(st.st_mode & 07777),
                                    static_cast<uint64_t>(st.st_size)});
}

Result<FileData> WorldFs::read_file(std::string_view path, uint64_t limit) const {
  struct stat st;
  auto raw = open_checked(root_fd_, path, Want::kFile, &st);
  if (!raw.ok()) return raw.status();
  Fd fd(*raw);
  FileData out;
  limit = std::min(limit, kMaxFileBytes);
  out.mode = static_cast<uint32_t>(st.st_mode & 07777);
  AURA_RETURN_IF_ERROR(read_bounded(fd.get(), limit, path, out));
  return out;
}

Result<bool> WorldFs::is_regular_file(std::string_view path) const {
  auto e = stat(path);
  if (!e.ok()) {
    if (e.status().code() == ErrorCode::kIo || e.status().code() == ErrorCode::kUnavailable) {
      return e.status();
    }
    return false;
  }
  return e->has_value() && (*e)->type == EntryType::kFile;
}

Result<std::vector<Entry>> WorldFs::list_dir(std::string_view path) const {
  struct stat st;
  auto raw = open_checked(root_fd_, path, Want::kDir, &st);
  if (!raw.ok()) return raw.status();
  Fd fd(*raw);
  return read_entries(fd.get(), kMaxDirEntries, path);
}

Status WorldFs::write_file(std::string_view path, std::string_view bytes,
                           std::optional<uint32_t> mode) {
  AURA_RETURN_IF_ERROR(check_world_path(path));
  const std::string p(path);
  if (p == "/") return Status::invalid("/: the world root is a folder; refused");
  if (bytes.size() > kMaxFileBytes) {
    return Status::invalid(p + ": " + std::to_string(bytes.size()) + " bytes, more than " +
                           std::to_string(kMaxFileBytes));
  }
  if (mode && (*mode & ~0777u) != 0) {
    return Status::invalid(p + ": mode " + mode_text(*mode) + " has bits outside 0777");
  }
  const auto [parent, name] = split(p);
  struct stat pst;
  auto dir_raw = open_checked(root_fd_, parent, Want::kDir, &pst);
  if (!dir_raw.ok()) return dir_raw.status();
  Fd dir(*dir_raw);
  uint32_t final_mode = mode.value_or(0644);
  struct stat st;
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
    if (!S_ISREG(st.st_mode)) {
      return Status::invalid(p + ": a " + std::string(entry_type_name(entry_type_of(st.st_mode))) +
                             " is there; only a regular file is replaced");
    }
    if (!mode) final_mode = st.st_mode & 0777;
  } else if (errno != ENOENT) {
    return Status::io(p + ": fstatat: " + errno_text(errno));
  }
  const std::string tmp = ".aura-write-" + random_suffix();
  const int raw = openat2_raw(dir.get(), tmp.c_str(),
                              O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, kBeneath, 0600);
  if (raw < 0) return open_error(child_path(parent, tmp), errno);
  Fd fd(raw);
  Status st_write = write_all(fd.get(), bytes);
  if (st_write.is_ok() && ::fchmod(fd.get(), final_mode) != 0) {
    st_write = Status::io("fchmod: " + errno_text(errno));
  }
  if (st_write.is_ok() && fd.close_now() != 0) st_write = Status::io("close failed");
  if (st_write.is_ok() && ::renameat(dir.get(), tmp.c_str(), dir.get(), name.c_str()) != 0) {
    st_write = Status::io("rename: " + errno_text(errno));
  }
  if (!st_write.is_ok()) {
    ::unlinkat(dir.get(), tmp.c_str(), 0);
    return st_write.with_context(p);
  }
  return Status::ok();
}

Status WorldFs::make_dir(std::string_view path, uint32_t mode) {
  AURA_RETURN_IF_ERROR(check_world_path(path));
  const std::string p(path);
  if (p == "/") return Status::ok();
  if ((mode & ~0777u) != 0) return Status::invalid(p + ": mode has bits outside 0777");
  const auto [parent, name] = split(p);
  struct stat pst;
  auto dir_raw = open_checked(root_fd_, parent, Want::kDir, &pst);
  if (!dir_raw.ok()) return dir_raw.status();
  Fd dir(*dir_raw);
  if (::mkdirat(dir.get(), name.c_str(), 0700) != 0) {
    if (errno != EEXIST) return Status::io(p + ": mkdir: " + errno_text(errno));
    struct stat st;
    if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Status::io(p + ": fstatat: " + errno_text(errno));
    }
    if (!S_ISDIR(st.st_mode)) {
      return Status::invalid(p + ": a " + std::string(entry_type_name(entry_type_of(st.st_mode))) +
                             " is there, not a folder");
    }
    return Status::ok();
  }
  const int raw =
      openat2_raw(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, kBeneath);
  if (raw < 0) return open_error(p, errno);
  Fd made(raw);
  if (::fchmod(made.get(), mode) != 0) return Status::io(p + ": fchmod: " + errno_text(errno));
  return Status::ok();
}

Status WorldFs::remove_file(std::string_view path) {
  AURA_RETURN_IF_ERROR(check_world_path(path));
  const std::string p(path);
  if (p == "/") return Status::invalid("/: the world root is a folder; refused");
  const auto [parent, name] = split(p);
  struct stat pst;
  auto dir_raw = open_checked(root_fd_, parent, Want::kDir, &pst);
  if (!dir_raw.ok()) {
    return dir_raw.status().code() == ErrorCode::kNotFound ? Status::ok() : dir_raw.status();
  }
  Fd dir(*dir_raw);
  struct stat st;
  if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::ok();
    return Status::io(p + ": fstatat: " + errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return Status::invalid(p + ": a " + std::string(entry_type_name(entry_type_of(st.st_mode))) +
                           ", not a regular file; not removed");
  }
  if (::unlinkat(dir.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
    return Status::io(p + ": unlink: " + errno_text(errno));
  }
  return Status::ok();
}

Status WorldFs::chmod(std::string_view path, uint32_t mode) {
  if ((mode & ~0777u) != 0) {
    return Status::invalid(std::string(path) + ": mode " + mode_text(mode) +
                           " has bits outside 0777 (no setuid, setgid or sticky bits)");
  }
  struct stat st;
  auto raw = open_checked(root_fd_, path, Want::kFileOrDir, &st);
  if (!raw.ok()) return raw.status();
  Fd fd(*raw);
  if (::fchmod(fd.get(), mode) != 0) {
    return Status::io(std::string(path) + ": fchmod: " + errno_text(errno));
  }
  return Status::ok();
}

Result<std::string> WorldFs::fingerprint() const {
  struct stat st;
  auto raw = open_checked(root_fd_, "/", Want::kDir, &st);
  if (!raw.ok()) return raw.status();
  Fd root(*raw);
  std::vector<Record> records;
  records.push_back({"/", record_line('d', st.st_mode & 07777, "-", "/")});
  AURA_RETURN_IF_ERROR(walk(root.get(), "/", 1, records));
  std::sort(records.begin(), records.end(),
            [](const Record& a, const Record& b) { return a.path < b.path; });
  Sha256 h;
  h.update(std::string_view("aura-filetree-fingerprint 1\n"));
  for (const Record& r : records) h.update(r.line);
  return to_hex(h.finish());
}

Status copy_layer(const fs::path& package_dir, std::string_view layer, WorldFs& world) {
  const std::string where = "package layer " + std::string(layer);
  if (!is_safe_package_path(layer)) return Status::invalid(where + ": not a safe relative path");
  const int pkg_raw = ::open(package_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (pkg_raw < 0) {
    return Status::io("package " + package_dir.string() + ": open: " + errno_text(errno));
  }
  Fd pkg(pkg_raw);
  const std::string l(layer);
  const int raw = openat2_raw(pkg.get(), l.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, kBeneath);
  if (raw < 0) {
    if (errno == ENOENT) return Status::not_found(where + ": no such folder in the package");
    if (errno == ENOTDIR) return Status::invalid(where + ": not a folder");
    return open_error(where, errno);
  }
  Fd src(raw);
  size_t count = 0;
  return copy_dir(src.get(), "", "/", 1, count, layer, world);
}

Status remove_tree(const fs::path& dir) {
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::ok();
    return Status::io(dir.string() + ": lstat: " + errno_text(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    if (::unlink(dir.c_str()) != 0 && errno != ENOENT) {
      return Status::io(dir.string() + ": unlink: " + errno_text(errno));
    }
    return Status::ok();
  }
  const int raw = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (raw < 0) return Status::io(dir.string() + ": open: " + errno_text(errno));
  {
    Fd fd(raw);
    AURA_RETURN_IF_ERROR(empty_dir(fd.get(), dir.string(), 0));
  }
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) {
    return Status::io(dir.string() + ": rmdir: " + errno_text(errno));
  }
  return Status::ok();
}

}  // namespace aura::workers::filetree
