// What a node was as the package built it, for the checks that compare a world against its
// image: each path a check names (and, for a tree it walks, everything beneath) with its type,
// mode, owner, inode and content digest, read from outside (openat2 in the node's root, no
// symlink followed) right after the layers, owners and modes and before any service or call
// ran. Kept as text in world.json; never read back from the node. docs/GATE.md lists the checks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "workers/inspect/node_view.h"

namespace aura::workers::nodes {

inline constexpr size_t kMaxBuiltEntries = 2048;       // per walk
inline constexpr size_t kMaxBuiltFileBytes = 4 << 20;  // a file hashed for its content
inline constexpr std::string_view kAbsent = "absent";

struct BuiltEntry {
  std::string type = std::string(kAbsent);  // inspect::type_name, or "absent"
  uint32_t mode = 0, uid = 0, gid = 0;      // as the node sees them
  uint64_t ino = 0;
  std::string sha256;  // a regular file's content (hex); empty otherwise
  // A file or folder carrying a POSIX ACL (entries the mode bits do not show: a named user or
  // group, a mask, a folder's default ACL).
  bool acl = false;

  bool operator==(const BuiltEntry&) const = default;
};

using BuiltEntries = std::map<std::string, BuiltEntry>;  // absolute path -> entry

// The entry at `path` now (the final name not followed); type "absent" when nothing is there.
Result<BuiltEntry> entry_now(const inspect::NodeView& view, const std::string& path);

// `path` and, when it is a folder, everything beneath it (no symlink followed), into `out`.
// More than kMaxBuiltEntries entries is kFailedPrecondition.
Status walk_now(const inspect::NodeView& view, const std::string& path, BuiltEntries& out);

// One line per entry: path, type, mode (octal), uid, gid, inode, digest ("-" for none), ACL
// ("acl" or "-"), separated by tabs. A path holding a tab, newline or other control byte is
// refused.
Result<std::string> encode_built(const BuiltEntries& entries);
Result<BuiltEntries> decode_built(std::string_view text);

// "file 0644 0:0" ("file 0644 0:0 +acl" with an ACL) and so on, for what a check reports.
std::string describe(const BuiltEntry& e);

}  // namespace aura::workers::nodes
