#include "workers/journal/journal_format.h"

#include <simdjson.h>

#include <array>
#include <charconv>
#include <cstdio>

#include "engine/common/json_writer.h"
#include "engine/scenario/call.h"
#include "engine/scenario/call_dom.h"

namespace aura::journal {
namespace {

namespace json = scenario::call_reader;

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", unsigned(mode & 07777));
  return buf;
}

Status bad(std::string why) { return Status::corruption(std::move(why)); }

}  // namespace

std::string entry_name(uint64_t seq, std::string_view ext) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06llu.", static_cast<unsigned long long>(seq));
  return buf + std::string(ext);
}

std::optional<std::pair<uint64_t, std::string>> parse_entry_name(std::string_view name) {
  if (name.size() != kNameDigits + 5 || name[kNameDigits] != '.') return std::nullopt;
  const std::string_view ext = name.substr(kNameDigits + 1);
  if (ext != kEntryExt && ext != kDataExt) return std::nullopt;
  uint64_t seq = 0;
  auto [p, ec] = std::from_chars(name.data(), name.data() + kNameDigits, seq);
  if (ec != std::errc() || p != name.data() + kNameDigits) return std::nullopt;
  return std::make_pair(seq, std::string(ext));
}

std::string encode_entry(const Entry& e) {
  JsonWriter w;
  w.num("v", kVersion)
      .str("path", e.path)
      .boolean("existed", e.existed)
      .str("mode", mode_text(e.mode))
      .num("uid", uint64_t(e.uid))
      .num("gid", uint64_t(e.gid))
      .str("type", e.type);
  if (e.bytes) w.num("bytes", uint64_t(e.bytes->size()));
  return w.done();
}

Result<Decoded> decode_entry(std::string_view text) {
  if (text.size() > kMaxEntryJsonBytes)
    return bad("larger than " + std::to_string(kMaxEntryJsonBytes) + " bytes");
  simdjson::dom::parser parser;
  auto root = json::parse_strict(parser, text, 1, "");
  if (!root.ok()) return bad(root.status().message());
  simdjson::dom::object object;
  if (root->get_object().get(object) != simdjson::SUCCESS) return bad("not a JSON object");
  // The version first: an entry of another version is refused as such, whatever its members.
  auto first = object.begin();
  int64_t v = 0;
  if (first == object.end() || (*first).key != "v") return bad("no version (\"v\" first)");
  if ((*first).value.get_int64().get(v) != simdjson::SUCCESS)
    return bad("v: not an integer version");
  if (v != kVersion)
    return bad("version " + std::to_string(v) + " is not one this reader knows (" +
               std::to_string(kVersion) + ")");

  static constexpr std::array<std::string_view, 8> kNames = {"v",   "path", "existed", "mode",
                                                             "uid", "gid",  "type",    "bytes"};
  auto members = json::members_of(*root, "", kNames);
  if (!members.ok()) return bad(members.status().message());
  const auto& m = *members;
  for (size_t i = 0; i + 1 < kNames.size(); ++i)
    if (!m[i]) return bad(std::string(kNames[i]) + ": required");

  Decoded d;
  Entry& e = d.entry;
  std::string_view path, mode, type;
  uint64_t uid = 0, gid = 0;
  if (m[1]->get_string().get(path) != simdjson::SUCCESS) return bad("path: not a string");
  if (path.size() > kMaxPathBytes || !scenario::is_normalised_absolute_path(path))
    return bad("path: not a normalised absolute path");
  if (m[2]->get_bool().get(e.existed) != simdjson::SUCCESS) return bad("existed: not a boolean");
  if (m[3]->get_string().get(mode) != simdjson::SUCCESS || mode.size() != 4)
    return bad("mode: not 4 octal digits");
  for (char c : mode) {
    if (c < '0' || c > '7') return bad("mode: not 4 octal digits");
    e.mode = e.mode * 8 + mode_t(c - '0');
  }
  if (m[4]->get_uint64().get(uid) != simdjson::SUCCESS || uid > UINT32_MAX)
    return bad("uid: not an id");
  if (m[5]->get_uint64().get(gid) != simdjson::SUCCESS || gid > UINT32_MAX)
    return bad("gid: not an id");
  if (m[6]->get_string().get(type) != simdjson::SUCCESS ||
      (type != "file" && type != "dir" && type != "symlink"))
    return bad("type: not file, dir or symlink");
  e.path = std::string(path);
  e.uid = uid_t(uid);
  e.gid = gid_t(gid);
  e.type = std::string(type);
  const bool has_data = e.existed && e.type == "file";
  if (m[7]) {
    uint64_t bytes = 0;
    if (!has_data) return bad("bytes: only a regular file that existed has saved bytes");
    if (m[7]->get_uint64().get(bytes) != simdjson::SUCCESS || bytes > kMaxDataBytes)
      return bad("bytes: not a size up to " + std::to_string(kMaxDataBytes));
    d.data_bytes = bytes;
  } else if (has_data) {
    return bad("bytes: required for a regular file that existed");
  }
  return d;
}

}  // namespace aura::journal
