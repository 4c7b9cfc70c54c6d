#include "workers/runner/file_edit.h"

#include <sys/stat.h>

namespace aura::runner {

Result<EditTarget> load_edit_target(std::string_view arg, std::string_view path) {
  ParentDir p;
  AURA_ASSIGN_OR_RETURN(p, open_parent(arg, path));
  const std::string what = "write " + escape_name(p.path);
  struct stat st {};
  bool exists = false;
  AURA_RETURN_IF_ERROR(stat_final(p, &st, &exists));
  if (exists && S_ISLNK(st.st_mode)) {
    return world_error(what, "is a symlink (the final component is never followed)");
  }
  if (exists && !S_ISREG(st.st_mode)) {
    return world_error(what, "not a regular file (" + std::string(type_name(st.st_mode)) + ")");
  }
  JournalEntry before;
  AURA_ASSIGN_OR_RETURN(before, capture_entry(p));
  return EditTarget{std::move(p), std::move(before)};
}

Status journal_change(const Context& ctx, const JournalEntry& before) {
  std::unique_ptr<Journal> journal;
  AURA_ASSIGN_OR_RETURN(journal, Journal::open(ctx.journal_dir));
  return journal->record(before);
}

Status commit_edit(const Context& ctx, const EditTarget& t, std::string_view bytes,
                   std::optional<mode_t> mode) {
  AURA_RETURN_IF_ERROR(journal_change(ctx, t.before));
  const mode_t m = mode ? *mode : t.before.existed ? t.before.mode : 0644;
  const uid_t uid = t.before.existed ? t.before.uid : kKeepId;
  const gid_t gid = t.before.existed ? t.before.gid : kKeepId;
  return replace_file(t.parent, bytes, m, uid, gid);
}

}  // namespace aura::runner
