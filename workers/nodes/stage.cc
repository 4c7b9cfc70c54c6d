#include "workers/nodes/stage.h"

#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <span>
#include <vector>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"

namespace aura::workers::nodes {
namespace {

namespace fs = std::filesystem;

bool others_can_reach(const fs::path& path, const struct stat& st) {
  for (fs::path dir = path.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    struct stat ds {};
    if (::stat(dir.c_str(), &ds) != 0 || (ds.st_mode & S_IXOTH) == 0) return false;
    if (dir == dir.root_path()) break;
  }
  const mode_t need = S_ISDIR(st.st_mode) ? (S_IROTH | S_IXOTH) : S_IROTH;
  return (st.st_mode & need) == need;
}

// "relpath mode size ino mtime" lines of every entry under `root` (itself included), sorted.
Result<std::string> listing(const fs::path& root) {
  std::vector<std::string> lines;
  auto line = [&](const fs::path& p, const std::string& rel) -> Status {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0)
      return Status::io("lstat " + p.string() + ": " + file_io::errno_text(errno));
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
      return Status::invalid(p.string() +
                             ": not a file or folder (it cannot be staged for a node)");
    lines.push_back(rel + " " + std::to_string(st.st_mode) + " " + std::to_string(st.st_size) +
                    " " + std::to_string(st.st_ino) + " " + std::to_string(st.st_mtim.tv_sec) +
                    "." + std::to_string(st.st_mtim.tv_nsec));
    return Status::ok();
  };
  AURA_RETURN_IF_ERROR(line(root, "."));
  std::error_code ec;
  if (fs::is_directory(root, ec)) {
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
         it.increment(ec)) {
      AURA_RETURN_IF_ERROR(line(it->path(), fs::relative(it->path(), root).string()));
    }
    if (ec) return Status::io("list " + root.string() + ": " + ec.message());
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Every folder 0755, every file 0644 or (executable by its owner) 0755, owned by root.
Status open_up(const fs::path& root) {
  std::error_code ec;
  auto fix = [](const fs::path& p) -> Status {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) return Status::io("lstat " + p.string());
    const mode_t m = S_ISDIR(st.st_mode) || (st.st_mode & S_IXUSR) ? 0755 : 0644;
    if (::chmod(p.c_str(), m) != 0) return Status::io("chmod " + p.string());
    return Status::ok();
  };
  AURA_RETURN_IF_ERROR(fix(root));
  if (fs::is_directory(root, ec)) {
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
         it.increment(ec))
      AURA_RETURN_IF_ERROR(fix(it->path()));
  }
  return ec ? Status::io("list " + root.string() + ": " + ec.message()) : Status::ok();
}

}  // namespace

Result<std::string> reachable_by_nodes(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Status::not_found("stat " + path + ": " + file_io::errno_text(errno));
  const fs::path src = fs::absolute(path).lexically_normal();
  if (others_can_reach(src, st)) return src.string();

  std::string list;
  AURA_ASSIGN_OR_RETURN(list, listing(src));
  const std::string key = to_hex(sha256(list)).substr(0, 24);
  const std::string name = src.filename().string();
  const fs::path dest = fs::path(kStageRoot) / (name + "-" + key);
  const fs::path result = S_ISDIR(st.st_mode) ? dest : dest / name;
  std::error_code ec;
  if (fs::exists(result, ec)) return result.string();

  AURA_RETURN_IF_ERROR(file_io::ensure_dir(kStageRoot, 0711));
  if (::chmod(kStageRoot, 0711) != 0) return Status::io(std::string("chmod ") + kStageRoot);
  uint8_t raw[8];
  randombytes_buf(raw, sizeof raw);
  const fs::path tmp =
      fs::path(kStageRoot) / (".tmp-" + to_hex(std::span<const uint8_t>(raw, sizeof raw)));
  auto fail = [&](const std::string& what) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    return Status::io("staging " + src.string() + " for the nodes: " + what);
  };
  if (S_ISDIR(st.st_mode)) {
    fs::copy(src, tmp, fs::copy_options::recursive, ec);
  } else if (fs::create_directory(tmp, ec); !ec) {
    fs::copy_file(src, tmp / name, ec);
  }
  if (ec) return fail(ec.message());
  if (Status s = open_up(tmp); !s.is_ok()) return fail(s.message());
  if (::rename(tmp.c_str(), dest.c_str()) != 0) {
    const int err = errno;
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    // Another process staged the same input first: its copy is the same.
    if ((err == EEXIST || err == ENOTEMPTY) && fs::exists(result, ignored)) return result.string();
    return Status::io("staging " + src.string() + ": rename: " + file_io::errno_text(err));
  }
  return result.string();
}

}  // namespace aura::workers::nodes
