// The built browser lab, served from one folder: opened once (before the front drops its
// privileges) and read beneath it only (no `..`, no hidden file, no symlink out of it). Without
// a folder, `/` answers a page saying the browser lab is not built. Thread-safe after open().
#pragma once

#include <filesystem>
#include <optional>
#include <string_view>

#include "app/serve/response.h"
#include "engine/common/status.h"

namespace aura::serve {

inline constexpr size_t kMaxStaticFileBytes = size_t(32) << 20;

class StaticFiles {
 public:
  // `dir` empty: no browser lab. An error names a folder that cannot be opened.
  static Result<StaticFiles> open(const std::filesystem::path& dir);
  StaticFiles(StaticFiles&& o) noexcept : dirfd_(o.dirfd_) { o.dirfd_ = -1; }
  StaticFiles& operator=(StaticFiles&&) = delete;
  ~StaticFiles();

  bool enabled() const { return dirfd_ >= 0; }
  // The file a GET of `path` (no query) names: 200 with its media type, or 404. "/" is
  // index.html; a path without an extension that names no file is index.html too (the
  // browser lab routes it).
  Response get(std::string_view path) const;

 private:
  explicit StaticFiles(int dirfd) : dirfd_(dirfd) {}
  std::optional<Response> read(std::string_view relative) const;
  int dirfd_ = -1;
};

// The media type of a file name by its extension ("application/octet-stream" when unknown).
std::string_view media_type(std::string_view name);

}  // namespace aura::serve
