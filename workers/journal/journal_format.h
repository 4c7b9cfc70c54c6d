// The undo journal's entry format, one for every world driver (docs/formats/journal.md): entry
// NNNNNN is NNNNNN.json, a JSON object whose first member is the format version "v", and, for a
// regular file that existed, NNNNNN.data with its previous bytes. The .json is written last: it
// is the entry, and a .data without one is an orphan. A reader refuses an unknown version and a
// malformed entry (fail closed): undo never restores from an entry it does not understand.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "engine/common/status.h"

namespace aura::journal {

inline constexpr int64_t kVersion = 1;
inline constexpr size_t kNameDigits = 6;                // NNNNNN
inline constexpr uint64_t kMaxEntries = 999'999;        // what six digits hold
inline constexpr size_t kMaxDataBytes = 16 << 20;       // NNNNNN.data: a file's saved bytes
inline constexpr size_t kMaxEntryJsonBytes = 16 << 10;  // NNNNNN.json
inline constexpr size_t kMaxPathBytes = 4096;           // PATH_MAX
inline constexpr std::string_view kEntryExt = "json";
inline constexpr std::string_view kDataExt = "data";
static_assert(kMaxEntries < 1'000'000, "entry numbers are six decimal digits");
static_assert(kMaxPathBytes + 256 < kMaxEntryJsonBytes, "an entry's JSON holds its longest path");

// One path's state before an action changed it.
struct Entry {
  std::string path;           // absolute, normalised
  bool existed = false;       // false: undo removes what is at the path
  std::string type = "file";  // file | dir | symlink (the last only for a chown of the link)
  mode_t mode = 0;            // permission bits (07777); 0 when it did not exist
  uid_t uid = 0;              // owner; 0 when it did not exist
  gid_t gid = 0;
  std::optional<std::string> bytes;  // a regular file's previous content (NNNNNN.data)
};

// "000042.json", "000042.data". REQUIRES: 1 <= seq <= kMaxEntries.
std::string entry_name(uint64_t seq, std::string_view ext);
// The number and extension of an entry's file name; nullopt for any other name.
std::optional<std::pair<uint64_t, std::string>> parse_entry_name(std::string_view name);

// The .json bytes of `e`: members in the order v, path, existed, mode, uid, gid, type, and
// "bytes" (the .data file's size) exactly when e.bytes holds a content.
std::string encode_entry(const Entry& e);

// What an entry's .json says. `entry.bytes` is not read here: when `data_bytes` is set, the
// caller reads NNNNNN.data and refuses it unless it holds exactly that many bytes.
struct Decoded {
  Entry entry;
  std::optional<uint64_t> data_bytes;
};
// Decodes an entry's .json, strictly: kCorruption naming what is wrong ("version 2 is not one
// this reader knows (1)", "path: not a normalised absolute path", "uid: unknown member" ...)
// for an unknown version, invalid JSON, a duplicate, unknown, missing or mistyped member, a
// value out of range, or "bytes" present anywhere but on a regular file that existed.
Result<Decoded> decode_entry(std::string_view json);

}  // namespace aura::journal
