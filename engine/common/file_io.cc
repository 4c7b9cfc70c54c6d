#include "engine/common/file_io.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>

#include "engine/crypto/ed25519.h"
#include "engine/crypto/sha256.h"

namespace aura::file_io {
namespace fs = std::filesystem;
namespace {

// Writes `bytes` durably to a fresh temporary file in `dir`; returns its path.
Result<fs::path> write_temp(const fs::path& dir, const std::string& final_name,
                            std::string_view bytes, mode_t mode) {
  std::array<uint8_t, 8> rnd;
  random_bytes(rnd);
  const fs::path tmp =
      dir / ("." + final_name + ".tmp." + std::to_string(::getpid()) + "." + to_hex(rnd));
  Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode));
  if (fd.get() < 0) return Status::io("create " + tmp.string() + ": " + errno_text(errno));
  const auto fail = [&](const std::string& what) {
    const int err = errno;
    ::unlink(tmp.c_str());
    return Status::io(what + " " + tmp.string() + ": " + errno_text(err));
  };
  if (::fchmod(fd.get(), mode) != 0) return fail("chmod");  // the umask may have narrowed it
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd.get(), bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write");
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd.get()) != 0) return fail("fsync");
  if (const int err = fd.close_now(); err != 0) {
    errno = err;
    return fail("close");
  }
  return tmp;
}

fs::path folder_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : "."; }

Status fsync_both(const fs::path& tmp_dir, const fs::path& target) {
  const fs::path dir = folder_of(target);
  AURA_RETURN_IF_ERROR(fsync_dir(dir));
  if (fs::path(tmp_dir).lexically_normal() != dir.lexically_normal()) {
    AURA_RETURN_IF_ERROR(fsync_dir(tmp_dir));
  }
  return Status::ok();
}

}  // namespace

std::string errno_text(int err) { return std::string(strerror(err)); }

namespace {

// Opens `path` for reading if it is a regular file of at most `limit` bytes; returns the
// descriptor (owned by the caller) and fills `size`.
Result<int> open_regular(const fs::path& path, const std::string& what, uint64_t limit,
                         uint64_t& size) {
  // O_NOFOLLOW refuses a symlink; O_NONBLOCK keeps a FIFO from hanging the open.
  const int raw = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (raw < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found(what + " is missing");
    if (err == ELOOP) return Status::invalid(what + " is a symlink; only regular files belong");
    return Status::io("open " + what + ": " + errno_text(err));
  }
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::io("fstat " + what + ": " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) {
    return Status::invalid(what + " is not a regular file (a special file)");
  }
  size = static_cast<uint64_t>(st.st_size);
  if (size > limit) {
    return Status::invalid(what + " is " + std::to_string(size) + " bytes, more than the " +
                           std::to_string(limit) + " allowed");
  }
  const int out = fd.get();
  fd.release();
  return out;
}

// Reads all of `fd` in chunks, calling `sink` with each; refuses more than `limit` bytes.
template <class Sink>
Status read_chunks(int fd, const std::string& what, uint64_t limit, Sink&& sink) {
  static thread_local std::array<char, 64 << 10> buf;
  uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io("read " + what + ": " + errno_text(errno));
    if (n == 0) return Status::ok();
    total += static_cast<uint64_t>(n);
    if (total > limit) {
      return Status::invalid(what + " grew past the " + std::to_string(limit) +
                             " bytes allowed while being read");
    }
    sink(std::string_view(buf.data(), static_cast<size_t>(n)));
  }
}

}  // namespace

Result<std::string> read_regular_file(const fs::path& path, std::string_view name, size_t limit) {
  const std::string what(name);
  uint64_t size = 0;
  auto fd = open_regular(path, what, limit, size);
  if (!fd.ok()) return fd.status();
  Fd owned(*fd);
  std::string out;
  out.reserve(static_cast<size_t>(size));
  AURA_RETURN_IF_ERROR(
      read_chunks(owned.get(), what, limit, [&](std::string_view b) { out.append(b); }));
  return out;
}

Result<FileDigest> hash_regular_file(const fs::path& path, std::string_view name, uint64_t limit) {
  const std::string what(name);
  uint64_t size = 0;
  auto fd = open_regular(path, what, limit, size);
  if (!fd.ok()) return fd.status();
  Fd owned(*fd);
  Sha256 h;
  FileDigest d;
  AURA_RETURN_IF_ERROR(read_chunks(owned.get(), what, limit, [&](std::string_view b) {
    h.update(b);
    d.bytes += b.size();
  }));
  d.sha256 = h.finish();
  return d;
}

Status replace_file_durably(const fs::path& tmp_dir, const fs::path& target, std::string_view bytes,
                            mode_t mode) {
  auto tmp = write_temp(tmp_dir, target.filename().string(), bytes, mode);
  if (!tmp.ok()) return tmp.status();
  if (::rename(tmp->c_str(), target.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp->c_str());
    return Status::io("rename " + target.string() + ": " + errno_text(err));
  }
  return fsync_both(tmp_dir, target);
}

Status create_file_durably(const fs::path& tmp_dir, const fs::path& target, std::string_view bytes,
                           mode_t mode) {
  auto tmp = write_temp(tmp_dir, target.filename().string(), bytes, mode);
  if (!tmp.ok()) return tmp.status();
  // link() never replaces: of two racing writers exactly one claims the name.
  const int rc = ::link(tmp->c_str(), target.c_str());
  const int err = errno;
  ::unlink(tmp->c_str());
  if (rc != 0) {
    if (err == EEXIST) {
      return Status::failed_precondition(target.string() + " already exists; not replacing it");
    }
    return Status::io("link " + target.string() + ": " + errno_text(err));
  }
  return fsync_both(tmp_dir, target);
}

Status ensure_dir(const fs::path& dir, mode_t mode) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::ok();
    return Status::failed_precondition(dir.string() + " is not a directory");
  }
  if (errno != ENOENT) return Status::io("stat " + dir.string() + ": " + errno_text(errno));
  const fs::path parent = folder_of(dir);
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec) return Status::io("create " + parent.string() + ": " + ec.message());
  if (::mkdir(dir.c_str(), mode) != 0 && errno != EEXIST) {
    return Status::io("mkdir " + dir.string() + ": " + errno_text(errno));
  }
  if (::chmod(dir.c_str(), mode) != 0) {
    return Status::io("chmod " + dir.string() + ": " + errno_text(errno));
  }
  return fsync_dir(parent);
}

Status fsync_dir(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return Status::io("open " + dir.string() + ": " + errno_text(errno));
  if (::fsync(fd.get()) != 0) return Status::io("fsync " + dir.string() + ": " + errno_text(errno));
  return Status::ok();
}

}  // namespace aura::file_io
