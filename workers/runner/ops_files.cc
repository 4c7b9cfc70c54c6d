// file.read, file.stat, dir.list, path.namei (probes); file.write, file.replace, file.chmod,
// file.chown (actions, each journaled before it changes anything).
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <type_traits>

#include "workers/runner/accounts.h"
#include "workers/runner/file_edit.h"
#include "workers/runner/journal.h"
#include "workers/runner/node_fs.h"
#include "workers/runner/op.h"

namespace aura::runner {
namespace {

constexpr size_t kMaxDirEntries = 65536;

// "type mode owner group": the columns every listing starts with.
std::string describe(const struct stat& st, const Accounts& accounts) {
  return std::string(type_name(st.st_mode)) + " " + mode_text(st.st_mode) + " " +
         accounts.user_name(st.st_uid) + " " + accounts.group_name(st.st_gid);
}

// " -> target" for a symlink (read at dir_fd/name), else "".
std::string link_suffix(const struct stat& st, int dir_fd, const char* name) {
  if (!S_ISLNK(st.st_mode)) return "";
  char buf[PATH_MAX];
  const ssize_t n = ::readlinkat(dir_fd, name, buf, sizeof buf);
  if (n < 0) return " -> ?";
  return " -> " + escape_name(std::string_view(buf, size_t(n)));
}

// The prefixes in `list` (one a line, each absolute and ending in '/'); none when absent.
std::vector<std::string_view> prefix_lines(std::optional<std::string_view> list) {
  std::vector<std::string_view> out;
  if (!list) return out;
  std::string_view rest = *list;
  while (!rest.empty()) {
    const size_t nl = std::min(rest.find('\n'), rest.size());
    if (nl > 0) out.push_back(rest.substr(0, nl));
    rest.remove_prefix(std::min(nl + 1, rest.size()));
  }
  return out;
}

// Whether `path` lies beneath `prefix` (a whole component at a time; "/" covers everything).
bool beneath(std::string_view path, std::string_view prefix) {
  if (prefix.empty() || prefix.back() != '/') return false;
  return path.size() > prefix.size() && path.starts_with(prefix);
}

// Why the place `path` really names (every symlink on the way followed) lies outside the
// call's bounds: the args "within" (allowed prefixes, one a line) and "without" (excluded ones,
// the folder itself too). Empty when it lies inside, or when the call states no bounds.
Result<std::string> out_of_bounds(const Args& args, const std::string& path, std::string* real) {
  const auto within = prefix_lines(args.opt_str("within"));
  const auto without = prefix_lines(args.opt_str("without"));
  if (within.empty() && without.empty()) return std::string();
  char* resolved = ::realpath(path.c_str(), nullptr);
  if (resolved == nullptr) return std::string(file_io::errno_text(errno));
  *real = resolved;
  std::free(resolved);
  for (std::string_view ex : without) {
    if (beneath(*real, ex) || *real == ex.substr(0, ex.size() - 1))
      return "it resolves to " + escape_name(*real) + ", under " + std::string(ex) +
             ", which this call may not read";
  }
  if (within.empty()) return std::string();
  for (std::string_view in : within)
    if (beneath(*real, in)) return std::string();
  std::string list;
  for (std::string_view in : within) list += (list.empty() ? "" : ", ") + std::string(in);
  return "it resolves to " + escape_name(*real) + ", outside " + list;
}

bool same_inode(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// The runner's own checks come first, before a byte is read: the target must be a regular
// file (symlinks followed) whose real place lies within the call's bounds; otherwise the call is
// refused and nothing is read. The file is then opened O_NONBLOCK|O_NOCTTY and must be the very
// inode that was checked.
Status file_read(const Args& args, const Context&, Output& out) {
  const std::string& path = args.str("path");
  AURA_RETURN_IF_ERROR(check_path("path", path));
  const std::string what = "read " + escape_name(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return refuse(out, what, file_io::errno_text(errno));
  if (!S_ISREG(st.st_mode)) {
    return refuse(out, what, "not a regular file (" + std::string(type_name(st.st_mode)) + ")");
  }
  std::string real;
  std::string outside;
  AURA_ASSIGN_OR_RETURN(outside, out_of_bounds(args, path, &real));
  if (!outside.empty()) return refuse(out, what, outside);
  struct stat real_st = st;
  if (!real.empty() && ::stat(real.c_str(), &real_st) != 0)
    return refuse(out, what, file_io::errno_text(errno));
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return refuse(out, what, file_io::errno_text(errno));
  file_io::Fd guard(fd);
  struct stat opened {};
  if (::fstat(fd, &opened) != 0) return errno_error(what, errno);
  if (!S_ISREG(opened.st_mode) || !same_inode(opened, st) || !same_inode(opened, real_st))
    return refuse(out, what, "it changed while it was checked");
  std::string bytes;
  AURA_ASSIGN_OR_RETURN(bytes, read_fd_bounded(fd, out.cap() + 1, what));
  if (bytes.size() > out.cap()) {
    bytes.resize(out.cap());
    out.mark_truncated();
  }
  out.append(bytes);
  return Status::ok();
}

Status file_stat(const Args& args, const Context&, Output& out) {
  const std::string& path = args.str("path");
  AURA_RETURN_IF_ERROR(check_path("path", path));
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno_error("lstat " + escape_name(path), errno);
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  out.line(describe(st, accounts) + " " + std::to_string(st.st_size) + " " + escape_name(path) +
           link_suffix(st, AT_FDCWD, path.c_str()));
  return Status::ok();
}

Status dir_list(const Args& args, const Context&, Output& out) {
  const std::string& path = args.str("path");
  AURA_RETURN_IF_ERROR(check_path("path", path));
  const std::string what = "list " + escape_name(path);
  std::string real;
  std::string outside;
  AURA_ASSIGN_OR_RETURN(outside, out_of_bounds(args, path, &real));
  if (!outside.empty()) return refuse(out, what, outside);
  // A folder that cannot be opened (missing, not a folder) is refused: nothing was listed.
  const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return refuse(out, what, err == ENOTDIR ? "not a folder" : file_io::errno_text(err));
  }
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    const int err = errno;
    ::close(fd);
    return errno_error(what, err);
  }
  std::unique_ptr<DIR, int (*)(DIR*)> guard(d, ::closedir);
  std::vector<std::string> names;
  errno = 0;
  while (dirent* de = ::readdir(d)) {
    const std::string_view name = de->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() == kMaxDirEntries) {
      out.mark_truncated();
      break;
    }
    names.emplace_back(name);
  }
  if (errno != 0) return errno_error(what, errno);
  std::sort(names.begin(), names.end());
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  for (const std::string& name : names) {
    struct stat st {};
    if (::fstatat(::dirfd(d), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone
    out.line(describe(st, accounts) + " " + std::to_string(st.st_size) + " " + escape_name(name) +
             link_suffix(st, ::dirfd(d), name.c_str()));
  }
  return Status::ok();
}

Status path_namei(const Args& args, const Context&, Output& out) {
  const std::string& path = args.str("path");
  AURA_RETURN_IF_ERROR(check_path("path", path));
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  std::string prefix = "/";
  std::string name = "/";
  size_t at = 0;
  while (true) {
    struct stat st {};
    if (::lstat(prefix.c_str(), &st) != 0) {
      out.line("error: " + escape_name(prefix) + " : " + file_io::errno_text(errno));
      return failure_in_output();
    }
    out.line(describe(st, accounts) + " " + escape_name(name) +
             link_suffix(st, AT_FDCWD, prefix.c_str()));
    // The next non-empty component.
    while (at < path.size() && path[at] == '/') ++at;
    if (at == path.size()) return Status::ok();
    const size_t end = std::min(path.find('/', at), path.size());
    name = path.substr(at, end - at);
    if (prefix.back() != '/') prefix += '/';
    prefix += name;
    at = end;
  }
}

Status file_write(const Args& args, const Context& ctx, Output& out) {
  std::optional<mode_t> mode;
  if (auto m = args.opt_str("mode")) AURA_ASSIGN_OR_RETURN(mode, parse_mode("mode", *m));
  const std::string& content = args.str("content");
  EditTarget t;
  AURA_ASSIGN_OR_RETURN(t, load_edit_target("path", args.str("path")));
  AURA_RETURN_IF_ERROR(commit_edit(ctx, t, content, mode));
  const mode_t final_mode = mode ? *mode : t.before.existed ? t.before.mode : 0644;
  out.line("wrote " + std::to_string(content.size()) + " bytes to " + escape_name(t.parent.path) +
           " mode " + mode_text(final_mode));
  return Status::ok();
}

// How many times `needle` starts in `hay`, overlapping occurrences included.
size_t occurrences(std::string_view hay, std::string_view needle) {
  size_t n = 0;
  for (size_t at = hay.find(needle); at != std::string_view::npos; at = hay.find(needle, at + 1))
    ++n;
  return n;
}

Status file_replace(const Args& args, const Context& ctx, Output& out) {
  const std::string& old_text = args.str("old");
  const std::string& new_text = args.str("new");
  if (old_text.empty()) return bad_arg("old", "must not be empty");
  EditTarget t;
  AURA_ASSIGN_OR_RETURN(t, load_edit_target("path", args.str("path")));
  const std::string what = "replace " + escape_name(t.parent.path);
  if (!t.before.existed) return errno_error(what, ENOENT);
  std::string bytes = *t.before.bytes;
  const size_t n = occurrences(bytes, old_text);
  if (n != 1) {
    return world_error(
        what, "the old text occurs " + std::to_string(n) + " times; it must occur exactly once");
  }
  bytes.replace(bytes.find(old_text), old_text.size(), new_text);
  AURA_RETURN_IF_ERROR(commit_edit(ctx, t, bytes, std::nullopt));
  out.line("replaced 1 occurrence in " + escape_name(t.parent.path));
  return Status::ok();
}

// The final component of `path` for a metadata change: it must exist and be a regular file
// or a folder (or, when `symlink_ok`, a symlink, which is then changed itself, not followed).
Result<ParentDir> metadata_target(std::string_view path, std::string_view verb, bool symlink_ok) {
  ParentDir p;
  AURA_ASSIGN_OR_RETURN(p, open_parent("path", path));
  const std::string what = std::string(verb) + " " + escape_name(p.path);
  struct stat st {};
  bool exists = false;
  AURA_RETURN_IF_ERROR(stat_final(p, &st, &exists));
  if (!exists) return errno_error(what, ENOENT);
  if (S_ISLNK(st.st_mode) && !symlink_ok) {
    return world_error(what, "is a symlink (the final component is never followed)");
  }
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
    return world_error(what,
                       "not a regular file or folder (" + std::string(type_name(st.st_mode)) + ")");
  }
  return p;
}

Status file_chmod(const Args& args, const Context& ctx, Output& out) {
  mode_t mode = 0;
  AURA_ASSIGN_OR_RETURN(mode, parse_mode("mode", args.str("mode")));
  ParentDir p;
  AURA_ASSIGN_OR_RETURN(p, metadata_target(args.str("path"), "chmod", false));
  JournalEntry before;
  AURA_ASSIGN_OR_RETURN(before, capture_entry(p));
  if (before.type == "symlink") {  // swapped in since metadata_target looked
    return world_error("chmod " + escape_name(p.path), "is a symlink");
  }
  AURA_RETURN_IF_ERROR(journal_change(ctx, before));
  // glibc does this through an O_PATH descriptor and refuses a symlink (EOPNOTSUPP).
  if (::fchmodat(p.fd(), p.name.c_str(), mode, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno_error("chmod " + escape_name(p.path), errno);
  }
  out.line("mode " + escape_name(p.path) + " " + mode_text(mode));
  return Status::ok();
}

// The id `entry` names, else a number given as such; kKeepId when nothing was given.
template <class Entry>
Result<uint32_t> resolve_id(std::optional<std::string_view> given, const Entry* entry,
                            std::string_view kind, const std::string& what) {
  if (!given) return kKeepId;
  if (entry != nullptr) {
    if constexpr (std::is_same_v<Entry, PasswdEntry>) return entry->uid;
    if constexpr (std::is_same_v<Entry, GroupEntry>) return entry->gid;
  }
  if (auto n = parse_id(*given)) return *n;
  return world_error(what, "no such " + std::string(kind) + " " + escape_name(*given));
}

Status file_chown(const Args& args, const Context& ctx, Output& out) {
  const auto user = args.opt_str("user");
  const auto group = args.opt_str("group");
  if (!user && !group) return bad_arg("user", "give user, group or both");
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  const std::string what = "chown " + escape_name(args.str("path"));
  uint32_t uid = kKeepId, gid = kKeepId;
  AURA_ASSIGN_OR_RETURN(uid, resolve_id(user, accounts.find_user(user.value_or("")), "user", what));
  AURA_ASSIGN_OR_RETURN(gid,
                        resolve_id(group, accounts.find_group(group.value_or("")), "group", what));
  ParentDir p;
  AURA_ASSIGN_OR_RETURN(p, metadata_target(args.str("path"), "chown", true));
  JournalEntry before;
  AURA_ASSIGN_OR_RETURN(before, capture_entry(p));
  AURA_RETURN_IF_ERROR(journal_change(ctx, before));
  if (::fchownat(p.fd(), p.name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno_error(what, errno);
  }
  const uid_t new_uid = uid == kKeepId ? before.uid : uid;
  const gid_t new_gid = gid == kKeepId ? before.gid : gid;
  out.line("owner " + escape_name(p.path) + " " + accounts.user_name(new_uid) + ":" +
           accounts.group_name(new_gid));
  return Status::ok();
}

}  // namespace

std::vector<OpSpec> file_ops() {
  using C = OpClass;
  return {
      {"file.read", C::kProbe, {{"path"}, {"within", false}, {"without", false}}, file_read},
      {"file.stat", C::kProbe, {{"path"}}, file_stat},
      {"dir.list", C::kProbe, {{"path"}, {"within", false}, {"without", false}}, dir_list},
      {"path.namei", C::kProbe, {{"path"}}, path_namei},
      {"file.write", C::kAction, {{"path"}, {"content"}, {"mode", false}}, file_write},
      {"file.replace", C::kAction, {{"path"}, {"old"}, {"new"}}, file_replace},
      {"file.chmod", C::kAction, {{"path"}, {"mode"}}, file_chmod},
      {"file.chown", C::kAction, {{"path"}, {"user", false}, {"group", false}}, file_chown},
  };
}

}  // namespace aura::runner
