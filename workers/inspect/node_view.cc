#include "workers/inspect/node_view.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <set>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"

namespace aura::inspect {
namespace {

using file_io::errno_text;
using file_io::Fd;

constexpr uint64_t kInRoot = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
constexpr size_t kMaxPathBytes = 4096;
constexpr size_t kMaxProcFileBytes = 64 << 10;    // /proc/<pid>/status
constexpr size_t kMaxNetFileBytes = 16ull << 20;  // /proc/<pid>/net/{tcp,tcp6,unix}
constexpr size_t kMaxFdsPerProcess = 1 << 16;
constexpr size_t kDirentBufferBytes = 32 << 10;

Status check_path(std::string_view path) {
  if (path.empty() || path.front() != '/') return Status::invalid("path must be absolute");
  if (path.size() > kMaxPathBytes) return Status::invalid("path over 4096 bytes");
  if (path.find('\0') != std::string_view::npos) return Status::invalid("path has a NUL byte");
  return Status::ok();
}

// Kernel filesystems: a host process reading them through a node's mount sees the host's
// kernel (/proc/kcore, /proc/kmsg, the host's /proc/sys/net), not the world.
const char* kernel_fs_name(const struct statfs& fs) {
  switch (static_cast<unsigned long>(fs.f_type)) {
    case PROC_SUPER_MAGIC:
      return "proc";
    case SYSFS_MAGIC:
      return "sysfs";
    case DEBUGFS_MAGIC:
      return "debugfs";
    case TRACEFS_MAGIC:
      return "tracefs";
    case SECURITYFS_MAGIC:
      return "securityfs";
    case CGROUP_SUPER_MAGIC:
      return "cgroup";
    case CGROUP2_SUPER_MAGIC:
      return "cgroup2";
    case BPF_FS_MAGIC:
      return "bpf";
    case DEVPTS_SUPER_MAGIC:
      return "devpts";
    case PSTOREFS_MAGIC:
      return "pstore";
    case EFIVARFS_MAGIC:
      return "efivarfs";
    case SELINUX_MAGIC:
      return "selinuxfs";
    case NSFS_MAGIC:
      return "nsfs";
    case 0x62656570:
      return "configfs";
    case 0x19800202:
      return "mqueue";
    case 0x65735543:
      return "fusectl";
    case 0x42494e4d:
      return "binfmt_misc";
    default:
      return nullptr;
  }
}

FileInfo::Type type_of(mode_t mode) {
  switch (mode & S_IFMT) {
    case S_IFDIR:
      return FileInfo::Type::kDir;
    case S_IFLNK:
      return FileInfo::Type::kSymlink;
    case S_IFIFO:
      return FileInfo::Type::kFifo;
    case S_IFSOCK:
      return FileInfo::Type::kSocket;
    case S_IFCHR:
      return FileInfo::Type::kChar;
    case S_IFBLK:
      return FileInfo::Type::kBlock;
    default:
      return FileInfo::Type::kFile;
  }
}

// Reads at most `cap` + 1 bytes of `fd` into `out`; 0 or the read's errno.
int read_bounded(int fd, size_t cap, std::string& out) {
  out.clear();
  char buf[16384];
  while (out.size() <= cap) {
    const size_t want = std::min(sizeof buf, cap + 1 - out.size());
    const ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    out.append(buf, size_t(n));
  }
  return 0;
}

// A small file under the host's /proc (an open folder `dir_fd` of one process or the whole
// /proc), bounded: over `cap` bytes is kFailedPrecondition, or with `cut` its first `cap` bytes.
// kNotFound when the process is gone.
Result<std::string> read_proc_file(int dir_fd, const char* name, size_t cap, bool cut = false) {
  const int fd = ::openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH) return Status::not_found(name);
    return Status::io(std::string("open ") + name + ": " + errno_text(errno));
  }
  Fd guard(fd);
  std::string out;
  if (const int err = read_bounded(fd, cap, out); err != 0) {
    if (err == ESRCH) return Status::not_found(name);
    return Status::io(std::string("read ") + name + ": " + errno_text(err));
  }
  if (out.size() > cap) {
    if (!cut) return Status::failed_precondition(std::string(name) + ": over its bound");
    out.resize(cap);
  }
  return out;
}

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    if (j > i) out.push_back(line.substr(i, j - i));
    i = j;
  }
  return out;
}

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

template <class T>
bool parse_num(std::string_view s, T& v, int base = 10) {
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v, base);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

// The value after "<key>:" in a /proc/<pid>/status text, e.g. "Uid" → "0\t0\t0\t0".
std::string_view status_field(std::string_view text, std::string_view key) {
  for (std::string_view line : lines_of(text)) {
    if (line.size() > key.size() && line.substr(0, key.size()) == key && line[key.size()] == ':')
      return line.substr(key.size() + 1);
  }
  return {};
}

Result<std::vector<NodeView::IdRange>> read_id_map(int proc_fd, const char* name) {
  auto text = read_proc_file(proc_fd, name, kMaxProcFileBytes);
  if (!text.ok()) return text.status();
  std::vector<NodeView::IdRange> out;
  for (std::string_view line : lines_of(*text)) {
    const auto f = split_ws(line);
    if (f.empty()) continue;
    NodeView::IdRange r{};
    if (f.size() != 3 || !parse_num(f[0], r.inside) || !parse_num(f[1], r.outside) ||
        !parse_num(f[2], r.count))
      return Status::corruption(std::string(name) + ": bad line '" + std::string(line) + "'");
    out.push_back(r);
  }
  return out;
}

std::optional<uint32_t> to_inside(const std::vector<NodeView::IdRange>& map, uint32_t host) {
  for (const auto& r : map) {
    if (host >= r.outside && uint64_t(host) - r.outside < r.count)
      return r.inside + (host - r.outside);
  }
  return std::nullopt;
}

// "0100007F:1F90" (tcp) or 32 hex digits:port (tcp6) as /proc/net/tcp{,6} print them: each
// 32-bit word in the kernel's byte order, printed as a native integer.
std::optional<std::string> format_address(std::string_view hex, bool v6) {
  const size_t colon = hex.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view addr = hex.substr(0, colon);
  uint32_t port = 0;
  if (!parse_num(hex.substr(colon + 1), port, 16) || port > 0xffff) return std::nullopt;
  const size_t words = v6 ? 4 : 1;
  if (addr.size() != words * 8) return std::nullopt;
  unsigned char bytes[16];
  for (size_t w = 0; w < words; ++w) {
    uint32_t v = 0;
    if (!parse_num(addr.substr(w * 8, 8), v, 16)) return std::nullopt;
    std::memcpy(bytes + w * 4, &v, 4);
  }
  char text[INET6_ADDRSTRLEN];
  if (::inet_ntop(v6 ? AF_INET6 : AF_INET, bytes, text, sizeof text) == nullptr)
    return std::nullopt;
  return v6 ? "[" + std::string(text) + "]:" + std::to_string(port)
            : std::string(text) + ":" + std::to_string(port);
}

// A unix socket name as /proc/net/unix prints it: abstract names start with '@', NULs as '@'.
std::string unix_name(const sockaddr_un& sun, socklen_t len) {
  const size_t off = offsetof(sockaddr_un, sun_path);
  if (len <= off) return {};
  size_t n = len - off;
  std::string out(sun.sun_path, n);
  if (out[0] != '\0') {
    const size_t nul = out.find('\0');
    if (nul != std::string::npos) out.resize(nul);
    return out;
  }
  for (char& c : out)
    if (c == '\0') c = '@';
  return out;
}

// The bound name of socket descriptor `fd` of process `pid` when it is a listening unix socket
// (nullopt when it is not, or is gone), taken from the socket itself (pidfd_getfd, getsockname),
// not from text a bound name could forge.
Result<std::optional<std::string>> listening_unix_name(pid_t pid, int fd) {
  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) {
    if (errno == ESRCH) return std::optional<std::string>();
    return Status::io("pidfd_open " + std::to_string(pid) + ": " + errno_text(errno));
  }
  Fd pid_guard(pidfd);
  const int local = static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, fd, 0));
  if (local < 0) {
    if (errno == ESRCH || errno == EBADF) return std::optional<std::string>();
    return Status::io("pidfd_getfd " + std::to_string(pid) + " fd " + std::to_string(fd) + ": " +
                      errno_text(errno));
  }
  Fd guard(local);
  int listening = 0;
  socklen_t optlen = sizeof listening;
  if (::getsockopt(local, SOL_SOCKET, SO_ACCEPTCONN, &listening, &optlen) != 0 || !listening)
    return std::optional<std::string>();
  sockaddr_un sun{};
  socklen_t len = sizeof sun;
  if (::getsockname(local, reinterpret_cast<sockaddr*>(&sun), &len) != 0 ||
      sun.sun_family != AF_UNIX)
    return std::optional<std::string>();
  return std::optional<std::string>(unix_name(sun, len));
}

struct SocketOwner {
  pid_t pid;
  int fd;
};

// capabilities(7), by number (linux/capability.h); later ones are named by number.
constexpr std::string_view kCapNames[] = {"chown",
                                          "dac_override",
                                          "dac_read_search",
                                          "fowner",
                                          "fsetid",
                                          "kill",
                                          "setgid",
                                          "setuid",
                                          "setpcap",
                                          "linux_immutable",
                                          "net_bind_service",
                                          "net_broadcast",
                                          "net_admin",
                                          "net_raw",
                                          "ipc_lock",
                                          "ipc_owner",
                                          "sys_module",
                                          "sys_rawio",
                                          "sys_chroot",
                                          "sys_ptrace",
                                          "sys_pacct",
                                          "sys_admin",
                                          "sys_boot",
                                          "sys_nice",
                                          "sys_resource",
                                          "sys_time",
                                          "sys_tty_config",
                                          "mknod",
                                          "lease",
                                          "audit_write",
                                          "audit_control",
                                          "setfcap",
                                          "mac_override",
                                          "mac_admin",
                                          "syslog",
                                          "wake_alarm",
                                          "block_suspend",
                                          "audit_read",
                                          "perfmon",
                                          "bpf",
                                          "checkpoint_restore"};

}  // namespace

std::string_view id_slot_name(size_t slot) {
  static constexpr std::string_view kNames[] = {"real", "effective", "saved", "filesystem"};
  return slot < 4 ? kNames[slot] : "?";
}

std::string cap_name(int cap) {
  if (cap >= 0 && size_t(cap) < std::size(kCapNames)) return "cap_" + std::string(kCapNames[cap]);
  return "cap_" + std::to_string(cap);
}

std::optional<int> cap_number(std::string_view name) {
  if (name.starts_with("cap_")) name.remove_prefix(4);
  for (size_t i = 0; i < std::size(kCapNames); ++i)
    if (kCapNames[i] == name) return int(i);
  return std::nullopt;
}

std::string cap_names(uint64_t caps) {
  std::string out;
  for (int i = 0; i < 64; ++i)
    if (caps & (uint64_t(1) << i)) out += (out.empty() ? "" : ",") + cap_name(i);
  return out.empty() ? "none" : out;
}

std::string_view type_name(FileInfo::Type type) {
  switch (type) {
    case FileInfo::Type::kFile:
      return "file";
    case FileInfo::Type::kDir:
      return "dir";
    case FileInfo::Type::kSymlink:
      return "symlink";
    case FileInfo::Type::kFifo:
      return "fifo";
    case FileInfo::Type::kSocket:
      return "socket";
    case FileInfo::Type::kChar:
      return "char device";
    case FileInfo::Type::kBlock:
      return "block device";
  }
  return "?";
}

int openat2_fd(int dir_fd, const char* path, uint64_t flags, uint64_t resolve) {
  open_how how{};
  how.flags = flags | O_CLOEXEC;
  how.resolve = resolve;
  for (int attempt = 0; attempt < 64; ++attempt) {
    const long rc = ::syscall(SYS_openat2, dir_fd, path, &how, sizeof how);
    if (rc >= 0) return static_cast<int>(rc);
    if (errno != EAGAIN && errno != EINTR) return -errno;
  }
  return -EAGAIN;
}

Result<int> open_regular_for_read(int path_fd, std::string_view name) {
  struct stat st;
  if (::fstat(path_fd, &st) != 0)
    return Status::io("fstat " + std::string(name) + ": " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) {
    return Status::failed_precondition(std::string(name) + ": is a " +
                                       std::string(type_name(type_of(st.st_mode))) +
                                       ", not a regular file");
  }
  struct statfs fs;
  if (::fstatfs(path_fd, &fs) != 0)
    return Status::io("fstatfs " + std::string(name) + ": " + errno_text(errno));
  if (const char* kernel = kernel_fs_name(fs)) {
    return Status::failed_precondition(std::string(name) + ": on a kernel filesystem (" + kernel +
                                       "): what the host reads there is not the world's");
  }
  const std::string self = "/proc/self/fd/" + std::to_string(path_fd);
  // O_NONBLOCK: a lease held in the world makes the open fail instead of waiting for it.
  const int fd = ::open(self.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == EWOULDBLOCK)
      return Status::failed_precondition(std::string(name) + ": a lease on it is held");
    return Status::io("open " + std::string(name) + ": " + errno_text(errno));
  }
  struct stat again;
  if (::fstat(fd, &again) != 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
    ::close(fd);
    return Status::failed_precondition(std::string(name) + ": changed while it was opened");
  }
  return fd;
}

Result<std::string> hash_regular_for_read(int path_fd, std::string_view name, uint64_t max_bytes) {
  int fd;
  AURA_ASSIGN_OR_RETURN(fd, open_regular_for_read(path_fd, name));
  file_io::Fd guard(fd);
  Sha256 h;
  uint64_t total = 0;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::io("read " + std::string(name) + ": " + errno_text(errno));
    }
    if (n == 0) break;
    total += uint64_t(n);
    if (total > max_bytes)
      return Status::failed_precondition(std::string(name) + ": larger than " +
                                         std::to_string(max_bytes) + " bytes");
    h.update(std::string_view(buf, size_t(n)));
  }
  return to_hex(h.finish());
}

Result<std::vector<std::string>> dir_names(int dir_fd, size_t max_entries, std::string_view name) {
  std::vector<std::string> names;
  std::vector<char> buf(kDirentBufferBytes);
  for (;;) {
    const long n = ::syscall(SYS_getdents64, dir_fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::io("read folder " + std::string(name) + ": " + errno_text(errno));
    }
    if (n == 0) break;
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(buf.data() + off);
      off += d->d_reclen;
      const std::string_view entry(d->d_name);
      if (entry == "." || entry == "..") continue;
      if (names.size() == max_entries) {
        return Status::failed_precondition(std::string(name) + ": more than " +
                                           std::to_string(max_entries) + " entries");
      }
      names.emplace_back(entry);
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<NodeView> NodeView::open(pid_t init_pid) {
  if (init_pid <= 0) return Status::invalid("init pid must be positive");
  const std::string proc = "/proc/" + std::to_string(init_pid);
  const int proc_fd = ::open(proc.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0) {
    if (errno == ENOENT || errno == ESRCH)
      return Status::failed_precondition("node init " + std::to_string(init_pid) + " is gone");
    return Status::io("open " + proc + ": " + errno_text(errno));
  }
  Fd proc_guard(proc_fd);
  NodeView view;
  view.init_ = init_pid;
  view.root_fd_ = ::openat(proc_fd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (view.root_fd_ < 0) {
    if (errno == ENOENT || errno == ESRCH)
      return Status::failed_precondition("node init " + std::to_string(init_pid) + " is gone");
    return Status::io("open " + proc + "/root: " + errno_text(errno));
  }
  auto uids = read_id_map(proc_fd, "uid_map");
  auto gids = read_id_map(proc_fd, "gid_map");
  for (const auto* m : {&uids, &gids}) {
    if (m->ok()) continue;
    if (m->status().code() == ErrorCode::kNotFound)
      return Status::failed_precondition("node init " + std::to_string(init_pid) + " is gone");
    return m->status().with_context(proc);
  }
  view.uid_map_ = std::move(*uids);
  view.gid_map_ = std::move(*gids);
  return view;
}

NodeView::NodeView(NodeView&& other) noexcept
    : init_(other.init_),
      root_fd_(std::exchange(other.root_fd_, -1)),
      uid_map_(std::move(other.uid_map_)),
      gid_map_(std::move(other.gid_map_)) {}

NodeView& NodeView::operator=(NodeView&& other) noexcept {
  if (this != &other) {
    if (root_fd_ >= 0) ::close(root_fd_);
    init_ = other.init_;
    root_fd_ = std::exchange(other.root_fd_, -1);
    uid_map_ = std::move(other.uid_map_);
    gid_map_ = std::move(other.gid_map_);
  }
  return *this;
}

NodeView::~NodeView() {
  if (root_fd_ >= 0) ::close(root_fd_);
}

std::optional<uint32_t> NodeView::uid_inside(uint32_t host_uid) const {
  return to_inside(uid_map_, host_uid);
}

std::optional<uint32_t> NodeView::gid_inside(uint32_t host_gid) const {
  return to_inside(gid_map_, host_gid);
}

FileInfo NodeView::file_info(const struct stat& st) const {
  FileInfo info;
  info.type = type_of(st.st_mode);
  info.mode = st.st_mode & 07777;
  info.uid = uid_inside(st.st_uid).value_or(kOverflowId);
  info.gid = gid_inside(st.st_gid).value_or(kOverflowId);
  info.size = static_cast<uint64_t>(st.st_size);
  info.nlink = static_cast<uint64_t>(st.st_nlink);
  return info;
}

Result<Acl> NodeView::acl(std::string_view path) const {
  struct stat st;
  int fd;
  AURA_ASSIGN_OR_RETURN(fd, open_stat(path, st));
  Fd guard(fd);
  Acl out;
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return out;  // no ACL on other types
  // The inode behind the O_PATH descriptor, through its /proc/self/fd link: nothing resolved
  // again inside the node. The kernel's format: a u32 version (2), then 8-byte entries
  // (u16 tag, u16 perm, u32 id), little-endian, ids in the reader's (the host's) numbering.
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  for (auto [name, into] : {std::pair{"system.posix_acl_access", &out.access},
                            std::pair{"system.posix_acl_default", &out.dflt}}) {
    uint8_t buf[4 + 8 * 64];
    const ssize_t n = ::getxattr(self.c_str(), name, buf, sizeof buf);
    if (n < 0) {
      if (errno == ENODATA || errno == ENOTSUP || errno == EOPNOTSUPP) continue;
      if (errno == ERANGE)
        return Status::failed_precondition(std::string(path) + ": " + name +
                                           " has more than 64 entries");
      return Status::io("getxattr " + std::string(path) + " " + name + ": " + errno_text(errno));
    }
    uint32_t version = 0;
    if (n >= 4) std::memcpy(&version, buf, 4);
    if (n < 4 || (n - 4) % 8 != 0 || version != 2)
      return Status::corruption(std::string(path) + ": " + name + " is not a POSIX ACL");
    for (ssize_t at = 4; at < n; at += 8) {
      AclEntry e;
      std::memcpy(&e.tag, buf + at, 2);
      std::memcpy(&e.perm, buf + at + 2, 2);
      std::memcpy(&e.id, buf + at + 4, 4);
      if (e.tag == kAclUser) e.id = uid_inside(e.id).value_or(kOverflowId);
      if (e.tag == kAclGroup) e.id = gid_inside(e.id).value_or(kOverflowId);
      if (e.tag != kAclUser && e.tag != kAclGroup) e.id = 0;
      into->push_back(e);
    }
  }
  return out;
}

Result<int> NodeView::open_path(std::string_view path, bool follow) const {
  AURA_RETURN_IF_ERROR(check_path(path));
  const std::string p(path);
  const int fd = openat2_fd(root_fd_, p.c_str(), O_PATH | (follow ? 0 : O_NOFOLLOW), kInRoot);
  if (fd >= 0) return fd;
  switch (-fd) {
    case ENOENT:
      return Status::not_found(p + ": not in the node");
    case ENOTDIR:
      return Status::not_found(p + ": a folder on the path is not a folder");
    case ELOOP:
      return Status::failed_precondition(p + ": too many symlinks or a magic link");
    case ENOSYS:
      return Status::unavailable("openat2() is not available on this kernel");
    default:
      return Status::io("open " + p + " in the node: " + errno_text(-fd));
  }
}

Result<int> NodeView::open_stat(std::string_view path, struct stat& st) const {
  int fd;
  AURA_ASSIGN_OR_RETURN(fd, open_path(path, false));
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::io("fstat " + std::string(path) + ": " + errno_text(err));
  }
  return fd;
}

Result<FileInfo> NodeView::stat(std::string_view path) const {
  struct stat st;
  int fd;
  AURA_ASSIGN_OR_RETURN(fd, open_stat(path, st));
  ::close(fd);
  return file_info(st);
}

Result<std::string> NodeView::read_file(std::string_view path, size_t cap, bool* truncated) const {
  int path_fd;
  AURA_ASSIGN_OR_RETURN(path_fd, open_path(path, true));
  Fd path_guard(path_fd);
  int fd;
  AURA_ASSIGN_OR_RETURN(fd, open_regular_for_read(path_fd, path));
  Fd guard(fd);
  std::string out;
  if (const int err = read_bounded(fd, cap, out); err != 0)
    return Status::io("read " + std::string(path) + ": " + errno_text(err));
  const bool over = out.size() > cap;
  if (over && truncated == nullptr) {
    return Status::failed_precondition(std::string(path) + ": larger than " + std::to_string(cap) +
                                       " bytes");
  }
  if (over) out.resize(cap);
  if (truncated != nullptr) *truncated = over;
  return out;
}

Result<std::vector<std::pair<std::string, FileInfo>>> NodeView::list_dir(std::string_view path,
                                                                         size_t max_entries) const {
  int path_fd;
  AURA_ASSIGN_OR_RETURN(path_fd, open_path(path, true));
  Fd path_guard(path_fd);
  // Reading a folder never blocks; "." beneath the O_PATH descriptor resolves nothing else.
  const int dir_fd = ::openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) {
    if (errno == ENOTDIR) return Status::failed_precondition(std::string(path) + ": not a folder");
    return Status::io("open " + std::string(path) + ": " + errno_text(errno));
  }
  Fd guard(dir_fd);
  std::vector<std::string> names;
  AURA_ASSIGN_OR_RETURN(names, dir_names(dir_fd, max_entries, path));
  std::vector<std::pair<std::string, FileInfo>> out;
  for (std::string& name : names) {
    struct stat st;
    if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT) != 0) {
      if (errno == ENOENT) continue;  // removed since it was listed
      return Status::io("stat " + std::string(path) + "/" + name + ": " + errno_text(errno));
    }
    out.emplace_back(std::move(name), file_info(st));
  }
  return out;
}

Result<std::set<uint64_t>> NodeView::host_backed_mounts() const {
  const std::string proc = "/proc/" + std::to_string(init_);
  const int proc_fd = ::open(proc.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0)
    return Status::failed_precondition("node init " + std::to_string(init_) + " is gone");
  Fd guard(proc_fd);
  auto text = read_proc_file(proc_fd, "mountinfo", kMaxNetFileBytes);
  if (!text.ok()) return text.status().with_context(proc);
  // proc(5): "ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER".
  std::set<uint64_t> out;
  for (std::string_view line : lines_of(*text)) {
    const auto f = split_ws(line);
    const auto dash = std::find(f.begin(), f.end(), std::string_view("-"));
    uint64_t id = 0;
    unsigned major = 0;
    const size_t colon = f.size() > 2 ? f[2].find(':') : std::string_view::npos;
    if (f.size() < 6 || dash == f.end() || dash + 1 == f.end() || !parse_num(f[0], id) ||
        colon == std::string_view::npos || !parse_num(f[2].substr(0, colon), major))
      return Status::corruption(proc + "/mountinfo: a bad line");
    if (*(dash + 1) == "overlay" || major != 0) out.insert(id);
  }
  return out;
}

Status NodeView::read_credentials(std::string_view status, Credentials& c) const {
  for (const bool is_uid : {true, false}) {
    const auto f = split_ws(status_field(status, is_uid ? "Uid" : "Gid"));
    if (f.size() != 4)
      return Status::corruption(is_uid ? "no Uid line of four ids" : "no Gid line of four ids");
    for (size_t i = 0; i < 4; ++i) {
      uint32_t host = 0;
      if (!parse_num(f[i], host)) return Status::corruption("a bad id in the Uid or Gid line");
      (is_uid ? c.uids : c.gids)[i] =
          (is_uid ? uid_inside(host) : gid_inside(host)).value_or(kOverflowId);
    }
  }
  const std::pair<const char*, uint64_t*> sets[] = {{"CapInh", &c.cap_inh},
                                                    {"CapPrm", &c.cap_prm},
                                                    {"CapEff", &c.cap_eff},
                                                    {"CapBnd", &c.cap_bnd},
                                                    {"CapAmb", &c.cap_amb}};
  for (const auto& [key, out] : sets) {
    const auto f = split_ws(status_field(status, key));
    if (f.size() != 1 || !parse_num(f[0], *out, 16))
      return Status::corruption(std::string("no ") + key + " line");
  }
  // Both lines exist on every kernel this lab runs on (NoNewPrivs since 4.10, Seccomp 3.8):
  // missing, they are read as the strictest value would not be: unknown, so refused.
  const auto nnp = split_ws(status_field(status, "NoNewPrivs"));
  const auto seccomp = split_ws(status_field(status, "Seccomp"));
  int nnp_value = 0;
  if (nnp.size() != 1 || !parse_num(nnp[0], nnp_value) || seccomp.size() != 1 ||
      !parse_num(seccomp[0], c.seccomp))
    return Status::corruption("no NoNewPrivs or Seccomp line");
  c.no_new_privs = nnp_value != 0;
  return Status::ok();
}

Result<std::vector<ProcessInfo>> NodeView::processes(const std::vector<pid_t>& pids) const {
  std::vector<ProcessInfo> out;
  for (pid_t pid : std::set<pid_t>(pids.begin(), pids.end())) {
    if (pid <= 0) continue;
    const std::string dir = "/proc/" + std::to_string(pid);
    const int dir_fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) {
      if (errno == ENOENT || errno == ESRCH) continue;
      return Status::io("open " + dir + ": " + errno_text(errno));
    }
    Fd guard(dir_fd);
    // Every file is read beneath the one folder: a pid reused meanwhile reads as gone.
    auto status = read_proc_file(dir_fd, "status", kMaxProcFileBytes);
    auto comm = read_proc_file(dir_fd, "comm", kMaxProcFileBytes);
    auto cmdline = read_proc_file(dir_fd, "cmdline", kMaxCmdlineBytes, true);
    auto cgroup = read_proc_file(dir_fd, "cgroup", kMaxProcFileBytes);
    bool gone = false;
    for (const auto* r : {&status, &comm, &cmdline, &cgroup}) {
      if (r->ok()) continue;
      if (r->status().code() == ErrorCode::kNotFound) {
        gone = true;
        break;
      }
      return r->status().with_context(dir);
    }
    if (gone) continue;
    ProcessInfo p;
    p.pid = pid;
    p.comm = *comm;
    while (!p.comm.empty() && p.comm.back() == '\n') p.comm.pop_back();
    std::string cmd = std::move(*cmdline);
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
    p.cmdline = std::move(cmd);
    p.cgroup = std::move(*cgroup);
    const auto ppid = split_ws(status_field(*status, "PPid"));
    if (ppid.size() != 1 || !parse_num(ppid[0], p.ppid_host))
      return Status::corruption(dir + "/status: no PPid line");
    AURA_RETURN_IF_ERROR(read_credentials(*status, p.cred).with_context(dir + "/status"));
    p.uid = p.cred.uids[0];
    p.gid = p.cred.gids[0];
    for (std::string_view g : split_ws(status_field(*status, "Groups"))) {
      uint32_t host = 0;
      if (!parse_num(g, host)) return Status::corruption(dir + "/status: bad Groups line");
      p.groups.push_back(gid_inside(host).value_or(kOverflowId));
    }
    out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<Listener>> NodeView::listeners(const std::vector<pid_t>& node_pids) const {
  const std::string proc = "/proc/" + std::to_string(init_);
  const int proc_fd = ::open(proc.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (proc_fd < 0)
    return Status::failed_precondition("node init " + std::to_string(init_) + " is gone");
  Fd proc_guard(proc_fd);

  // Socket inode → (proto, address) of every LISTEN socket of the node's network namespace.
  std::map<uint64_t, std::pair<std::string, std::string>> listening;
  for (const char* proto : {"tcp", "tcp6"}) {
    auto text = read_proc_file(proc_fd, (std::string("net/") + proto).c_str(), kMaxNetFileBytes);
    if (!text.ok()) return text.status().with_context(proc);
    const auto lines = lines_of(*text);
    for (size_t i = 1; i < lines.size(); ++i) {  // the first line is the header
      const auto f = split_ws(lines[i]);
      if (f.size() < 10) continue;
      if (f[3] != "0A") continue;  // TCP_LISTEN
      uint64_t inode = 0;
      auto address = format_address(f[1], proto[3] == '6');
      if (!address || !parse_num(f[9], inode))
        return Status::corruption(proc + "/net/" + proto + ": bad line");
      listening[inode] = {proto, *address};
    }
  }
  std::set<uint64_t> unix_inodes;
  {
    auto text = read_proc_file(proc_fd, "net/unix", kMaxNetFileBytes);
    if (!text.ok()) return text.status().with_context(proc);
    const auto lines = lines_of(*text);
    for (size_t i = 1; i < lines.size(); ++i) {
      const auto f = split_ws(lines[i]);
      uint32_t flags = 0;
      uint64_t inode = 0;
      // Num RefCount Protocol Flags Type St Inode [Path]; __SO_ACCEPTCON (0x10000) marks a
      // listening socket. A bound name may hold a newline and so forge a line: the names of
      // sockets a node process holds are taken from the socket itself below.
      if (f.size() < 8 || !parse_num(f[3], flags, 16) || !(flags & 0x10000) ||
          !parse_num(f[6], inode))
        continue;
      const size_t at = size_t(f[7].data() - lines[i].data());  // a name may hold spaces
      listening[inode] = {"unix", std::string(lines[i].substr(at))};
      unix_inodes.insert(inode);
    }
  }

  // Owners: the node processes holding each socket.
  std::map<uint64_t, std::vector<SocketOwner>> owners;
  for (pid_t pid : std::set<pid_t>(node_pids.begin(), node_pids.end())) {
    const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
    const int dir_fd = ::open(fd_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) continue;  // gone
    Fd guard(dir_fd);
    std::vector<std::string> fds;
    AURA_ASSIGN_OR_RETURN(fds, dir_names(dir_fd, kMaxFdsPerProcess, fd_dir));
    for (const std::string& name : fds) {
      int fd = -1;
      if (!parse_num(std::string_view(name), fd)) continue;
      char target[64];
      const ssize_t len = ::readlinkat(dir_fd, name.c_str(), target, sizeof target - 1);
      if (len <= 0) continue;
      const std::string_view t(target, size_t(len));
      uint64_t inode = 0;
      if (t.size() < 10 || t.substr(0, 8) != "socket:[" || t.back() != ']' ||
          !parse_num(t.substr(8, t.size() - 9), inode))
        continue;
      if (listening.count(inode)) owners[inode].push_back({pid, fd});
    }
  }

  std::map<std::pair<std::string, std::string>, std::set<pid_t>> merged;
  for (const auto& [inode, where] : listening) {
    auto key = where;
    const auto own = owners.find(inode);
    if (unix_inodes.count(inode) && own != owners.end()) {
      // The held socket's own name, or nothing when it is not a listening unix socket.
      const SocketOwner& o = own->second.front();
      std::optional<std::string> name;
      AURA_ASSIGN_OR_RETURN(name, listening_unix_name(o.pid, o.fd));
      if (!name) continue;
      key.second = *name;
    }
    if (key.second.empty()) continue;  // an unnamed unix socket cannot be reached
    auto& pids = merged[key];
    if (own != owners.end())
      for (const SocketOwner& o : own->second) pids.insert(o.pid);
  }
  std::vector<Listener> out;
  for (auto& [key, pids] : merged)
    out.push_back({key.first, key.second, std::vector<pid_t>(pids.begin(), pids.end())});
  return out;
}

}  // namespace aura::inspect
