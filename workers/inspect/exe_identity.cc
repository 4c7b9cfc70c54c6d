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

using Key = std::tuple<uint64_t, uint64_t, uint64_t, uint64_t, int64_t, int64_t>;

int64_t ns_of(const statx_timestamp& t) { return int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec; }

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

Result<ExeFile> exe_file(pid_t pid) {
  static std::mutex mu;
  static std::map<Key, std::string> cache;
  const std::string what = "/proc/" + std::to_string(pid) + "/exe";
  const int fd = ::open(what.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT || errno == ESRCH) return Status::not_found(what + ": no such process");
    return Status::io("open " + what + ": " + errno_text(errno));
  }
  file_io::Fd guard(fd);
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID, &stx) != 0)
    return Status::io("statx " + what + ": " + errno_text(errno));
  if ((stx.stx_mask & STATX_MNT_ID) == 0)
    return Status::unavailable("statx " + what + ": the kernel gives no mount id (Linux 5.8+)");
  ExeFile out;
  out.mnt_id = stx.stx_mnt_id;
  const Key key{stx.stx_mnt_id,       (uint64_t(stx.stx_dev_major) << 32) | stx.stx_dev_minor,
                stx.stx_ino,          stx.stx_size,
                ns_of(stx.stx_mtime), ns_of(stx.stx_ctime)};
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(key); it != cache.end()) {
      out.digest = it->second;
      return out;
    }
  }
  AURA_ASSIGN_OR_RETURN(out.digest, hash_fd(fd, what));
  std::lock_guard lock(mu);
  if (cache.size() >= kMaxCached) cache.clear();
  cache[key] = out.digest;
  return out;
}

Result<std::string> file_digest(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) return Status::io("open " + path.string() + ": " + errno_text(errno));
  file_io::Fd guard(fd);
  return hash_fd(fd, path.string());
}

}  // namespace aura::inspect
