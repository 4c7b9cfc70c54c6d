#include "workers/nodes/stage.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sodium.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <set>
#include <span>
#include <vector>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"
#include "engine/package/package.h"
#include "engine/package/package_format.h"

namespace aura::workers::nodes {
namespace {

namespace fs = std::filesystem;
using file_io::errno_text;
using file_io::Fd;

// One name (or a relative path) beneath a folder already open: no symlink of any kind, no `..`
// out of it, no mount crossed.
constexpr uint64_t kBeneath =
    RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
constexpr size_t kMaxDepth = 64;
constexpr size_t kMaxEntries = 2 * package_format::kMaxFiles;  // files and folders
constexpr size_t kCopyChunk = 64 << 10;
constexpr size_t kKeyHex = 24;
constexpr size_t kMaxReadableName = 96;
// An entry being made, renamed into place when complete (distinct from the ".tmp-" copies of
// earlier labs, which this code never touches).
constexpr std::string_view kNewPrefix = ".new-";

std::function<void(std::string_view)>& open_hook() {
  static std::function<void(std::string_view)> hook;
  return hook;
}

int openat2_beneath(int dir_fd, const char* path, uint64_t flags) {
  struct open_how how {};
  how.flags = flags;
  how.resolve = kBeneath;
  for (int attempt = 0;; ++attempt) {
    const long rc = ::syscall(SYS_openat2, dir_fd, path, &how, sizeof how);
    if (rc >= 0) return static_cast<int>(rc);
    // EAGAIN: a rename raced the walk; retrying is the documented answer.
    if (errno == EINTR || (errno == EAGAIN && attempt < 16)) continue;
    return -1;
  }
}

std::string in_quotes(std::string_view path) { return "\"" + std::string(path) + "\""; }

Status open_error(std::string_view shown, int err) {
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Status::not_found(in_quotes(shown) + " is missing");
    case ELOOP:
      return Status::invalid("a symlink on the path to " + in_quotes(shown) +
                             " is refused (staging follows no link)");
    case EXDEV:
      return Status::invalid(in_quotes(shown) + " crosses a mount point");
    case ENOSYS:
      return Status::unavailable("openat2() is not available on this kernel");
    default:
      return Status::io("open " + in_quotes(shown) + ": " + errno_text(err));
  }
}

const char* type_name(mode_t mode) {
  if (S_ISLNK(mode)) return "symlink";
  if (S_ISFIFO(mode)) return "FIFO";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  if (S_ISDIR(mode)) return "folder";
  return "file";
}

Status not_file_or_folder(std::string_view shown, mode_t mode) {
  return Status::invalid(std::string(type_name(mode)) + " " + in_quotes(shown) +
                         " is refused: staging copies folders and regular files only, and "
                         "follows no link");
}

// Opens `path` beneath `dir_fd` as O_PATH without following a link at all (a final symlink
// yields the link itself), and fstat()s it: nothing is opened for I/O yet.
Result<int> open_path(int dir_fd, const std::string& path, std::string_view shown,
                      struct stat* st) {
  const int raw = openat2_beneath(dir_fd, path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (raw < 0) return open_error(shown, errno);
  if (::fstat(raw, st) != 0) {
    const int err = errno;
    ::close(raw);
    return Status::io("fstat " + in_quotes(shown) + ": " + errno_text(err));
  }
  return raw;
}

// The regular file behind O_PATH descriptor `path_fd` opened for reading: the very inode that
// was checked (no path is resolved again), O_NONBLOCK|O_NOCTTY.
Result<int> reopen_regular(int path_fd, const struct stat& st, std::string_view shown) {
  const std::string proc = "/proc/self/fd/" + std::to_string(path_fd);
  const int fd = ::open(proc.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Status::io("open " + in_quotes(shown) + ": " + errno_text(errno));
  struct stat now {};
  if (::fstat(fd, &now) != 0 || !S_ISREG(now.st_mode) || now.st_dev != st.st_dev ||
      now.st_ino != st.st_ino) {
    ::close(fd);
    return Status::invalid(in_quotes(shown) + " changed while it was staged");
  }
  return fd;
}

// Copies `src` to `dst`, hashing the bytes as they pass; at most `budget` bytes in all.
Result<Digest> copy_hashing(int src, int dst, uint64_t& budget, std::string_view shown) {
  std::vector<char> buf(kCopyChunk);
  Sha256 hash;
  for (;;) {
    const ssize_t n = ::read(src, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io("read " + in_quotes(shown) + ": " + errno_text(errno));
    if (n == 0) break;
    if (static_cast<uint64_t>(n) > budget)
      return Status::invalid("staging " + in_quotes(shown) + ": more than " +
                             std::to_string(package_format::kMaxTotalBytes) + " bytes in all");
    budget -= static_cast<uint64_t>(n);
    hash.update(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(buf.data()),
                                         static_cast<size_t>(n)));
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(dst, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0)
        return Status::io("write the copy of " + in_quotes(shown) + ": " + errno_text(errno));
      done += w;
    }
  }
  return hash.finish();
}

// The names in the folder behind `dir_fd` (O_PATH is enough), sorted.
Result<std::vector<std::string>> names_in(int dir_fd, std::string_view shown) {
  const int fd = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Status::io("open folder " + in_quotes(shown) + ": " + errno_text(errno));
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return Status::io("list " + in_quotes(shown) + ": " + errno_text(errno));
  }
  std::vector<std::string> names;
  errno = 0;
  while (const dirent* e = ::readdir(dir)) {
    const std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    if (names.size() >= kMaxEntries) {
      ::closedir(dir);
      return Status::invalid(in_quotes(shown) + ": more than " + std::to_string(kMaxEntries) +
                             " entries");
    }
    names.emplace_back(name);
  }
  const int err = errno;
  ::closedir(dir);
  if (err != 0) return Status::io("list " + in_quotes(shown) + ": " + errno_text(err));
  std::sort(names.begin(), names.end());
  return names;
}

// A layer being copied: what SHA256SUMS lists, what was found, the bounds left.
struct LayerCopy {
  const std::map<std::string, Digest>* sums = nullptr;
  std::set<std::string> seen;
  uint64_t budget = package_format::kMaxTotalBytes;
  size_t entries = 0;
};

Status copy_file(int path_fd, const struct stat& st, int dst_dir, const std::string& name,
                 const std::string& path, LayerCopy& copy) {
  const auto listed = copy.sums->find(path);
  if (listed == copy.sums->end())
    return Status::invalid("extra file " + in_quotes(path) + " (not in SHA256SUMS)");
  int raw;
  AURA_ASSIGN_OR_RETURN(raw, reopen_regular(path_fd, st, path));
  Fd src(raw);
  const int out =
      ::openat(dst_dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0)
    return Status::io("create the copy of " + in_quotes(path) + ": " + errno_text(errno));
  Fd dst(out);
  Digest got{};
  AURA_ASSIGN_OR_RETURN(got, copy_hashing(src.get(), dst.get(), copy.budget, path));
  if (got != listed->second) {
    return Status::corruption("changed file " + in_quotes(path) + ": its SHA-256 is " +
                              to_hex(got) + ", SHA256SUMS says " + to_hex(listed->second));
  }
  if (::fchmod(dst.get(), (st.st_mode & S_IXUSR) != 0 ? 0755 : 0644) != 0)
    return Status::io("chmod the copy of " + in_quotes(path) + ": " + errno_text(errno));
  copy.seen.insert(path);
  return Status::ok();
}

// Copies the folder behind O_PATH descriptor `src_dir` (package path `rel`) into `dst_dir`.
Status copy_tree(int src_dir, int dst_dir, const std::string& rel, size_t depth, LayerCopy& copy) {
  if (depth > kMaxDepth)
    return Status::invalid(in_quotes(rel) + ": folders nested deeper than " +
                           std::to_string(kMaxDepth));
  std::vector<std::string> names;
  AURA_ASSIGN_OR_RETURN(names, names_in(src_dir, rel));
  for (const std::string& name : names) {
    const std::string path = rel + "/" + name;
    if (!is_safe_package_path(path)) return Status::invalid("unsafe path " + in_quotes(path));
    if (++copy.entries > kMaxEntries)
      return Status::invalid("more than " + std::to_string(kMaxEntries) + " entries");
    if (const auto& hook = open_hook()) hook(path);
    struct stat st {};
    int raw;
    AURA_ASSIGN_OR_RETURN(raw, open_path(src_dir, name, path, &st));
    Fd entry(raw);
    if (S_ISREG(st.st_mode)) {
      AURA_RETURN_IF_ERROR(copy_file(entry.get(), st, dst_dir, name, path, copy));
    } else if (S_ISDIR(st.st_mode)) {
      if (::mkdirat(dst_dir, name.c_str(), 0700) != 0)
        return Status::io("mkdir the copy of " + in_quotes(path) + ": " + errno_text(errno));
      const int sub =
          ::openat(dst_dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0)
        return Status::io("open the copy of " + in_quotes(path) + ": " + errno_text(errno));
      Fd dst(sub);
      if (::fchmod(dst.get(), 0755) != 0)
        return Status::io("chmod the copy of " + in_quotes(path) + ": " + errno_text(errno));
      AURA_RETURN_IF_ERROR(copy_tree(entry.get(), dst.get(), path, depth + 1, copy));
    } else {
      return not_file_or_folder(path, st.st_mode);
    }
  }
  return Status::ok();
}

// SHA256SUMS of the package behind `pkg_fd`, parsed strictly (package path -> digest), and the
// SHA-256 of its bytes.
struct Sums {
  std::map<std::string, Digest> files;
  Digest digest{};
};
Result<Sums> read_sums(int pkg_fd) {
  const std::string name(package_format::kSumsFile);
  struct stat st {};
  auto opened = open_path(pkg_fd, name, name, &st);
  if (!opened.ok()) {
    if (opened.status().code() == ErrorCode::kNotFound)
      return Status::not_found("SHA256SUMS is missing: the package is not signed");
    return opened.status();
  }
  Fd path_fd(*opened);
  if (!S_ISREG(st.st_mode)) return not_file_or_folder(name, st.st_mode);
  if (static_cast<uint64_t>(st.st_size) > package_format::kMaxSumsBytes)
    return Status::invalid("SHA256SUMS is larger than " +
                           std::to_string(package_format::kMaxSumsBytes) + " bytes");
  int raw;
  AURA_ASSIGN_OR_RETURN(raw, reopen_regular(path_fd.get(), st, name));
  Fd fd(raw);
  std::string text;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io("read SHA256SUMS: " + errno_text(errno));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > package_format::kMaxSumsBytes)
      return Status::invalid("SHA256SUMS grew while it was read");
  }
  std::vector<PackageFile> files;
  AURA_ASSIGN_OR_RETURN(files, parse_sha256sums(text));
  Sums sums;
  for (const PackageFile& f : files) sums.files.emplace(f.path, f.sha256);
  sums.digest = sha256(text);
  return sums;
}

// [A-Za-z0-9._+@-] of `text`, others as '_', '/' as '.', at most kMaxReadableName bytes.
std::string readable(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxReadableName)) {
    if (c == '/') {
      out += '.';
    } else if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '+' ||
               c == '@' || c == '-') {
      out += c;
    } else {
      out += '_';
    }
  }
  return out;
}

std::string random_hex(size_t bytes) {
  std::vector<uint8_t> raw(bytes);
  randombytes_buf(raw.data(), raw.size());
  return to_hex(std::span<const uint8_t>(raw.data(), raw.size()));
}

// /run/aura-stage as a root-owned 0711 folder.
Status prepare_root() {
  if (sodium_init() < 0) return Status::unavailable("libsodium failed to initialise");
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(kStageRoot, 0711));
  struct stat st {};
  if (::lstat(kStageRoot, &st) != 0 || !S_ISDIR(st.st_mode))
    return Status::io(std::string(kStageRoot) + " is not a folder");
  if (::chmod(kStageRoot, 0711) != 0)
    return Status::io(std::string("chmod ") + kStageRoot + ": " + errno_text(errno));
  return Status::ok();
}

// Holds the flock of /run/aura-stage/.lock for its lifetime (one open file description per
// holder, so threads of one process exclude each other too).
class StageLock {
 public:
  StageLock() {
    const std::string file = std::string(kStageRoot) + "/.lock";
    fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd_ < 0) {
      status_ = Status::io("open " + file + ": " + errno_text(errno));
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      status_ = Status::io("flock " + file + ": " + errno_text(errno));
      break;
    }
  }
  ~StageLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  StageLock(const StageLock&) = delete;
  StageLock& operator=(const StageLock&) = delete;
  const Status& status() const { return status_; }

 private:
  int fd_ = -1;
  Status status_;
};

// An entry of this layout (0711, data/ and users/ folders); anything else is left alone.
bool is_entry(const fs::path& entry) {
  struct stat st {};
  if (::lstat(entry.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 07777) != 0711)
    return false;
  for (const char* sub : {"data", "users"}) {
    if (::lstat((entry / sub).c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return false;
  }
  return true;
}

bool is_empty_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::is_empty(dir, ec) && !ec;
}

// REQUIRES: the stage lock is held.
Status sweep_locked() {
  std::error_code ec;
  Status first = Status::ok();
  std::vector<fs::path> doomed;
  for (const auto& e : fs::directory_iterator(kStageRoot, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with(kNewPrefix)) {
      doomed.push_back(e.path());  // the lock is ours: nobody is filling it any more
      continue;
    }
    if (is_entry(e.path()) && is_empty_dir(e.path() / "users")) doomed.push_back(e.path());
  }
  if (ec && ec != std::errc::no_such_file_or_directory)
    return Status::io(std::string("list ") + kStageRoot + ": " + ec.message());
  for (const fs::path& p : doomed) {
    std::error_code rm;
    fs::remove_all(p, rm);
    if (rm && first.is_ok()) first = Status::io("remove " + p.string() + ": " + rm.message());
  }
  return first;
}

// Under the stage lock: entry `name` made by `fill` (given its data/ folder) unless it exists,
// then this world's marker recorded and made. Returns the entry's data/ (and `inner` in it).
Result<std::string> claim(const std::string& name, const std::string& inner, const StageUse& use,
                          const std::function<Status(int data_fd)>& fill) {
  if (use.ledger == nullptr || use.run_id.empty() || use.run_id.size() > 64 ||
      !std::all_of(use.run_id.begin(), use.run_id.end(),
                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z'); }))
    return Status::invalid("staging needs the world's ledger and a run id of [0-9a-z]");
  AURA_RETURN_IF_ERROR(prepare_root());
  StageLock lock;
  AURA_RETURN_IF_ERROR(lock.status());
  AURA_RETURN_IF_ERROR(sweep_locked());
  const fs::path entry = fs::path(kStageRoot) / name;
  struct stat st {};
  if (!is_entry(entry)) {
    if (::lstat(entry.c_str(), &st) == 0)
      return Status::failed_precondition(entry.string() + " exists but is not a stage entry");
    const fs::path tmp = fs::path(kStageRoot) / (std::string(kNewPrefix) + random_hex(8));
    auto made = [&]() -> Status {
      if (::mkdir(tmp.c_str(), 0700) != 0)
        return Status::io("mkdir " + tmp.string() + ": " + errno_text(errno));
      const fs::path data = tmp / "data";
      if (::mkdir(data.c_str(), 0700) != 0)
        return Status::io("mkdir " + data.string() + ": " + errno_text(errno));
      const int raw = ::open(data.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (raw < 0) return Status::io("open " + data.string() + ": " + errno_text(errno));
      Fd data_fd(raw);
      AURA_RETURN_IF_ERROR(fill(data_fd.get()));
      if (::fchmod(data_fd.get(), 0755) != 0)
        return Status::io("chmod " + data.string() + ": " + errno_text(errno));
      if (::mkdir((tmp / "users").c_str(), 0700) != 0)
        return Status::io("mkdir " + (tmp / "users").string() + ": " + errno_text(errno));
      if (::chmod(tmp.c_str(), 0711) != 0)
        return Status::io("chmod " + tmp.string() + ": " + errno_text(errno));
      if (::rename(tmp.c_str(), entry.c_str()) != 0)
        return Status::io("rename " + tmp.string() + " to " + entry.string() + ": " +
                          errno_text(errno));
      return Status::ok();
    }();
    if (!made.is_ok()) {
      std::error_code ignored;
      fs::remove_all(tmp, ignored);
      return made;
    }
  }
  // Recorded before it is made; a marker already there was recorded when it was made.
  const fs::path marker = entry / "users" / use.run_id;
  if (::lstat(marker.c_str(), &st) != 0) {
    AURA_RETURN_IF_ERROR(use.ledger->record(use.run_id, sandbox::ResourceKind::kDir, marker));
    if (::mkdir(marker.c_str(), 0700) != 0 && errno != EEXIST)
      return Status::io("mkdir " + marker.string() + ": " + errno_text(errno));
  }
  const fs::path data = entry / "data";
  return inner.empty() ? data.string() : (data / inner).string();
}

bool is_marker(const fs::path& path) {
  const fs::path users = path.parent_path();
  return users.filename() == "users" && users.parent_path().parent_path() == kStageRoot &&
         !path.filename().empty();
}

bool others_can_reach(const fs::path& path, const struct stat& st) {
  for (fs::path dir = path.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) != 0 || (ds.st_mode & S_IXOTH) == 0) return false;
    if (dir == dir.root_path()) break;
  }
  return (st.st_mode & S_IROTH) != 0;
}

}  // namespace

Result<std::map<std::string, std::string>> stage_layers(const fs::path& package_dir,
                                                        const std::vector<std::string>& layers,
                                                        const StageUse& use,
                                                        std::string* sums_sha256) {
  const std::string where = "package " + package_dir.string();
  const int raw = ::open(package_dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (raw < 0) return Status::not_found(where + ": open: " + errno_text(errno));
  Fd pkg(raw);
  std::error_code ec;
  const fs::path real = fs::read_symlink("/proc/self/fd/" + std::to_string(pkg.get()), ec);
  if (ec) return Status::io(where + ": its real path: " + ec.message());
  auto read = read_sums(pkg.get());
  if (!read.ok()) return read.status().with_context(where);
  if (sums_sha256 != nullptr) *sums_sha256 = to_hex(read->digest);
  const std::map<std::string, Digest>* sums = &read->files;

  std::map<std::string, std::string> out;
  for (const std::string& layer : layers) {
    if (out.contains(layer)) continue;
    if (!is_safe_package_path(layer))
      return Status::invalid(where + ": layer " + in_quotes(layer) + " is not a safe package path");
    // The key: this package folder and what SHA256SUMS says of the layer's files.
    const std::string prefix = layer + "/";
    std::string listed = "aura-stage layer 1\n" + real.string() + "\n" + layer + "\n";
    for (auto it = sums->lower_bound(prefix); it != sums->end() && it->first.starts_with(prefix);
         ++it)
      listed += to_hex(it->second) + "  " + it->first + "\n";
    const std::string key = to_hex(sha256(listed)).substr(0, kKeyHex);
    const std::string name = readable(real.filename().string() + "/" + layer) + "-" + key;

    auto fill = [&](int data_fd) -> Status {
      struct stat st {};
      int top;
      AURA_ASSIGN_OR_RETURN(top, open_path(pkg.get(), layer, layer, &st));
      Fd top_fd(top);
      if (!S_ISDIR(st.st_mode)) return not_file_or_folder(layer, st.st_mode);
      LayerCopy copy;
      copy.sums = &*sums;
      AURA_RETURN_IF_ERROR(copy_tree(top_fd.get(), data_fd, layer, 0, copy));
      for (auto it = sums->lower_bound(prefix); it != sums->end() && it->first.starts_with(prefix);
           ++it) {
        if (!copy.seen.contains(it->first))
          return Status::not_found("missing file " + in_quotes(it->first) +
                                   " (listed in SHA256SUMS)");
      }
      return Status::ok();
    };
    auto staged = claim(name, "", use, fill);
    if (!staged.ok()) return staged.status().with_context(where + ": layer " + layer);
    out.emplace(layer, std::move(staged).value());
  }
  return out;
}

Result<std::string> reachable_by_nodes(const std::string& program, const StageUse& use) {
  const fs::path src = fs::absolute(program).lexically_normal();
  const int raw = ::open(src.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (raw < 0) return Status::not_found("open " + src.string() + ": " + errno_text(errno));
  Fd path_fd(raw);
  struct stat st {};
  if (::fstat(path_fd.get(), &st) != 0)
    return Status::io("fstat " + src.string() + ": " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return not_file_or_folder(src.string(), st.st_mode);
  if (others_can_reach(src, st)) return src.string();

  const std::string listed = "aura-stage program 1\n" + src.string() + "\n" +
                             std::to_string(st.st_mode) + " " + std::to_string(st.st_size) + " " +
                             std::to_string(st.st_ino) + " " + std::to_string(st.st_mtim.tv_sec) +
                             "." + std::to_string(st.st_mtim.tv_nsec) + "\n";
  const std::string name = src.filename().string();
  const std::string key = to_hex(sha256(listed)).substr(0, kKeyHex);
  auto fill = [&](int data_fd) -> Status {
    int in;
    AURA_ASSIGN_OR_RETURN(in, reopen_regular(path_fd.get(), st, src.string()));
    Fd src_fd(in);
    const int out =
        ::openat(data_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (out < 0) return Status::io("create the copy of " + src.string() + ": " + errno_text(errno));
    Fd dst(out);
    uint64_t budget = package_format::kMaxTotalBytes;
    AURA_RETURN_IF_ERROR(copy_hashing(src_fd.get(), dst.get(), budget, src.string()).status());
    if (::fchmod(dst.get(), (st.st_mode & S_IXUSR) != 0 ? 0755 : 0644) != 0)
      return Status::io("chmod the copy of " + src.string() + ": " + errno_text(errno));
    return Status::ok();
  };
  auto staged = claim(readable(name) + "-" + key, name, use, fill);
  if (!staged.ok()) return staged.status().with_context("staging " + src.string());
  return staged;
}

Status release_stage_uses(sandbox::LeakLedger& ledger, const std::string& owner) {
  auto entries = ledger.entries();
  if (!entries.ok()) return entries.status();
  std::map<std::string, std::vector<sandbox::LeakLedger::Resource>> gone;
  Status first = Status::ok();
  for (const sandbox::LedgerEntry& e : *entries) {
    if (e.released || e.owner != owner || e.kind != sandbox::ResourceKind::kDir ||
        !is_marker(e.path))
      continue;
    if (::rmdir(e.path.c_str()) != 0 && errno != ENOENT) {
      if (first.is_ok()) first = Status::io("rmdir " + e.path.string() + ": " + errno_text(errno));
      continue;
    }
    gone[e.run_id].push_back({sandbox::ResourceKind::kDir, e.path});
  }
  for (const auto& [run_id, resources] : gone)
    AURA_RETURN_IF_ERROR(ledger.release(run_id, resources));
  AURA_RETURN_IF_ERROR(first);
  return sweep_stage();
}

Status sweep_stage() {
  struct stat st {};
  if (::lstat(kStageRoot, &st) != 0) return Status::ok();  // nothing was ever staged
  StageLock lock;
  AURA_RETURN_IF_ERROR(lock.status());
  return sweep_locked();
}

void set_stage_open_hook(std::function<void(std::string_view)> hook) {
  open_hook() = std::move(hook);
}

}  // namespace aura::workers::nodes
