// The undo journal of one filetree world. Before an action changes a path, the path's prior
// state (absent, a regular file's mode and bytes, or a folder's mode) is written as a numbered
// entry in a folder beside the world root (outside the tree, so nothing in the world can reach
// it and the fingerprint never sees it); journal.undo restores the entries newest first and
// deletes each once it is restored. Format: docs/formats/journal.md (shared with aura-runner).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "workers/filetree/world_fs.h"
#include "workers/journal/journal_format.h"

namespace aura::workers::filetree {

inline constexpr size_t kMaxJournalEntries = 65536;

class Journal {
 public:
  // Opens the journal folder `dir` (made by the driver when the world was created).
  static Result<std::unique_ptr<Journal>> open(const std::filesystem::path& dir);

  // Records the current state of `path` in `world`. A symlink, special file or a file over
  // kMaxFileBytes at `path` is refused (kInvalidArgument): the action must not go ahead.
  Status record(const WorldFs& world, std::string_view path);

  // Restores every entry, newest first, removing each after it is restored; returns the paths
  // in the order they were restored. An empty journal restores nothing. On an error the
  // entries not yet restored stay.
  Result<std::vector<std::string>> undo(WorldFs& world);

  // How many entries are waiting to be undone.
  Result<size_t> size() const;

 private:
  explicit Journal(std::filesystem::path dir) : dir_(std::move(dir)) {}
  struct Listing {
    std::vector<uint64_t> entries;  // NNNNNN.json, ascending
    std::vector<uint64_t> data;     // NNNNNN.data, ascending
  };
  Result<Listing> list() const;
  Result<journal::Entry> load(uint64_t seq) const;
  Status remove(uint64_t seq);  // the entry, then its data file

  std::filesystem::path dir_;
};

}  // namespace aura::workers::filetree
