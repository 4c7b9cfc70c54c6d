#include "workers/inspect/exe_identity.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <tuple>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"

namespace aura::inspect {
namespace {

using file_io::errno_text;

constexpr off_t kMaxProgramBytes = off_t(1) << 30;  // no program of a world is near this
constexpr size_t kMaxCached = 256;

using Key = std::tuple<dev_t, ino_t, off_t, int64_t>;

Result<std::string> hash_fd(int fd, const std::string& what) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::io("fstat " + what + ": " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return Status::invalid(what + " is not a regular file");
  if (st.st_size > kMaxProgramBytes) return Status::invalid(what + " is larger than 1 GiB");
  Sha256 h;
  char buf[1 << 16];
  for (off_t off = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::io("read " + what + ": " + errno_text(errno));
    }
    if (n == 0) break;
    h.update(std::string_view(buf, size_t(n)));
    off += n;
    if (off > kMaxProgramBytes) return Status::invalid(what + " grew past 1 GiB");
  }
  const Digest d = h.finish();
  return to_hex(d);
}

}  // namespace

Result<std::string> exe_digest(pid_t pid) {
  static std::mutex mu;
  static std::map<Key, std::string> cache;
  const std::string what = "/proc/" + std::to_string(pid) + "/exe";
  const int fd = ::open(what.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH) return Status::not_found(what + ": no such process");
    return Status::io("open " + what + ": " + errno_text(errno));
  }
  file_io::Fd guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) return Status::io("fstat " + what + ": " + errno_text(errno));
  const Key key{st.st_dev, st.st_ino, st.st_size,
                int64_t(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::string digest;
  AURA_ASSIGN_OR_RETURN(digest, hash_fd(fd, what));
  std::lock_guard lock(mu);
  if (cache.size() >= kMaxCached) cache.clear();
  cache[key] = digest;
  return digest;
}

Result<std::string> file_digest(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return Status::io("open " + path.string() + ": " + errno_text(errno));
  file_io::Fd guard(fd);
  return hash_fd(fd, path.string());
}

}  // namespace aura::inspect
