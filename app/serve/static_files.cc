#include "app/serve/static_files.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace aura::serve {
namespace {

bool safe_segment(std::string_view s) {
  if (s.empty() || s.size() > 255 || s[0] == '.') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '@' || c == '+' || c == '~';
  });
}

// Opens `relative` beneath `dirfd`: openat2 with RESOLVE_BENEATH and no symlinks where the
// kernel has it, else openat refusing a symlink at the last component (segments are checked
// before, so nothing climbs out).
int open_beneath(int dirfd, const std::string& relative) {
  open_how how{};
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, dirfd, relative.c_str(), &how, sizeof how);
  if (fd >= 0 || errno != ENOSYS) return int(fd);
  return ::openat(dirfd, relative.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
}

Response not_found() { return error_response(rpc::api_error(404, "not_found", "no such file")); }

}  // namespace

std::string_view media_type(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kTypes[] = {
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".json", "application/json"},
      {".map", "application/json"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".woff2", "font/woff2"},
      {".txt", "text/plain; charset=utf-8"},
      {".wasm", "application/wasm"},
  };
  for (auto [ext, type] : kTypes) {
    if (name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext) return type;
  }
  return "application/octet-stream";
}

Result<StaticFiles> StaticFiles::open(const std::filesystem::path& dir) {
  if (dir.empty()) return StaticFiles(-1);
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return Status::not_found("--ui " + dir.string() + ": " + std::strerror(errno));
  }
  return StaticFiles(fd);
}

StaticFiles::~StaticFiles() {
  if (dirfd_ >= 0) ::close(dirfd_);
}

std::optional<Response> StaticFiles::read(std::string_view relative) const {
  int fd = open_beneath(dirfd_, std::string(relative));
  if (fd < 0) return std::nullopt;
  struct stat st {};
  std::optional<Response> out;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && size_t(st.st_size) <= kMaxStaticFileBytes) {
    Response r;
    r.content_type = std::string(media_type(relative));
    r.body.resize(size_t(st.st_size));
    size_t done = 0;
    while (done < r.body.size()) {
      ssize_t n = ::read(fd, r.body.data() + done, r.body.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      done += size_t(n);
    }
    r.body.resize(done);
    out = std::move(r);
  }
  ::close(fd);
  return out;
}

Response StaticFiles::get(std::string_view path) const {
  if (!enabled()) {
    return path == "/" || path == "/index.html" ? ui_missing_page() : not_found();
  }
  if (path.empty() || path[0] != '/') return not_found();
  std::string relative;
  std::string_view rest = path.substr(1);
  bool has_extension = false;
  if (rest.empty() || rest.back() == '/') {
    relative = std::string(rest) + "index.html";
    has_extension = true;
    rest = relative;
  }
  for (std::string_view p = rest; !p.empty();) {
    size_t slash = p.find('/');
    std::string_view seg = p.substr(0, slash);
    if (!safe_segment(seg)) return not_found();
    has_extension = seg.find('.') != std::string_view::npos;
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash + 1);
  }
  if (relative.empty()) relative = std::string(rest);
  if (auto r = read(relative)) return std::move(*r);
  if (!has_extension) {
    if (auto r = read("index.html")) return std::move(*r);
  }
  return not_found();
}

}  // namespace aura::serve
