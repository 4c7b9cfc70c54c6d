// The one way an action changes a file's content (file.write, file.replace, the /etc/group
// edits): the final component must be absent or a regular file, never a symlink; its state is
// journaled and fsynced first, then the new bytes replace it atomically, its owner kept.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string_view>

#include "engine/common/status.h"
#include "workers/runner/journal.h"
#include "workers/runner/node_fs.h"
#include "workers/runner/op.h"

namespace aura::runner {

struct EditTarget {
  ParentDir parent;
  JournalEntry before;  // before.bytes holds the current content when it exists
};

// kInvalidArgument (naming `arg`) for a bad path; a world error for a symlink, a folder or a
// special file at the path, or a file too large to journal.
Result<EditTarget> load_edit_target(std::string_view arg, std::string_view path);

// Journals `before` in ctx.journal_dir.
Status journal_change(const Context& ctx, const JournalEntry& before);

// Journals t.before, then replaces the file with `bytes`: `mode` if given, else the file's old
// mode (0644 for a new file); the old owner kept (a new file gets the runner's).
Status commit_edit(const Context& ctx, const EditTarget& t, std::string_view bytes,
                   std::optional<mode_t> mode);

}  // namespace aura::runner
