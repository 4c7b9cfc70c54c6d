#include "workers/nodes/as_built.h"

#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <span>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"

namespace aura::workers::nodes {
namespace {

std::string octal(uint32_t mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%04o", mode);
  return text;
}

bool clean_path(std::string_view path) {
  for (unsigned char c : path)
    if (c < 0x20 || c == 0x7f) return false;
  return !path.empty() && path[0] == '/';
}

template <typename T>
bool number(std::string_view text, T& out, int base = 10) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

Status walk(const inspect::NodeView& view, const std::string& path, BuiltEntries& out,
            size_t depth) {
  BuiltEntry e;
  AURA_ASSIGN_OR_RETURN(e, entry_now(view, path));
  if (out.size() >= kMaxBuiltEntries)
    return Status::failed_precondition(path + ": more than " + std::to_string(kMaxBuiltEntries) +
                                       " entries to compare");
  const bool dir = e.type == "dir";
  out[path] = std::move(e);
  if (!dir) return Status::ok();
  if (depth >= 32) return Status::failed_precondition(path + ": nested too deep to compare");
  std::vector<std::pair<std::string, inspect::FileInfo>> children;
  AURA_ASSIGN_OR_RETURN(children, view.list_dir(path, kMaxBuiltEntries));
  for (const auto& [name, info] : children)
    AURA_RETURN_IF_ERROR(walk(view, (path == "/" ? "" : path) + "/" + name, out, depth + 1));
  return Status::ok();
}

}  // namespace

Result<BuiltEntry> entry_now(const inspect::NodeView& view, const std::string& path) {
  BuiltEntry e;
  auto fd_or = view.open_path(path, false);
  if (!fd_or.ok()) {
    if (fd_or.status().code() == ErrorCode::kNotFound) return e;  // absent
    return fd_or.status();
  }
  file_io::Fd fd(*fd_or);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0)
    return Status::io("fstat " + path + ": " + file_io::errno_text(errno));
  const inspect::FileInfo info = view.file_info(st);
  e.type = std::string(inspect::type_name(info.type));
  e.mode = info.mode;
  e.uid = info.uid;
  e.gid = info.gid;
  e.ino = uint64_t(st.st_ino);
  if (info.type == inspect::FileInfo::Type::kFile) {
    auto bytes = view.read_file(path, kMaxBuiltFileBytes);
    if (!bytes.ok()) return bytes.status().with_context("hash " + path);
    e.sha256 = to_hex(sha256(*bytes));
  }
  if (info.type == inspect::FileInfo::Type::kFile || info.type == inspect::FileInfo::Type::kDir) {
    inspect::Acl acl;
    AURA_ASSIGN_OR_RETURN(acl, view.acl(path));
    e.acl = acl.any();
  }
  return e;
}

Status walk_now(const inspect::NodeView& view, const std::string& path, BuiltEntries& out) {
  return walk(view, path, out, 0);
}

Result<std::string> encode_built(const BuiltEntries& entries) {
  std::string text;
  for (const auto& [path, e] : entries) {
    if (!clean_path(path))
      return Status::failed_precondition("a path with a control byte cannot be recorded");
    text += path + "\t" + e.type + "\t" + octal(e.mode) + "\t" + std::to_string(e.uid) + "\t" +
            std::to_string(e.gid) + "\t" + std::to_string(e.ino) + "\t" +
            (e.sha256.empty() ? "-" : e.sha256) + "\t" + (e.acl ? "acl" : "-") + "\n";
  }
  return text;
}

Result<BuiltEntries> decode_built(std::string_view text) {
  BuiltEntries out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    if (nl == std::string_view::npos) return Status::corruption("as-built record: a cut line");
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    std::vector<std::string_view> f;
    for (size_t at = 0;;) {
      const size_t tab = line.find('\t', at);
      f.push_back(line.substr(at, tab == std::string_view::npos ? line.npos : tab - at));
      if (tab == std::string_view::npos) break;
      at = tab + 1;
    }
    BuiltEntry e;
    if (f.size() != 8 || !clean_path(f[0]) || !number(f[2], e.mode, 8) || !number(f[3], e.uid) ||
        !number(f[4], e.gid) || !number(f[5], e.ino) || (f[7] != "acl" && f[7] != "-"))
      return Status::corruption("as-built record: a malformed line");
    e.type = std::string(f[1]);
    if (f[6] != "-") e.sha256 = std::string(f[6]);
    e.acl = f[7] == "acl";
    out[std::string(f[0])] = std::move(e);
  }
  return out;
}

std::string describe(const BuiltEntry& e) {
  if (e.type == kAbsent) return std::string(kAbsent);
  return e.type + " " + octal(e.mode) + " " + std::to_string(e.uid) + ":" + std::to_string(e.gid) +
         (e.acl ? " +acl" : "");
}

}  // namespace aura::workers::nodes
