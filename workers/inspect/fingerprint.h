// Fingerprint: a deterministic digest of a node's declared state, for "is this world the same
// as that one" (a gate's twin, a reset). Entries are key/value byte strings; the digest does not
// depend on the order they were added in, and a key added twice is an error, never a silent
// overwrite. Encoding (docs/WORLDS.md, "Inspecting a node from the host"): SHA-256 over the
// entries sorted by key bytes, each as u32 BE key length, key, u64 BE value length, value.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "workers/inspect/node_view.h"

namespace aura::inspect {

// Not thread-safe.
class Fingerprint {
 public:
  // kInvalidArgument when `key` was added before (the first value stays; hex() fails from then).
  Status add(std::string_view key, std::string_view value);

  // 64 lowercase hex digits; kInvalidArgument naming the first repeated key, if any.
  Result<std::string> hex() const;

  size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, std::string> entries_;
  std::string duplicate_;  // the first key added twice
  bool has_duplicate_ = false;
};

inline constexpr size_t kMaxTreeDepth = 32;
inline constexpr uint64_t kMaxHashedFileBytes = 64ull << 20;

// Walks `path` in the node without following any symlink (the start resolved inside the root,
// its final name not followed; below it one name at a time, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)
// and adds one entry per file, folder or link: key "<prefix>:<path relative to `path`>" ("." for
// `path` itself), value "<type> <mode, 4 octal digits> <uid> <gid>[ <content>]" where content is
// the SHA-256 hex of a regular file or a symlink's target; folders and FIFOs, sockets and devices
// (never opened) have none. More than `max_entries` entries, more than kMaxTreeDepth levels or a
// file over kMaxHashedFileBytes is kFailedPrecondition.
Status add_tree(Fingerprint& fp, const NodeView& view, std::string_view prefix,
                std::string_view path, size_t max_entries);

}  // namespace aura::inspect
