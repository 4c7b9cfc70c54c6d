// NodeView: the supervisor's read-only view into a running world node, from the host. Every
// path is resolved inside the node's root (openat2 RESOLVE_IN_ROOT on /proc/<init>/root), ids
// are translated through the node's maps, and every read is bounded and never blocks: nothing a
// world contains makes the host follow a path outside it, open a FIFO or device, or hang.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/common/status.h"

namespace aura::inspect {

struct FileInfo {
  enum class Type { kFile, kDir, kSymlink, kFifo, kSocket, kChar, kBlock };
  Type type = Type::kFile;
  uint32_t mode = 0;          // the 07777 bits
  uint32_t uid = 0, gid = 0;  // as seen inside the node (65534 when unmapped)
  uint64_t size = 0;
  uint64_t nlink = 0;  // hard links: a file with more than one is reachable from elsewhere
};

// "file", "dir", "symlink", "fifo", "socket", "char device", "block device".
std::string_view type_name(FileInfo::Type type);

// A process's complete credentials as the host's /proc/<pid>/status states them: every id a
// check compares, not only the real ones (a service whose real uid is its user's but whose
// effective, saved or filesystem uid is 0 runs as root), and every capability set.
struct Credentials {
  // Real, effective, saved and filesystem ids, translated inside (unmapped: kOverflowId).
  std::array<uint32_t, 4> uids{}, gids{};
  // CapInh, CapPrm, CapEff, CapBnd, CapAmb: bit n is capability n.
  uint64_t cap_inh = 0, cap_prm = 0, cap_eff = 0, cap_bnd = 0, cap_amb = 0;
  bool no_new_privs = false;
  int seccomp = 0;  // 0 none, 1 strict, 2 filter

  // The capabilities the process holds or can take up without exec: inheritable, permitted,
  // effective and ambient (the bounding set only limits what exec may grant).
  uint64_t held_caps() const { return cap_inh | cap_prm | cap_eff | cap_amb; }
};

// "real", "effective", "saved", "filesystem": the names of Credentials::uids' slots.
std::string_view id_slot_name(size_t slot);
// "cap_chown", "cap_dac_override", ... (capability(7) names, lower case); "cap_<n>" beyond the
// known ones.
std::string cap_name(int cap);
// The capability named `name` ("cap_net_bind_service" or "net_bind_service"); nullopt if unknown.
std::optional<int> cap_number(std::string_view name);
// "cap_a,cap_b" for the bits of `caps`, lowest first; "none" when empty.
std::string cap_names(uint64_t caps);

struct ProcessInfo {
  pid_t pid = 0;        // host pid
  pid_t ppid_host = 0;  // host pid of the parent
  std::string comm;
  uint32_t uid = 0, gid = 0;     // real ids, inside (cred.uids[0], cred.gids[0])
  std::vector<uint32_t> groups;  // supplementary groups, inside
  Credentials cred;
  std::string cmdline;  // NULs as spaces, at most kMaxCmdlineBytes
  std::string cgroup;   // /proc/PID/cgroup as the host reads it: every hierarchy's path
};

struct Listener {
  std::string proto;        // "tcp", "tcp6", "unix"
  std::string address;      // "0.0.0.0:80", "[::]:80", or the unix path ("@name": abstract)
  std::vector<pid_t> pids;  // host pids of the given node processes holding it, sorted
};

inline constexpr size_t kMaxCmdlineBytes = 256;
inline constexpr uint32_t kOverflowId = 65534;

// One entry of a POSIX ACL: its tag (kAclUserObj ... kAclOther), its permission bits (rwx as 4,
// 2, 1) and, for a named user or group, its id as the node numbers it (unmapped: kOverflowId).
struct AclEntry {
  uint16_t tag = 0;
  uint16_t perm = 0;
  uint32_t id = 0;
  bool operator==(const AclEntry&) const = default;
};
inline constexpr uint16_t kAclUserObj = 0x01, kAclUser = 0x02, kAclGroupObj = 0x04,
                          kAclGroup = 0x08, kAclMask = 0x10, kAclOther = 0x20;

struct Acl {
  std::vector<AclEntry> access;  // empty: the mode bits are the whole story
  std::vector<AclEntry> dflt;    // a folder's default ACL (what new entries under it inherit)
  bool any() const { return !access.empty() || !dflt.empty(); }
};

// Thread safety: const methods may be called from several threads at once.
class NodeView {
 public:
  // Opens /proc/<init>/root as an O_PATH folder and reads the init's uid_map and gid_map.
  // kFailedPrecondition when the process is gone. The view stays valid (and keeps reading the
  // same root) as long as the node lives; after that calls fail.
  static Result<NodeView> open(pid_t init_pid);

  NodeView(NodeView&& other) noexcept;
  NodeView& operator=(NodeView&& other) noexcept;
  NodeView(const NodeView&) = delete;
  NodeView& operator=(const NodeView&) = delete;
  ~NodeView();

  // lstat of an absolute path in the node: folders on the way resolve inside the node's root
  // (symlinks included), the final name is not followed.
  Result<FileInfo> stat(std::string_view path) const;

  // The content of a regular file (a final symlink is followed, inside the root), at most
  // `cap` bytes. With `truncated`, a longer file gives its first `cap` bytes and sets it; without,
  // a longer file is kFailedPrecondition (a check never sees a silently cut file). A FIFO,
  // socket or device is kFailedPrecondition naming its type and is never opened for I/O.
  Result<std::string> read_file(std::string_view path, size_t cap, bool* truncated = nullptr) const;

  // The POSIX ACLs of the file or folder at `path` (its final name not followed): its access
  // ACL (system.posix_acl_access) and a folder's default ACL (system.posix_acl_default), each
  // empty when there is none. Read from the host through the inode opened, never through the
  // node's tools; named ids translated inside. A malformed ACL is kCorruption.
  Result<Acl> acl(std::string_view path) const;

  // The entries of a folder (a final symlink is followed, inside the root), each lstat'ed,
  // sorted by name. More than `max_entries` is kFailedPrecondition.
  Result<std::vector<std::pair<std::string, FileInfo>>> list_dir(std::string_view path,
                                                                 size_t max_entries) const;

  // The processes `pids` (host pids, e.g. the node cgroup's), ids translated to inside. A pid
  // that is gone by the time it is read is skipped.
  Result<std::vector<ProcessInfo>> processes(const std::vector<pid_t>& pids) const;

  // The LISTEN sockets of the node's network namespace (/proc/<init>/net/{tcp,tcp6,unix}),
  // each with the pids among `node_pids` holding it (socket inodes in /proc/<pid>/fd). Sorted
  // by proto, then address; sockets bound more than once (SO_REUSEPORT) are one entry.
  Result<std::vector<Listener>> listeners(const std::vector<pid_t>& node_pids) const;

  // The mounts of the node's mount namespace whose files come from the host and cannot be
  // written by the node's uids: overlays (the image's folders over the host's) and file systems
  // on a block device (the lab's own programs, the loader's files, bound from the host). Meant
  // to be read once, at build, before anything of the scenario runs: a mount the node makes
  // later gets an id of its own and is never among them.
  Result<std::set<uint64_t>> host_backed_mounts() const;

  std::optional<uint32_t> uid_inside(uint32_t host_uid) const;
  std::optional<uint32_t> gid_inside(uint32_t host_gid) const;

  // The O_PATH descriptor of the node's root; owned by the view.
  int root_fd() const { return root_fd_; }
  pid_t init_pid() const { return init_; }

  // A new O_PATH descriptor (the caller closes it) of absolute `path` resolved inside the root
  // (RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS); the final name is followed only with `follow`.
  Result<int> open_path(std::string_view path, bool follow) const;
  // open_path(path, false) and its fstat in `st`; the caller closes the descriptor.
  Result<int> open_stat(std::string_view path, struct stat& st) const;

  // `st` as the node sees it: type, permission bits, ids translated (unmapped: kOverflowId).
  FileInfo file_info(const struct stat& st) const;

  // Reads `status` (a /proc/<pid>/status text) into `c`, ids translated through the maps.
  Status read_credentials(std::string_view status, Credentials& c) const;

  // One line of an id map: `count` ids from `inside` are `outside` on the host.
  struct IdRange {
    uint32_t inside, outside, count;
  };

 private:
  NodeView() = default;

  pid_t init_ = -1;
  int root_fd_ = -1;
  std::vector<IdRange> uid_map_, gid_map_;
};

// Helpers the inspect files share.

// openat2(2), retrying EINTR and EAGAIN (a rename raced a RESOLVE_IN_ROOT walk); the new
// descriptor (O_CLOEXEC is added) or -errno.
int openat2_fd(int dir_fd, const char* path, uint64_t flags, uint64_t resolve);

// Opens the file behind O_PATH descriptor `path_fd` for reading, through /proc/self/fd (so the
// inode checked is the inode opened: nothing is resolved again), with O_NONBLOCK | O_NOCTTY,
// only when fstat says it is a regular file; else kFailedPrecondition naming `name` and its type.
Result<int> open_regular_for_read(int path_fd, std::string_view name);

// The SHA-256 (64 lowercase hex) of the regular file behind O_PATH descriptor `path_fd`, opened
// as open_regular_for_read() opens it; over `max_bytes` is kFailedPrecondition.
Result<std::string> hash_regular_for_read(int path_fd, std::string_view name, uint64_t max_bytes);

// The names in open folder `dir_fd` (read from its current position), without "." and "..",
// sorted by bytes; more than `max_entries` is kFailedPrecondition. `name` names it in errors.
Result<std::vector<std::string>> dir_names(int dir_fd, size_t max_entries, std::string_view name);

}  // namespace aura::inspect
