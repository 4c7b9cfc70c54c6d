#include "workers/inspect/layer_read.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"
#include "engine/gate/change_set.h"
#include "workers/inspect/node_view.h"

namespace aura::inspect {
namespace {

using file_io::errno_text;
using file_io::Fd;

constexpr size_t kMaxDepth = 64;
constexpr uint64_t kMaxFileBytes = 64ull << 20;
constexpr size_t kMaxXattrBytes = 64 << 10;
// One component, beneath the folder, no symlink followed and no mount crossed.
constexpr uint64_t kOneStep =
    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;

std::string id_text(uint32_t host, const LayerRead& r) {
  if (host >= r.uid_base && host - r.uid_base < r.id_count)
    return std::to_string(host - r.uid_base);
  return "65534";  // unmapped: what the node sees
}

bool overlay_own(std::string_view name) {
  return name.starts_with("trusted.overlay.") || name.starts_with("user.overlay.");
}

// The extended attributes of the inode behind O_PATH `fd` (through its /proc/self/fd link):
// their SHA-256 over sorted (name, value) pairs, "-" for none. With `upper`, the overlay's own
// are left out and reported: opaque (a folder hiding the lower's entries), whiteout.
struct Xattrs {
  std::string digest = "-";
  bool opaque = false, whiteout = false;
};

Result<Xattrs> read_xattrs(int fd, bool upper, const std::string& where) {
  Xattrs x;
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  std::string names(kMaxXattrBytes, '\0');
  const ssize_t n = ::listxattr(self.c_str(), names.data(), names.size());
  if (n < 0) {
    if (errno == ENOTSUP) return x;
    return Status::io("listxattr " + where + ": " + errno_text(errno));
  }
  names.resize(size_t(n));
  std::vector<std::string> list;
  for (size_t at = 0; at < names.size();) {
    const size_t end = names.find('\0', at);
    if (end == std::string::npos || end == at) break;
    list.push_back(names.substr(at, end - at));
    at = end + 1;
  }
  std::sort(list.begin(), list.end());
  Sha256 h;
  bool any = false;
  std::string value(kMaxXattrBytes, '\0');
  for (const std::string& name : list) {
    const ssize_t v = ::getxattr(self.c_str(), name.c_str(), value.data(), value.size());
    if (v < 0) {
      if (errno == ENODATA) continue;  // removed since it was listed
      return Status::io("getxattr " + where + " " + name + ": " + errno_text(errno));
    }
    if (upper && overlay_own(name)) {
      const std::string_view leaf = std::string_view(name).substr(name.rfind('.') + 1);
      if (leaf == "opaque" && v == 1 && value[0] == 'y') x.opaque = true;
      if (leaf == "whiteout") x.whiteout = true;
      continue;
    }
    const std::string len = std::to_string(v);
    h.update(name).update(std::string_view("\0", 1)).update(len).update(std::string_view("\0", 1));
    h.update(std::string_view(value.data(), size_t(v)));
    any = true;
  }
  if (any) x.digest = to_hex(h.finish());
  return x;
}

// The entry text of O_PATH `fd`; "absent" for an overlay whiteout.
Result<std::string> entry_of(int fd, bool upper, const std::string& where, const LayerRead& r) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return Status::io("fstat " + where + ": " + errno_text(errno));
  gate::EntryState e;
  e.present = true;
  const mode_t t = st.st_mode & S_IFMT;
  e.type = t == S_IFREG    ? "file"
           : t == S_IFDIR  ? "dir"
           : t == S_IFLNK  ? "symlink"
           : t == S_IFIFO  ? "fifo"
           : t == S_IFSOCK ? "socket"
           : t == S_IFCHR  ? "char"
                           : "block";
  if (upper && t == S_IFCHR && st.st_rdev == 0) return std::string(gate::kAbsent);
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
  e.mode = mode;
  e.uid = id_text(st.st_uid, r);
  e.gid = id_text(st.st_gid, r);
  e.links = t == S_IFDIR ? "-" : std::to_string(st.st_nlink);
  Xattrs x;
  if (t != S_IFLNK) {
    AURA_ASSIGN_OR_RETURN(x, read_xattrs(fd, upper, where));
  }
  if (x.whiteout) return std::string(gate::kAbsent);
  e.xattrs = x.digest;
  if (t == S_IFREG) {
    AURA_ASSIGN_OR_RETURN(e.content, hash_regular_for_read(fd, where, kMaxFileBytes));
  } else if (t == S_IFLNK) {
    char target[4097];
    const ssize_t n = ::readlinkat(fd, "", target, sizeof target);
    if (n < 0) return Status::io("readlink " + where + ": " + errno_text(errno));
    if (size_t(n) == sizeof target) return Status::failed_precondition(where + ": target too long");
    e.content = to_hex(sha256(std::string_view(target, size_t(n))));
  } else if (t == S_IFCHR || t == S_IFBLK) {
    e.content = std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev));
  } else if (t == S_IFDIR && x.opaque) {
    e.content = "opaque";
  } else {
    e.content = "-";
  }
  return gate::entry_text(e);
}

Status walk(int dir, const std::string& inside, bool upper, LayerRead& r, LayerState& out,
            size_t depth) {
  if (depth > kMaxDepth)
    return Status::failed_precondition(inside + ": deeper than " + std::to_string(kMaxDepth) +
                                       " levels");
  const int list_fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (list_fd < 0) return Status::io("open folder " + inside + ": " + errno_text(errno));
  Fd list_guard(list_fd);
  std::vector<std::string> names;
  AURA_ASSIGN_OR_RETURN(
      names, dir_names(list_fd, r.max_entries - std::min(r.max_entries, r.entries), inside));
  for (const std::string& name : names) {
    if (++r.entries > r.max_entries)
      return Status::failed_precondition("a node's writable layers hold more than " +
                                         std::to_string(r.max_entries) + " entries");
    const int child = openat2_fd(dir, name.c_str(), O_PATH | O_NOFOLLOW, kOneStep);
    if (child == -EXDEV) continue;   // a mount point: not this layer
    if (child == -ENOENT) continue;  // removed since it was listed
    const std::string path = inside == "/" ? "/" + name : inside + "/" + name;
    if (child < 0) return Status::io("open " + path + ": " + errno_text(-child));
    Fd guard(child);
    std::string entry;
    AURA_ASSIGN_OR_RETURN(entry, entry_of(child, upper, path, r));
    out[path] = entry;
    if (entry.starts_with("dir "))
      AURA_RETURN_IF_ERROR(walk(child, path, upper, r, out, depth + 1));
  }
  return Status::ok();
}

}  // namespace

Status read_layer(int dir, const std::string& inside, bool upper, LayerRead& r, LayerState& out) {
  return walk(dir, inside, upper, r, out, 0);
}

Result<std::string> read_entry(const std::string& path, LayerRead& r) {
  const int fd = ::open(path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::string(gate::kAbsent);
    return Status::io("open " + path + ": " + errno_text(errno));
  }
  Fd guard(fd);
  return entry_of(fd, false, path, r);
}

}  // namespace aura::inspect
