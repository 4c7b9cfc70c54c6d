// The node's undo journal: before an action changes a path, the path's prior state is written
// and fsynced as a numbered entry (NNNNNN.json, and NNNNNN.data with a regular file's previous
// bytes); journal.undo restores the entries newest first and removes each once restored.
// Entry files are created O_EXCL|O_NOFOLLOW in a folder opened O_NOFOLLOW: never followed
// through a symlink. Format: docs/formats/journal.md (shared with the filetree driver).
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "engine/common/file_io.h"
#include "engine/common/status.h"
#include "workers/journal/journal_format.h"
#include "workers/runner/node_fs.h"
#include "workers/runner/op.h"

namespace aura::runner {

inline constexpr uint64_t kMaxJournalEntries = journal::kMaxEntries;
inline constexpr size_t kMaxJournalFileBytes = journal::kMaxDataBytes;  // a file's saved bytes

using JournalEntry = journal::Entry;

// The entry for p's final component as it is now (not followed if a symlink). A regular
// file's bytes are read (at most kMaxJournalFileBytes, else a world error: the action must
// not go ahead unjournaled); a FIFO, socket or device is refused.
Result<JournalEntry> capture_entry(const ParentDir& p);

class Journal {
 public:
  // Opens `dir` (made 0700, parents 0755, when missing; a symlink is refused).
  static Result<std::unique_ptr<Journal>> open(const std::string& dir);

  // Writes and fsyncs `e` (data file, then entry file, then the folder) before the caller's
  // change.
  Status record(const JournalEntry& e);

  // Restores every entry newest first (content, then owner, then mode; or removes a path that
  // did not exist), writing one line per entry to `out` and deleting each entry once restored.
  // On a failure the entries not yet restored stay.
  Status undo(Output& out);

 private:
  Journal(std::string dir, int fd) : dir_(std::move(dir)), fd_(fd) {}
  Result<uint64_t> next_seq() const;
  Status restore(const JournalEntry& e, Output& out);
  Result<JournalEntry> load(uint64_t seq) const;
  Status remove_entry(uint64_t seq);

  std::string dir_;
  file_io::Fd fd_;
};

}  // namespace aura::runner
