#include "app/serve/daemon_reach.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace aura::serve {
namespace fs = std::filesystem;
namespace {

// Whether this process's effective ids are granted `want` (4 r, 2 w, 1 x) by `st`'s mode bits.
// The front holds no capability, so the bits alone decide (no ACL is set on these folders).
bool granted(const struct stat& st, mode_t want) {
  const uid_t uid = ::geteuid();
  if (uid == 0) return true;  // folders and sockets: root passes the mode checks
  if (st.st_uid == uid) return ((st.st_mode >> 6) & want) == want;
  bool in_group = st.st_gid == ::getegid();
  if (!in_group) {
    int n = ::getgroups(0, nullptr);
    std::vector<gid_t> groups(n > 0 ? size_t(n) : 0);
    if (n > 0 && ::getgroups(n, groups.data()) == n) {
      for (gid_t g : groups) in_group = in_group || g == st.st_gid;
    }
  }
  if (in_group) return ((st.st_mode >> 3) & want) == want;
  return (st.st_mode & want) == want;
}

std::string lacks(const char* what, const fs::path& p, const struct stat& st) {
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
  return std::string("no ") + what + " permission on " + p.string() + " (mode " + mode +
         ", owner " + std::to_string(st.st_uid) + ":" + std::to_string(st.st_gid) +
         "; this process: uid " + std::to_string(::geteuid()) + " gid " +
         std::to_string(::getegid()) + ")";
}

}  // namespace

std::string first_unsearchable(const fs::path& path) {
  fs::path at = path.root_path();
  const fs::path abs = fs::absolute(path).lexically_normal();
  for (auto it = abs.begin(); it != abs.end(); ++it) {
    if (it == abs.begin()) continue;  // the root itself, "/"
    struct stat st {};
    if (::stat(at.c_str(), &st) != 0) {
      return "cannot look at " + at.string() + ": " + std::strerror(errno);
    }
    if (!S_ISDIR(st.st_mode)) return at.string() + " is not a folder";
    if (!granted(st, 1)) return lacks("search (x)", at, st);
    at /= *it;
  }
  return "";
}

Result<DaemonReach> DaemonReach::open(const fs::path& socket) {
  const fs::path abs = fs::absolute(socket).lexically_normal();
  const fs::path dir = abs.parent_path();
  int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    std::string why = e == EACCES ? first_unsearchable(abs) : "";
    return Status::unavailable("the daemon's socket folder " + dir.string() + ": " +
                               std::strerror(e) + (why.empty() ? "" : " (" + why + ")"));
  }
  return DaemonReach(abs, fd);
}

DaemonReach::DaemonReach(DaemonReach&& o) noexcept : socket_(std::move(o.socket_)), fd_(o.fd_) {
  o.fd_ = -1;
}

DaemonReach::~DaemonReach() {
  if (fd_ >= 0) ::close(fd_);
}

fs::path DaemonReach::connect_path() const {
  return fs::path("/proc/self/fd") / std::to_string(fd_) / socket_.filename();
}

std::string DaemonReach::problem() const {
  struct stat dir {};
  if (::fstat(fd_, &dir) != 0)
    return std::string("fstat the socket folder: ") + std::strerror(errno);
  if (!granted(dir, 1)) return lacks("search (x)", socket_.parent_path(), dir);
  struct stat sock {};
  if (::fstatat(fd_, socket_.filename().c_str(), &sock, AT_SYMLINK_NOFOLLOW) != 0) {
    return "no socket at " + socket_.string() + ": " + std::strerror(errno);
  }
  if (!S_ISSOCK(sock.st_mode)) return socket_.string() + " is not a socket";
  if (!granted(sock, 2)) return lacks("write (w)", socket_, sock);
  return "";
}

}  // namespace aura::serve
