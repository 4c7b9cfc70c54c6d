#include "workers/inspect/fingerprint.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"

namespace aura::inspect {
namespace {

using file_io::errno_text;
using file_io::Fd;

constexpr uint64_t kBeneath = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS;

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

class TreeWalk {
 public:
  TreeWalk(Fingerprint& fp, const NodeView& view, std::string_view prefix, size_t max_entries)
      : fp_(fp), view_(view), prefix_(prefix), max_entries_(max_entries) {}

  // Adds the entry for O_PATH descriptor `fd` (`where` names it in the node) and, for a folder,
  // everything below it.
  Status visit(int fd, const std::string& rel, const std::string& where, size_t depth) {
    if (++entries_ > max_entries_) {
      return Status::failed_precondition(where + ": more than " + std::to_string(max_entries_) +
                                         " entries under the fingerprinted tree");
    }
    struct stat st;
    if (::fstat(fd, &st) != 0) return Status::io("fstat " + where + ": " + errno_text(errno));
    const FileInfo info = view_.file_info(st);
    char head[64];
    std::snprintf(head, sizeof head, " %04o %u %u", info.mode, info.uid, info.gid);
    std::string value = std::string(type_name(info.type)) + head;
    if (info.type == FileInfo::Type::kFile) {
      std::string digest;
      AURA_ASSIGN_OR_RETURN(digest, hash_regular_for_read(fd, where, kMaxHashedFileBytes));
      value += " " + digest;
    } else if (info.type == FileInfo::Type::kSymlink) {
      char target[4097];
      const ssize_t n = ::readlinkat(fd, "", target, sizeof target);
      if (n < 0) return Status::io("readlink " + where + ": " + errno_text(errno));
      if (size_t(n) == sizeof target)
        return Status::failed_precondition(where + ": target too long");
      value += " " + std::string(target, size_t(n));
    }
    AURA_RETURN_IF_ERROR(fp_.add(prefix_ + ":" + rel, value));
    if (info.type != FileInfo::Type::kDir) return Status::ok();
    if (depth >= kMaxTreeDepth)
      return Status::failed_precondition(where + ": deeper than " + std::to_string(kMaxTreeDepth) +
                                         " levels");
    std::vector<std::string> names;
    AURA_ASSIGN_OR_RETURN(names, list(fd, where));
    for (const std::string& name : names) {
      const int child = openat2_fd(fd, name.c_str(), O_PATH | O_NOFOLLOW, kBeneath);
      if (child == -ENOENT) continue;  // removed since it was listed
      if (child < 0) return Status::io("open " + where + "/" + name + ": " + errno_text(-child));
      Fd guard(child);
      const std::string child_where = where == "/" ? "/" + name : where + "/" + name;
      AURA_RETURN_IF_ERROR(
          visit(child, rel == "." ? name : rel + "/" + name, child_where, depth + 1));
    }
    return Status::ok();
  }

 private:
  // The names in folder `path_fd`, sorted.
  Result<std::vector<std::string>> list(int path_fd, const std::string& where) {
    const int dir_fd = ::openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return Status::io("open folder " + where + ": " + errno_text(errno));
    Fd guard(dir_fd);
    // Bounded by what is left of max_entries, so one huge folder fails before it is read whole.
    auto names = dir_names(dir_fd, max_entries_ - std::min(max_entries_, entries_), where);
    if (!names.ok() && names.status().code() == ErrorCode::kFailedPrecondition)
      return Status::failed_precondition(where + ": more than " + std::to_string(max_entries_) +
                                         " entries under the fingerprinted tree");
    return names;
  }

  Fingerprint& fp_;
  const NodeView& view_;
  std::string prefix_;
  size_t max_entries_;
  size_t entries_ = 0;
};

}  // namespace

Status Fingerprint::add(std::string_view key, std::string_view value) {
  const auto [it, inserted] = entries_.emplace(std::string(key), std::string(value));
  if (inserted) return Status::ok();
  if (!has_duplicate_) {
    has_duplicate_ = true;
    duplicate_ = std::string(key);
  }
  return Status::invalid("fingerprint key '" + std::string(key) + "' added twice");
}

Result<std::string> Fingerprint::hex() const {
  if (has_duplicate_) return Status::invalid("fingerprint key '" + duplicate_ + "' added twice");
  Sha256 h;
  std::string frame;
  for (const auto& [key, value] : entries_) {  // std::map: sorted by key bytes
    frame.clear();
    put_be(frame, key.size(), 4);
    h.update(frame).update(key);
    frame.clear();
    put_be(frame, value.size(), 8);
    h.update(frame).update(value);
  }
  return to_hex(h.finish());
}

Status add_tree(Fingerprint& fp, const NodeView& view, std::string_view prefix,
                std::string_view path, size_t max_entries) {
  int fd;
  AURA_ASSIGN_OR_RETURN(fd, view.open_path(path, false));
  Fd guard(fd);
  TreeWalk walk(fp, view, prefix, max_entries);
  return walk.visit(fd, ".", std::string(path), 0);
}

}  // namespace aura::inspect
