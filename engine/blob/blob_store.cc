#include "engine/blob/blob_store.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <limits>
#include <system_error>
#include <utility>
#include <vector>

#include "engine/blob/blob_format.h"

namespace aura {
namespace {

namespace fmt = blob_format;

constexpr size_t kIoChunkBytes = 256 << 10;

// One per thread, so that verifying many blobs does not allocate (and mmap) per call.
std::vector<uint8_t>& io_buffer() {
  thread_local std::vector<uint8_t> buf(kIoChunkBytes);
  return buf;
}

std::string errno_text(int err) { return std::system_category().message(err); }

// Owns one file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) reset(std::exchange(o.fd_, -1));
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

Status write_all(int fd, std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::io("write: " + errno_text(errno));
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return Status::ok();
}

Status fsync_fd(int fd, std::string_view what) {
  if (::fsync(fd) != 0) return Status::io("fsync " + std::string(what) + ": " + errno_text(errno));
  return Status::ok();
}

// Reads from a non-seekable fd, waiting when it was opened O_NONBLOCK. Returns 0 at EOF.
ssize_t read_stream(int fd, uint8_t* buf, size_t len) {
  for (;;) {
    ssize_t n = ::read(fd, buf, len);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, -1) < 0 && errno != EINTR) return -1;
      continue;
    }
    return -1;
  }
}

ssize_t pread_retry(int fd, uint8_t* buf, size_t len, uint64_t offset) {
  for (;;) {
    ssize_t n = ::pread(fd, buf, len, static_cast<off_t>(offset));
    if (n >= 0 || errno != EINTR) return n;
  }
}

// Links an unnamed (O_TMPFILE) file as dir_fd/name. Returns 0 or an errno value (EEXIST if the
// name is taken: linkat never replaces).
int link_unnamed(int fd, int dir_fd, const std::string& name) {
  if (::linkat(fd, "", dir_fd, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  int err = errno;
  if (err != ENOENT && err != EPERM) return err;
  // AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH before Linux 6.10; /proc works without it.
  std::string proc = "/proc/self/fd/" + std::to_string(fd);
  if (::linkat(AT_FDCWD, proc.c_str(), dir_fd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  return errno == ENOENT ? err : errno;
}

std::string next_temp_name() {
  static std::atomic<uint64_t> counter{0};
  return "blob." + std::to_string(::getpid()) + "." + std::to_string(counter.fetch_add(1));
}

// Creates each missing component of `dir` with kDirMode and syncs the parent of each one created,
// so that the store's root is as durable as the blobs under it.
Status make_dirs(const std::filesystem::path& dir) {
  std::filesystem::path abs = dir.is_absolute() ? dir : std::filesystem::current_path() / dir;
  std::filesystem::path prefix;
  for (const auto& part : abs.lexically_normal()) {
    if (part.empty()) continue;
    std::filesystem::path parent = prefix.empty() ? part : prefix;
    prefix /= part;
    if (::mkdir(prefix.c_str(), fmt::kDirMode) == 0) {
      Fd p(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
      if (!p.valid()) return Status::io("open " + parent.string() + ": " + errno_text(errno));
      AURA_RETURN_IF_ERROR(fsync_fd(p.get(), parent.string()));
    } else if (errno != EEXIST) {
      return Status::io("mkdir " + prefix.string() + ": " + errno_text(errno));
    }
  }
  return Status::ok();
}

// Opens (creating if needed) a subfolder of the store's root, refusing a symlink.
Result<int> open_subdir(int root_fd, std::string_view name, bool* created) {
  std::string n(name);
  if (::mkdirat(root_fd, n.c_str(), fmt::kDirMode) == 0) {
    *created = true;
  } else if (errno != EEXIST) {
    return Status::io("mkdir " + n + ": " + errno_text(errno));
  }
  int fd = ::openat(root_fd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP || err == ENOTDIR) return Status::corruption(n + ": not a directory");
    return Status::io("open " + n + ": " + errno_text(err));
  }
  return fd;
}

std::string blob_name(const std::string& hex) { return hex.substr(fmt::kFanoutHexDigits); }
std::string fanout_name(const std::string& hex) { return hex.substr(0, fmt::kFanoutHexDigits); }

// Streams an open regular file through SHA-256, checking its size and digest; appends the bytes
// to `out` when given. Messages name no digest: callers add it.
Status hash_and_compare(int fd, const Digest& want, const uint64_t* expected_bytes,
                        std::string* out) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::io("fstat: " + errno_text(errno));
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (expected_bytes != nullptr && size != *expected_bytes) {
    return Status::corruption(std::to_string(size) + " bytes, expected " +
                              std::to_string(*expected_bytes));
  }
  if (out != nullptr) out->reserve(size);
  std::vector<uint8_t>& buf = io_buffer();
  Sha256 h;
  uint64_t total = 0;
  for (;;) {
    ssize_t n = pread_retry(fd, buf.data(), buf.size(), total);
    if (n < 0) return Status::io("read: " + errno_text(errno));
    if (n == 0) break;
    std::span<const uint8_t> chunk(buf.data(), static_cast<size_t>(n));
    h.update(chunk);
    if (out != nullptr) out->append(as_chars(chunk));
    total += static_cast<uint64_t>(n);
  }
  if (expected_bytes != nullptr && total != *expected_bytes) {
    return Status::corruption("read " + std::to_string(total) + " bytes, expected " +
                              std::to_string(*expected_bytes));
  }
  Digest got = h.finish();
  if (got != want) return Status::corruption("content hashes to " + to_hex(got));
  return Status::ok();
}

}  // namespace

// A temporary file in DIR/tmp: unnamed (O_TMPFILE) when the filesystem allows, else uniquely
// named. Unless published, it disappears when destroyed.
class BlobStore::TempFile {
 public:
  static Result<TempFile> create(int tmp_dir_fd) {
    int fd = ::openat(tmp_dir_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, fmt::kBlobMode);
    if (fd >= 0) return TempFile(tmp_dir_fd, fd, "");
    int err = errno;
    if (err != EOPNOTSUPP && err != EISDIR && err != EINVAL) {
      return Status::io("tmp: O_TMPFILE: " + errno_text(err));
    }
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::string name = next_temp_name();
      fd = ::openat(tmp_dir_fd, name.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC,
                    fmt::kBlobMode);
      if (fd >= 0) return TempFile(tmp_dir_fd, fd, std::move(name));
      if (errno != EEXIST) return Status::io("tmp/" + name + ": create: " + errno_text(errno));
    }
    return Status::io("tmp: no unused temporary name after 100 attempts");
  }

  TempFile(TempFile&& o) noexcept
      : tmp_dir_fd_(o.tmp_dir_fd_), fd_(std::move(o.fd_)), name_(std::exchange(o.name_, "")) {}
  TempFile& operator=(TempFile&&) = delete;
  ~TempFile() {
    if (!name_.empty()) ::unlinkat(tmp_dir_fd_, name_.c_str(), 0);
  }

  int fd() const { return fd_.get(); }
  // Empty while unnamed.
  const std::string& name() const { return name_; }

  // Gives an unnamed file a unique name in DIR/tmp (needed to rename it over another file).
  Status name_it() {
    if (!name_.empty()) return Status::ok();
    for (int attempt = 0; attempt < 100; ++attempt) {
      std::string name = next_temp_name();
      int err = link_unnamed(fd_.get(), tmp_dir_fd_, name);
      if (err == 0) {
        name_ = std::move(name);
        return Status::ok();
      }
      if (err != EEXIST) return Status::io("tmp/" + name + ": link: " + errno_text(err));
    }
    return Status::io("tmp: no unused temporary name after 100 attempts");
  }

  // The name now belongs to a blob: do not unlink it.
  void forget_name() { name_.clear(); }

 private:
  TempFile(int tmp_dir_fd, int fd, std::string name)
      : tmp_dir_fd_(tmp_dir_fd), fd_(fd), name_(std::move(name)) {}

  int tmp_dir_fd_;
  Fd fd_;
  std::string name_;
};

Result<BlobStore> BlobStore::open(const std::filesystem::path& dir, uint64_t max_blob_bytes) {
  const std::string ctx = "blob store " + dir.string();
  if (dir.empty()) return Status::invalid("blob store: empty directory name");
  AURA_RETURN_IF_ERROR(make_dirs(dir).with_context(ctx));
  Fd root(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root.valid()) return Status::io(ctx + ": open: " + errno_text(errno));

  bool created = false;
  auto sha = open_subdir(root.get(), fmt::kShaDir, &created);
  if (!sha.ok()) return sha.status().with_context(ctx);
  Fd sha_fd(*sha);
  auto tmp = open_subdir(root.get(), fmt::kTmpDir, &created);
  if (!tmp.ok()) return tmp.status().with_context(ctx);
  Fd tmp_fd(*tmp);
  if (created) AURA_RETURN_IF_ERROR(fsync_fd(root.get(), ctx));

  return BlobStore(dir, max_blob_bytes, sha_fd.release(), tmp_fd.release());
}

BlobStore::BlobStore(BlobStore&& other) noexcept
    : dir_(std::move(other.dir_)),
      max_blob_bytes_(other.max_blob_bytes_),
      sha_fd_(std::exchange(other.sha_fd_, -1)),
      tmp_fd_(std::exchange(other.tmp_fd_, -1)) {}

BlobStore& BlobStore::operator=(BlobStore&& other) noexcept {
  if (this != &other) {
    close_fds();
    dir_ = std::move(other.dir_);
    max_blob_bytes_ = other.max_blob_bytes_;
    sha_fd_ = std::exchange(other.sha_fd_, -1);
    tmp_fd_ = std::exchange(other.tmp_fd_, -1);
  }
  return *this;
}

BlobStore::~BlobStore() { close_fds(); }

void BlobStore::close_fds() {
  if (sha_fd_ >= 0) ::close(sha_fd_);
  if (tmp_fd_ >= 0) ::close(tmp_fd_);
  sha_fd_ = tmp_fd_ = -1;
}

std::filesystem::path BlobStore::path_of(const Digest& digest) const {
  std::string hex = to_hex(digest);
  return dir_ / fmt::kShaDir / fanout_name(hex) / blob_name(hex);
}

Result<int> BlobStore::open_fanout_dir(const Digest& digest, bool create) const {
  std::string sub = fanout_name(to_hex(digest));
  for (;;) {
    int fd = ::openat(sha_fd_, sub.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) return fd;
    int err = errno;
    if (err == ELOOP || err == ENOTDIR) {
      return Status::corruption(std::string(fmt::kShaDir) + "/" + sub + ": not a directory");
    }
    if (err != ENOENT) {
      return Status::io(std::string(fmt::kShaDir) + "/" + sub + ": open: " + errno_text(err));
    }
    if (!create) return Status::not_found(std::string(fmt::kShaDir) + "/" + sub + ": absent");
    if (::mkdirat(sha_fd_, sub.c_str(), fmt::kDirMode) != 0 && errno != EEXIST) {
      return Status::io(std::string(fmt::kShaDir) + "/" + sub + ": mkdir: " + errno_text(errno));
    }
    // The new folder's entry must be durable before any blob inside it is.
    AURA_RETURN_IF_ERROR(fsync_fd(sha_fd_, fmt::kShaDir));
    create = false;
  }
}

Result<int> BlobStore::open_blob(const Digest& digest) const {
  auto sub_or = open_fanout_dir(digest, /*create=*/false);
  if (!sub_or.ok()) {
    if (sub_or.status().code() == ErrorCode::kNotFound) return Status::not_found("not found");
    return sub_or.status();
  }
  Fd sub(*sub_or);
  std::string name = blob_name(to_hex(digest));
  // Look before opening: opening a device or FIFO can have effects or block.
  struct stat before {};
  if (::fstatat(sub.get(), name.c_str(), &before, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return Status::not_found("not found");
    return Status::io("stat: " + errno_text(errno));
  }
  if (S_ISLNK(before.st_mode)) return Status::corruption("is a symlink");
  if (!S_ISREG(before.st_mode)) return Status::corruption("not a regular file");
  int fd =
      ::openat(sub.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status::not_found("not found");
    if (err == ELOOP) return Status::corruption("is a symlink");
    return Status::io("open: " + errno_text(err));
  }
  Fd file(fd);
  struct stat after {};
  if (::fstat(file.get(), &after) != 0) return Status::io("fstat: " + errno_text(errno));
  if (!S_ISREG(after.st_mode)) return Status::corruption("not a regular file");
  return file.release();
}

Result<std::string> BlobStore::get(const Digest& digest) const {
  const std::string ctx = "blob " + to_hex(digest);
  auto fd_or = open_blob(digest);
  if (!fd_or.ok()) return fd_or.status().with_context(ctx);
  Fd fd(*fd_or);
  std::string out;
  AURA_RETURN_IF_ERROR(hash_and_compare(fd.get(), digest, nullptr, &out).with_context(ctx));
  return out;
}

Status BlobStore::check(const Digest& digest, uint64_t expected_bytes) const {
  const std::string ctx = "blob " + to_hex(digest);
  auto fd_or = open_blob(digest);
  if (!fd_or.ok()) return fd_or.status().with_context(ctx);
  Fd fd(*fd_or);
  return hash_and_compare(fd.get(), digest, &expected_bytes, nullptr).with_context(ctx);
}

bool BlobStore::contains(const Digest& digest) const {
  auto fd_or = open_blob(digest);
  if (!fd_or.ok()) return false;
  ::close(*fd_or);
  return true;
}

Result<BlobStore::Existing> BlobStore::probe(const Digest& digest, uint64_t bytes) const {
  auto fd_or = open_blob(digest);
  if (!fd_or.ok()) {
    switch (fd_or.status().code()) {
      case ErrorCode::kNotFound:
        return Existing::kAbsent;
      case ErrorCode::kCorruption:  // a symlink or other non-regular file
        return Existing::kDamaged;
      default:
        return fd_or.status().with_context("blob " + to_hex(digest));
    }
  }
  Fd fd(*fd_or);
  // A read error is repaired like a mismatch: the replacement is a fresh, verified inode.
  Status s = hash_and_compare(fd.get(), digest, &bytes, nullptr);
  return s.is_ok() ? Existing::kIntact : Existing::kDamaged;
}

Status BlobStore::sync_fanout_dir(const Digest& digest) const {
  auto sub_or = open_fanout_dir(digest, /*create=*/false);
  if (!sub_or.ok()) return sub_or.status();
  Fd sub(*sub_or);
  return fsync_fd(sub.get(), std::string(fmt::kShaDir) + "/" + fanout_name(to_hex(digest)));
}

Status BlobStore::publish(TempFile& temp, const BlobInfo& info, Existing existing) {
  const Digest& digest = info.sha256;
  const std::string hex = to_hex(digest);
  const std::string name = blob_name(hex);
  const std::string where = std::string(fmt::kShaDir) + "/" + fanout_name(hex);
  auto sub_or = open_fanout_dir(digest, /*create=*/true);
  if (!sub_or.ok()) return sub_or.status();
  Fd sub(*sub_or);

  if (temp.name().empty() && existing == Existing::kAbsent) {
    // Common case: link the complete, synced file straight to its name. linkat never replaces,
    // so a blob that appeared meanwhile (a concurrent put) is checked instead.
    int err = link_unnamed(temp.fd(), sub.get(), name);
    if (err == 0) return fsync_fd(sub.get(), where);
    if (err != EEXIST) return Status::io(where + "/" + name + ": link: " + errno_text(err));
    auto again = probe(digest, info.bytes);
    if (!again.ok()) return again.status();
    if (*again == Existing::kIntact) return fsync_fd(sub.get(), where);
  }
  // Replace whatever is there (a damaged blob, a symlink) atomically: rename needs a name.
  AURA_RETURN_IF_ERROR(temp.name_it());
  if (::renameat(tmp_fd_, temp.name().c_str(), sub.get(), name.c_str()) != 0) {
    return Status::io(where + "/" + name + ": rename into place: " + errno_text(errno));
  }
  temp.forget_name();
  return fsync_fd(sub.get(), where);
}

Result<BlobInfo> BlobStore::put(std::span<const uint8_t> bytes) {
  if (bytes.size() > max_blob_bytes_) {
    return Status::invalid("put: blob of " + std::to_string(bytes.size()) +
                           " bytes exceeds the store's limit of " +
                           std::to_string(max_blob_bytes_) + " bytes");
  }
  BlobInfo info{sha256(bytes), bytes.size()};
  const std::string ctx = "put blob " + to_hex(info.sha256);
  auto existing = probe(info.sha256, info.bytes);
  if (!existing.ok()) return existing.status().with_context("put");
  if (*existing == Existing::kIntact) {
    // It may have been linked by a concurrent put that has not synced the folder yet.
    AURA_RETURN_IF_ERROR(sync_fanout_dir(info.sha256).with_context(ctx));
    return info;
  }
  auto temp = TempFile::create(tmp_fd_);
  if (!temp.ok()) return temp.status().with_context(ctx);
  AURA_RETURN_IF_ERROR(write_all(temp->fd(), bytes).with_context(ctx));
  AURA_RETURN_IF_ERROR(fsync_fd(temp->fd(), "temporary file").with_context(ctx));
  AURA_RETURN_IF_ERROR(publish(*temp, info, *existing).with_context(ctx));
  return info;
}

Result<BlobInfo> BlobStore::put_fd(int fd, uint64_t max_bytes) {
  const uint64_t limit = std::min(max_bytes, max_blob_bytes_);
  const std::string ctx = "put_fd fd " + std::to_string(fd);
  auto too_big = [&](const std::string& what) {
    return Status::invalid(ctx + ": " + what + " exceeds the limit of " + std::to_string(limit) +
                           " bytes (caller limit " + std::to_string(max_bytes) + ", store limit " +
                           std::to_string(max_blob_bytes_) + ")");
  };
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::invalid(ctx + ": fstat: " + errno_text(errno));
  const bool seekable = S_ISREG(st.st_mode);
  if (seekable && static_cast<uint64_t>(st.st_size) > limit) {
    return too_big("file of " + std::to_string(st.st_size) + " bytes");
  }
  if (S_ISDIR(st.st_mode)) return Status::invalid(ctx + ": is a directory");

  auto temp = TempFile::create(tmp_fd_);
  if (!temp.ok()) return temp.status().with_context(ctx);
  // Read at most limit + 1 bytes: one byte past the limit is enough to refuse.
  const uint64_t cap = limit == std::numeric_limits<uint64_t>::max() ? limit : limit + 1;
  // The thread's buffer is free again (for probe's reads) once this loop ends.
  std::vector<uint8_t>& buf = io_buffer();
  Sha256 h;
  uint64_t total = 0;
  for (;;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(buf.size(), cap - total));
    if (want == 0) break;
    ssize_t n =
        seekable ? pread_retry(fd, buf.data(), want, total) : read_stream(fd, buf.data(), want);
    if (n < 0) return Status::io(ctx + ": read: " + errno_text(errno));
    if (n == 0) break;
    std::span<const uint8_t> chunk(buf.data(), static_cast<size_t>(n));
    total += chunk.size();
    if (total > limit) break;
    h.update(chunk);
    AURA_RETURN_IF_ERROR(write_all(temp->fd(), chunk).with_context(ctx));
  }
  if (total > limit) {
    return too_big(seekable ? "file that grew while read"
                            : "stream of more than " + std::to_string(limit) + " bytes");
  }
  BlobInfo info{h.finish(), total};
  const std::string blob_ctx = ctx + ": blob " + to_hex(info.sha256);
  auto existing = probe(info.sha256, info.bytes);
  if (!existing.ok()) return existing.status().with_context(ctx);
  if (*existing == Existing::kIntact) {
    AURA_RETURN_IF_ERROR(sync_fanout_dir(info.sha256).with_context(blob_ctx));
    return info;
  }
  AURA_RETURN_IF_ERROR(fsync_fd(temp->fd(), "temporary file").with_context(blob_ctx));
  AURA_RETURN_IF_ERROR(publish(*temp, info, *existing).with_context(blob_ctx));
  return info;
}

}  // namespace aura
