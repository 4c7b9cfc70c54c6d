#include "workers/runner/journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <set>

namespace aura::runner {
namespace {

using journal::entry_name;
using journal::parse_entry_name;

Status write_new_file(int dir_fd, const std::string& name, std::string_view bytes,
                      std::string_view what) {
  const int fd =
      ::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return errno_error(std::string(what) + " " + name, errno);
  file_io::Fd guard(fd);
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return errno_error(std::string(what) + " " + name, "write", errno);
    done += size_t(n);
  }
  if (::fsync(fd) != 0) return errno_error(std::string(what) + " " + name, "fsync", errno);
  return Status::ok();
}

// A journal file (never a symlink, FIFO or device) of at most `limit` bytes.
Result<std::string> read_entry_file(int dir_fd, const std::string& name, size_t limit) {
  const std::string what = "journal " + name;
  const int fd = ::openat(dir_fd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno_error(what, errno);
  file_io::Fd guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return errno_error(what, errno);
  if (!S_ISREG(st.st_mode)) return world_error(what, "not a regular file");
  std::string bytes;
  AURA_ASSIGN_OR_RETURN(bytes, read_fd_bounded(fd, limit + 1, what));
  if (bytes.size() > limit) return world_error(what, "larger than " + std::to_string(limit));
  return bytes;
}

Status make_dirs(const std::string& dir) {
  for (size_t at = dir.find('/', 1); at != std::string::npos; at = dir.find('/', at + 1)) {
    const std::string prefix = dir.substr(0, at);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return errno_error("journal: mkdir " + prefix, errno);
    }
  }
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    return errno_error("journal: mkdir " + dir, errno);
  }
  return Status::ok();
}

}  // namespace

Result<JournalEntry> capture_entry(const ParentDir& p) {
  const std::string what = "journal " + escape_name(p.path);
  struct stat st {};
  bool exists = false;
  AURA_RETURN_IF_ERROR(stat_final(p, &st, &exists));
  JournalEntry e;
  e.path = p.path;
  if (!exists) return e;
  e.existed = true;
  e.mode = st.st_mode & 07777;
  e.uid = st.st_uid;
  e.gid = st.st_gid;
  if (S_ISDIR(st.st_mode)) {
    e.type = "dir";
  } else if (S_ISLNK(st.st_mode)) {
    e.type = "symlink";
  } else if (S_ISREG(st.st_mode)) {
    const int fd =
        ::openat(p.fd(), p.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return errno_error(what, errno);
    file_io::Fd guard(fd);
    struct stat now {};
    if (::fstat(fd, &now) != 0) return errno_error(what, errno);
    if (now.st_ino != st.st_ino || now.st_dev != st.st_dev) {
      return world_error(what, "replaced while it was read");
    }
    std::string bytes;
    AURA_ASSIGN_OR_RETURN(bytes, read_fd_bounded(fd, kMaxJournalFileBytes + 1, what));
    if (bytes.size() > kMaxJournalFileBytes) {
      return world_error(what, "larger than " + std::to_string(kMaxJournalFileBytes) +
                                   " bytes, too large to journal");
    }
    e.bytes = std::move(bytes);
  } else {
    return world_error(what, "a " + std::string(type_name(st.st_mode)) + " is not journaled");
  }
  return e;
}

Result<std::unique_ptr<Journal>> Journal::open(const std::string& dir) {
  if (dir.empty() || dir.front() != '/') return world_error("journal " + dir, "not absolute");
  AURA_RETURN_IF_ERROR(make_dirs(dir));
  struct stat st {};
  if (::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return world_error("journal " + dir, "is a symlink (never followed)");
  }
  // O_NOFOLLOW as well: a symlink swapped in after the lstat is refused all the same.
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return errno_error("journal " + dir, errno);
  return std::unique_ptr<Journal>(new Journal(dir, fd));
}

namespace {

// Every NNNNNN.json and NNNNNN.data in the journal folder.
Result<std::vector<std::pair<uint64_t, std::string>>> list_entries(int dir_fd) {
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno_error("journal: list", errno);
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    const int err = errno;
    ::close(fd);
    return errno_error("journal: list", err);
  }
  std::vector<std::pair<uint64_t, std::string>> out;
  while (dirent* de = ::readdir(d)) {
    if (auto e = parse_entry_name(de->d_name)) out.push_back(*e);
  }
  ::closedir(d);
  return out;
}

}  // namespace

Result<uint64_t> Journal::next_seq() const {
  std::vector<std::pair<uint64_t, std::string>> all;
  AURA_ASSIGN_OR_RETURN(all, list_entries(fd_.get()));
  uint64_t max = 0;
  for (const auto& [seq, ext] : all) max = std::max(max, seq);
  if (max >= kMaxJournalEntries) return world_error("journal " + dir_, "full");
  return max + 1;
}

Status Journal::record(const JournalEntry& e) {
  uint64_t seq = 0;
  AURA_ASSIGN_OR_RETURN(seq, next_seq());
  if (e.bytes) {
    AURA_RETURN_IF_ERROR(write_new_file(fd_.get(), entry_name(seq, "data"), *e.bytes, "journal"));
  }
  AURA_RETURN_IF_ERROR(
      write_new_file(fd_.get(), entry_name(seq, "json"), journal::encode_entry(e), "journal"));
  if (::fsync(fd_.get()) != 0) return errno_error("journal " + dir_, "fsync", errno);
  return Status::ok();
}

Result<JournalEntry> Journal::load(uint64_t seq) const {
  const std::string name = entry_name(seq, "json");
  std::string text;
  AURA_ASSIGN_OR_RETURN(text, read_entry_file(fd_.get(), name, journal::kMaxEntryJsonBytes));
  auto decoded = journal::decode_entry(text);
  if (!decoded.ok()) return world_error("journal " + name, decoded.status().message());
  JournalEntry e = std::move(decoded->entry);
  if (decoded->data_bytes) {
    std::string data;
    AURA_ASSIGN_OR_RETURN(
        data, read_entry_file(fd_.get(), entry_name(seq, "data"), kMaxJournalFileBytes));
    if (data.size() != *decoded->data_bytes)
      return world_error("journal " + name, "its data file has the wrong size");
    e.bytes = std::move(data);
  }
  return e;
}

Status Journal::restore(const JournalEntry& e, Output& out) {
  auto parent = open_parent("path", e.path);
  if (!parent.ok()) return world_error("undo " + escape_name(e.path), parent.status().message());
  const ParentDir& p = *parent;
  const std::string what = "undo " + escape_name(e.path);
  const std::string owner = std::to_string(e.uid) + ":" + std::to_string(e.gid);
  struct stat st {};
  bool exists = false;
  AURA_RETURN_IF_ERROR(stat_final(p, &st, &exists));
  if (!e.existed) {
    if (!exists) {
      out.line("absent " + escape_name(e.path));
      return Status::ok();
    }
    if (S_ISDIR(st.st_mode)) return world_error(what, "is now a folder; not removed");
    if (::unlinkat(p.fd(), p.name.c_str(), 0) != 0) return errno_error(what, "unlink", errno);
    out.line("removed " + escape_name(e.path));
    return Status::ok();
  }
  // A file whose bytes are unchanged (a chmod or chown undone) keeps its inode and hard links.
  bool in_place = false;
  if (e.type == "file" && exists && S_ISREG(st.st_mode)) {
    auto now = capture_entry(p);
    in_place = now.ok() && now->bytes == e.bytes;
  }
  if (e.type == "file" && !in_place) {
    AURA_RETURN_IF_ERROR(replace_file(p, *e.bytes, e.mode, e.uid, e.gid));
    out.line("restored file " + escape_name(e.path) + " mode " + mode_text(e.mode) + " owner " +
             owner);
    return Status::ok();
  }
  if (!exists) return world_error(what, "no longer exists");
  const bool is_dir = S_ISDIR(st.st_mode);
  if ((e.type == "dir") != is_dir || (e.type == "symlink") != S_ISLNK(st.st_mode)) {
    return world_error(what,
                       "is now a " + std::string(type_name(st.st_mode)) + ", was a " + e.type);
  }
  if (::fchownat(p.fd(), p.name.c_str(), e.uid, e.gid, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno_error(what, "chown", errno);
  }
  if (e.type == "symlink") {
    out.line("restored symlink " + escape_name(e.path) + " owner " + owner);
    return Status::ok();
  }
  if (::fchmodat(p.fd(), p.name.c_str(), e.mode, AT_SYMLINK_NOFOLLOW) != 0) {
    return errno_error(what, "chmod", errno);
  }
  out.line("restored " + e.type + " " + escape_name(e.path) + " mode " + mode_text(e.mode) +
           " owner " + owner);
  return Status::ok();
}

Status Journal::remove_entry(uint64_t seq) {
  // The entry file first: a data file without one is an orphan the next undo removes.
  for (std::string_view ext : {"json", "data"}) {
    const std::string name = entry_name(seq, ext);
    if (::unlinkat(fd_.get(), name.c_str(), 0) != 0 && errno != ENOENT) {
      return errno_error("journal: remove " + name, errno);
    }
  }
  if (::fsync(fd_.get()) != 0) return errno_error("journal " + dir_, "fsync", errno);
  return Status::ok();
}

Status Journal::undo(Output& out) {
  std::vector<std::pair<uint64_t, std::string>> all;
  AURA_ASSIGN_OR_RETURN(all, list_entries(fd_.get()));
  std::set<uint64_t, std::greater<>> entries, orphans;
  for (const auto& [seq, ext] : all) (ext == "json" ? entries : orphans).insert(seq);
  for (uint64_t seq : entries) {
    orphans.erase(seq);
    JournalEntry e;
    AURA_ASSIGN_OR_RETURN(e, load(seq));
    AURA_RETURN_IF_ERROR(restore(e, out));
    AURA_RETURN_IF_ERROR(remove_entry(seq));
  }
  for (uint64_t seq : orphans) AURA_RETURN_IF_ERROR(remove_entry(seq));
  return Status::ok();
}

}  // namespace aura::runner
