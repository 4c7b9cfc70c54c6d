#include "engine/log/data_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace aura {
namespace {

constexpr const char* kLockName = "aura.lock";

std::string errno_text() { return std::strerror(errno); }

}  // namespace

Result<DataDir> DataDir::open_writer(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::io("create data folder " + dir.string() + ": " + ec.message());
  ::chmod(dir.c_str(), 0750);
  const std::string lock_path = (dir / kLockName).string();
  int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640);
  if (fd < 0) return Status::io("open " + lock_path + ": " + errno_text());
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      auto pid = holder(dir);
      return Status::busy("data folder " + dir.string() + " is in use by pid " +
                          (pid ? std::to_string(*pid) : std::string("?")) +
                          "; readers (verify, dump, head, prove) still open it read-only");
    }
    return Status::io("lock " + lock_path + ": " + std::strerror(err));
  }
  std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != ssize_t(pid.size())) {
    ::close(fd);
    return Status::io("write " + lock_path + ": " + errno_text());
  }
  return DataDir(dir, fd);
}

Result<DataDir> DataDir::open_reader(const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return Status::not_found("no data folder at " + dir.string());
  }
  return DataDir(dir, -1);
}

std::optional<pid_t> DataDir::holder(const std::filesystem::path& dir) {
  const std::string lock_path = (dir / kLockName).string();
  int fd = ::open(lock_path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return std::nullopt;
  std::optional<pid_t> out;
  if (::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
    char buf[32] = {};
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    if (n > 0) {
      long v = std::strtol(buf, nullptr, 10);
      if (v > 0) out = static_cast<pid_t>(v);
    }
  }
  ::close(fd);
  return out;
}

DataDir::DataDir(DataDir&& o) noexcept : dir_(std::move(o.dir_)), lock_fd_(o.lock_fd_) {
  o.lock_fd_ = -1;
}

DataDir& DataDir::operator=(DataDir&& o) noexcept {
  if (this != &o) {
    if (lock_fd_ >= 0) ::close(lock_fd_);
    dir_ = std::move(o.dir_);
    lock_fd_ = o.lock_fd_;
    o.lock_fd_ = -1;
  }
  return *this;
}

DataDir::~DataDir() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

bool path_is_within(const std::filesystem::path& inner, const std::filesystem::path& outer) {
  std::error_code ec;
  if (inner.empty() || outer.empty()) return false;
  auto a = std::filesystem::weakly_canonical(std::filesystem::absolute(inner, ec), ec);
  if (ec) return false;
  auto b = std::filesystem::weakly_canonical(std::filesystem::absolute(outer, ec), ec);
  if (ec) return false;
  auto ai = a.begin(), bi = b.begin();
  for (; bi != b.end(); ++ai, ++bi) {
    if (*bi == "") continue;  // trailing separator
    if (ai == a.end() || *ai != *bi) return false;
  }
  return true;
}

}  // namespace aura
