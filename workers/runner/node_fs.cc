#include "workers/runner/node_fs.h"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "workers/runner/op.h"

namespace aura::runner {

Status check_path(std::string_view arg, std::string_view path) {
  if (path.empty() || path.front() != '/') return bad_arg(arg, "must be an absolute path");
  if (path.find('\0') != std::string_view::npos) return bad_arg(arg, "contains a NUL byte");
  if (path.size() >= PATH_MAX) return bad_arg(arg, "longer than PATH_MAX");
  return Status::ok();
}

Result<std::string> read_fd_bounded(int fd, size_t limit, std::string_view what) {
  std::string out;
  size_t done = 0;
  while (done < limit) {
    if (done == out.size()) out.resize(std::min(limit, std::max<size_t>(out.size() * 2, 65536)));
    const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error("read " + std::string(what), errno);
    if (n == 0) break;
    done += size_t(n);
  }
  out.resize(done);
  return out;
}

Result<std::string> read_regular(const std::string& path, size_t limit, bool* more,
                                 std::string_view what) {
  const std::string w = std::string(what) + " " + escape_name(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found(w + " : " + file_io::errno_text(err));
    return errno_error(w, err);
  }
  if (!S_ISREG(st.st_mode)) {
    return world_error(w, "not a regular file (" + std::string(type_name(st.st_mode)) + ")");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno_error(w, errno);
  file_io::Fd guard(fd);
  if (::fstat(fd, &st) != 0) return errno_error(w, errno);
  if (!S_ISREG(st.st_mode)) {
    return world_error(w, "not a regular file (" + std::string(type_name(st.st_mode)) + ")");
  }
  std::string bytes;
  AURA_ASSIGN_OR_RETURN(bytes, read_fd_bounded(fd, limit + 1, w));
  *more = bytes.size() > limit;
  if (*more) bytes.resize(limit);
  return bytes;
}

Result<std::string> read_system_file(const std::string& path) {
  bool more = false;
  std::string bytes;
  AURA_ASSIGN_OR_RETURN(bytes, read_regular(path, kMaxSystemFileBytes, &more, "read"));
  if (more) {
    return world_error("read " + path,
                       "larger than " + std::to_string(kMaxSystemFileBytes) + " bytes");
  }
  return bytes;
}

std::string_view type_name(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return "file";
    case S_IFDIR:
      return "dir";
    case S_IFLNK:
      return "symlink";
    case S_IFIFO:
      return "fifo";
    case S_IFSOCK:
      return "socket";
    case S_IFCHR:
      return "char";
    case S_IFBLK:
      return "block";
    default:
      return "unknown";
  }
}

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(mode & 07777));
  return buf;
}

std::string escape_name(std::string_view name) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(name.size());
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f || c == '\\') {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    } else {
      out.push_back(char(c));
    }
  }
  return out;
}

Result<mode_t> parse_mode(std::string_view arg, std::string_view text) {
  if (text.empty() || text.size() > 4) return bad_arg(arg, "must be 1 to 4 octal digits");
  mode_t m = 0;
  for (char c : text) {
    if (c < '0' || c > '7') return bad_arg(arg, "must be 1 to 4 octal digits");
    m = m * 8 + mode_t(c - '0');
  }
  return m;
}

Result<ParentDir> open_parent(std::string_view arg, std::string_view path) {
  AURA_RETURN_IF_ERROR(check_path(arg, path));
  const size_t slash = path.rfind('/');
  ParentDir p;
  p.path = std::string(path);
  p.name = std::string(path.substr(slash + 1));
  if (p.name.empty() || p.name == "." || p.name == "..") {
    return bad_arg(arg, "has no final component to change");
  }
  const std::string folder = slash == 0 ? "/" : std::string(path.substr(0, slash));
  const int fd = ::open(folder.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error("open folder " + escape_name(folder), errno);
  p.dir = std::make_shared<file_io::Fd>(fd);
  return p;
}

Status stat_final(const ParentDir& p, struct stat* st, bool* exists) {
  if (::fstatat(p.fd(), p.name.c_str(), st, AT_SYMLINK_NOFOLLOW) == 0) {
    *exists = true;
    return Status::ok();
  }
  if (errno == ENOENT) {
    *exists = false;
    return Status::ok();
  }
  return errno_error("lstat " + escape_name(p.path), errno);
}

Status replace_file(const ParentDir& p, std::string_view bytes, mode_t mode, uid_t uid, gid_t gid) {
  const std::string what = "write " + escape_name(p.path);
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = ".aura-tmp-" + std::to_string(::getpid()) + "-" + std::to_string(attempt);
    fd = ::openat(p.fd(), tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) return errno_error(what, "create a temporary file", errno);
  }
  if (fd < 0) return world_error(what, "no free temporary file name");
  file_io::Fd guard(fd);
  const auto fail = [&](std::string_view step) {
    const int err = errno;
    ::unlinkat(p.fd(), tmp.c_str(), 0);
    return errno_error(what, step, err);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write");
    done += size_t(n);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) return fail("fstat");
  // The owner first: chown clears set-id bits, which the mode then sets.
  const bool chown_uid = uid != kKeepId && st.st_uid != uid;
  const bool chown_gid = gid != kKeepId && st.st_gid != gid;
  if ((chown_uid || chown_gid) && ::fchown(fd, uid, gid) != 0) return fail("chown");
  if (::fchmod(fd, mode & 07777) != 0) return fail("chmod");
  if (::fsync(fd) != 0) return fail("fsync");
  if (::renameat(p.fd(), tmp.c_str(), p.fd(), p.name.c_str()) != 0) return fail("rename");
  const int dfd = ::openat(p.fd(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0) return errno_error(what, "open the folder to fsync it", errno);
  file_io::Fd dguard(dfd);
  if (::fsync(dfd) != 0) return errno_error(what, "fsync the folder", errno);
  return Status::ok();
}

}  // namespace aura::runner
