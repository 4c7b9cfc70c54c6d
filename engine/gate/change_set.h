// A world's change set: every path whose state differs from the world as built, read by the
// driver from the host (never through a node's own view), and the rule that judges it against
// the incident's change surface (scenario::ChangeSurface). The text form is what the gate
// stores as a blob and binds into the receipt by digest; judge_changes() is a pure function of
// it and the manifest, so a replay re-derives every verdict (docs/GATE.md, "Change set").
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/scenario/manifest.h"

namespace aura::gate {

// The check id of the gate.fact that carries a change set's judgement: ok when every change
// is inside the surface, value the digest of the changes outside the runtime rules.
inline constexpr std::string_view kChangesCheck = "world.changes";
inline constexpr std::string_view kChangesRefId = "changes";  // the fact's blob ref
inline constexpr std::string_view kChangesBlobKind = "world.changes";
inline constexpr size_t kMaxChangeSetBytes = 8 << 20;
inline constexpr size_t kMaxChanges = 50'000;

// One path's state as the host read it: absent, or its type (file dir symlink fifo socket char
// block), mode (4 octal digits), owner and group (numbers inside the node), links (non-folders;
// "-" for a folder), extended attributes (SHA-256 of them, "-" for none) and content (a file's
// or a symlink target's SHA-256, a device's "major:minor", "opaque" for a folder that hides
// what the image had below it, "-" otherwise).
struct EntryState {
  bool present = false;
  std::string type, mode, uid, gid, links, xattrs, content;
};
inline constexpr std::string_view kAbsent = "absent";
// "absent" or the seven fields separated by single spaces; kInvalidArgument otherwise.
Result<EntryState> parse_entry(std::string_view text);
std::string entry_text(const EntryState& e);

// One change: a path of a node whose state differs from the world as built.
struct Change {
  std::string node;           // [a-z0-9][a-z0-9-]*, the node's name
  std::string path;           // absolute, normalised, inside the node
  std::string before, after;  // entry texts; they differ
};

// The canonical text: one line per change, "<node>\t<escaped path>\t<before>\t<after>\n",
// sorted by node, then path (bytes). A path's bytes at or below space, '%' and 0x7f and above
// are written %XX (two uppercase hex digits).
std::string change_set_text(std::vector<Change> changes);
// A path as the text writes it, and back (kInvalidArgument for text not in that form).
std::string escape_change_path(std::string_view path);
Result<std::string> unescape_change_path(std::string_view text);
// Reads the canonical text back: anything else (order, escapes, fields, a line whose before and
// after are equal, over kMaxChanges lines or kMaxChangeSetBytes) is kInvalidArgument naming the
// line.
Result<std::vector<Change>> parse_change_set(std::string_view text);

// The attributes (scenario::kChangeAttributes) in which `before` and `after` differ.
std::vector<std::string_view> changed_attributes(const EntryState& before, const EntryState& after);

struct ChangeJudgement {
  bool ok = false;  // every change is covered by a runtime rule or a fix rule that allows it
  // The changes outside the surface, the first few: "the fix changed /etc/ld.so.preload on web1
  // (create), which this incident's fix may not change"; empty when ok. At most 1024 bytes.
  std::string observed;
  // The fix's changes, the first few, as observed names them ("no change" when there is none);
  // at most 1024 bytes.
  std::string summary;
  // SHA-256 (64 lowercase hex) of change_set_text() of the changes no runtime rule covers: the
  // fix's own changes. Equal digests: the same changes (repeat, reversal).
  std::string fix_digest;
  size_t fix_changes = 0, runtime_changes = 0, outside = 0;
};
ChangeJudgement judge_changes(const scenario::ChangeSurface& surface,
                              const std::vector<Change>& changes);

// The fix digest of no change at all.
const std::string& empty_fix_digest();

}  // namespace aura::gate
