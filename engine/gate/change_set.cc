#include "engine/gate/change_set.h"

#include <algorithm>
#include <array>

#include "engine/crypto/sha256.h"

namespace aura::gate {
namespace {

constexpr std::array<std::string_view, 7> kTypes = {"file",   "dir",  "symlink", "fifo",
                                                    "socket", "char", "block"};
constexpr size_t kMaxObservedBytes = 1024;
constexpr size_t kMaxNodeBytes = 64;
constexpr size_t kMaxPathBytes = 4096;

bool all_of(std::string_view s, bool (*pred)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), pred);
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_octal(char c) { return c >= '0' && c <= '7'; }
bool is_node_char(char c) { return (c >= 'a' && c <= 'z') || is_digit(c) || c == '-' || c == '_'; }
bool is_number(std::string_view s) { return s.size() <= 10 && all_of(s, is_digit); }

Status bad_entry(std::string_view text, std::string_view why) {
  return Status::invalid("entry \"" + std::string(text.substr(0, 160)) + "\": " + std::string(why));
}

std::string escape_path(std::string_view p) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : p) {
    if (c <= 0x20 || c == '%' || c >= 0x7f) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += char(c);
    }
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> unescape_path(std::string_view e) {
  std::string out;
  for (size_t i = 0; i < e.size(); ++i) {
    if (e[i] != '%') {
      out += e[i];
      continue;
    }
    const int hi = i + 2 < e.size() ? hex_value(e[i + 1]) : -1;
    const int lo = i + 2 < e.size() ? hex_value(e[i + 2]) : -1;
    if (hi < 0 || lo < 0) return Status::invalid("a '%' not followed by two uppercase hex digits");
    out += char(hi * 16 + lo);
    i += 2;
  }
  if (escape_path(out) != e) return Status::invalid("a path not in its canonical escaping");
  return out;
}

bool normalised_absolute(std::string_view p) {
  if (p.empty() || p[0] != '/' || p.size() > kMaxPathBytes) return false;
  if (p == "/") return true;
  if (p.back() == '/') return false;
  for (size_t at = 1; at <= p.size();) {
    const size_t end = std::min(p.find('/', at), p.size());
    const std::string_view part = p.substr(at, end - at);
    if (part.empty() || part == "." || part == ".." || part.find('\0') != part.npos) return false;
    at = end + 1;
  }
  return true;
}

bool operator_less(const Change& a, const Change& b) {
  return a.node != b.node ? a.node < b.node : a.path < b.path;
}

// "mode 0750 -> 0777" and the like: what one attribute of a change did.
std::string attribute_text(std::string_view attr, const EntryState& b, const EntryState& a) {
  if (attr == "create") return "created (" + a.type + ")";
  if (attr == "remove") return "removed";
  if (attr == "type") return "type " + b.type + " -> " + a.type;
  if (attr == "content") return "content";
  if (attr == "mode") return "mode " + b.mode + " -> " + a.mode;
  if (attr == "owner") return "owner " + b.uid + " -> " + a.uid;
  if (attr == "group") return "group " + b.gid + " -> " + a.gid;
  if (attr == "links") return "links " + b.links + " -> " + a.links;
  return "extended attributes (ACLs)";
}

}  // namespace

std::string escape_change_path(std::string_view path) { return escape_path(path); }
Result<std::string> unescape_change_path(std::string_view text) { return unescape_path(text); }

Result<EntryState> parse_entry(std::string_view text) {
  EntryState e;
  if (text == kAbsent) return e;
  std::vector<std::string_view> f;
  for (size_t at = 0; at <= text.size();) {
    const size_t end = std::min(text.find(' ', at), text.size());
    f.push_back(text.substr(at, end - at));
    at = end + 1;
  }
  if (f.size() != 7) return bad_entry(text, "not \"absent\" or 7 fields");
  if (std::find(kTypes.begin(), kTypes.end(), f[0]) == kTypes.end())
    return bad_entry(text, "unknown type");
  if (f[1].size() != 4 || !all_of(f[1], is_octal)) return bad_entry(text, "mode");
  if (!is_number(f[2]) || !is_number(f[3])) return bad_entry(text, "owner or group");
  if (f[0] == "dir" ? f[4] != "-" : !is_number(f[4])) return bad_entry(text, "links");
  if (f[5] != "-" && !is_lower_hex64(f[5])) return bad_entry(text, "extended attributes");
  const std::string_view c = f[6];
  bool content_ok = false;
  if (f[0] == "file" || f[0] == "symlink") {
    content_ok = is_lower_hex64(c);
  } else if (f[0] == "char" || f[0] == "block") {
    const size_t colon = c.find(':');
    content_ok = colon != c.npos && is_number(c.substr(0, colon)) && is_number(c.substr(colon + 1));
  } else if (f[0] == "dir") {
    content_ok = c == "-" || c == "opaque";
  } else {
    content_ok = c == "-";
  }
  if (!content_ok) return bad_entry(text, "content");
  e.present = true;
  e.type = f[0];
  e.mode = f[1];
  e.uid = f[2];
  e.gid = f[3];
  e.links = f[4];
  e.xattrs = f[5];
  e.content = f[6];
  return e;
}

std::string entry_text(const EntryState& e) {
  if (!e.present) return std::string(kAbsent);
  return e.type + " " + e.mode + " " + e.uid + " " + e.gid + " " + e.links + " " + e.xattrs + " " +
         e.content;
}

std::string change_set_text(std::vector<Change> changes) {
  std::sort(changes.begin(), changes.end(), operator_less);
  std::string out;
  for (const Change& c : changes)
    out += c.node + "\t" + escape_path(c.path) + "\t" + c.before + "\t" + c.after + "\n";
  return out;
}

Result<std::vector<Change>> parse_change_set(std::string_view text) {
  if (text.size() > kMaxChangeSetBytes)
    return Status::invalid("change set: over " + std::to_string(kMaxChangeSetBytes) + " bytes");
  std::vector<Change> out;
  size_t line = 0;
  for (size_t at = 0; at < text.size();) {
    ++line;
    const size_t end = text.find('\n', at);
    auto bad = [&](std::string_view why) {
      return Status::invalid("change set: line " + std::to_string(line) + ": " + std::string(why));
    };
    if (end == std::string_view::npos) return bad("not ended by a newline");
    if (out.size() == kMaxChanges) return bad("over " + std::to_string(kMaxChanges) + " changes");
    const std::string_view l = text.substr(at, end - at);
    at = end + 1;
    std::array<std::string_view, 4> f;
    size_t from = 0;
    for (size_t i = 0; i < 4; ++i) {
      const size_t tab = i < 3 ? l.find('\t', from) : l.size();
      if (tab == std::string_view::npos) return bad("not 4 tab-separated fields");
      f[i] = l.substr(from, tab - from);
      from = tab + 1;
    }
    if (f[3].find('\t') != std::string_view::npos) return bad("not 4 tab-separated fields");
    Change c;
    if (f[0].size() > kMaxNodeBytes || !all_of(f[0], is_node_char)) return bad("node name");
    c.node = std::string(f[0]);
    auto path = unescape_path(f[1]);
    if (!path.ok()) return bad(path.status().message());
    if (!normalised_absolute(*path)) return bad("path is not absolute and normalised");
    c.path = std::move(path).value();
    for (size_t i : {2u, 3u}) {
      auto e = parse_entry(f[i]);
      if (!e.ok()) return bad(e.status().message());
    }
    if (f[2] == f[3]) return bad("before and after are the same");
    c.before = std::string(f[2]);
    c.after = std::string(f[3]);
    if (!out.empty() && !operator_less(out.back(), c)) return bad("out of order or repeated");
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::string_view> changed_attributes(const EntryState& b, const EntryState& a) {
  std::vector<std::string_view> out;
  if (!b.present && !a.present) return out;
  if (!b.present) return {"create"};
  if (!a.present) return {"remove"};
  if (b.type != a.type) out.push_back("type");
  if (b.content != a.content) out.push_back("content");
  if (b.mode != a.mode) out.push_back("mode");
  if (b.uid != a.uid) out.push_back("owner");
  if (b.gid != a.gid) out.push_back("group");
  if (b.links != a.links) out.push_back("links");
  if (b.xattrs != a.xattrs) out.push_back("xattrs");
  return out;
}

ChangeJudgement judge_changes(const scenario::ChangeSurface& surface,
                              const std::vector<Change>& changes) {
  ChangeJudgement j;
  auto covers = [](const scenario::SurfaceRule& r, std::string_view path) {
    return std::any_of(r.paths.begin(), r.paths.end(), [&](const std::string& p) {
      return scenario::path_pattern_matches(p, path);
    });
  };
  std::vector<Change> fix;
  std::string listed, summary;
  for (const Change& c : changes) {
    if (std::any_of(surface.runtime.begin(), surface.runtime.end(),
                    [&](const auto& r) { return covers(r, c.path); })) {
      ++j.runtime_changes;
      continue;
    }
    fix.push_back(c);
    // parse_change_set validated both entries; an unparsable one is outside every rule.
    auto b = parse_entry(c.before), a = parse_entry(c.after);
    const auto attrs =
        b.ok() && a.ok() ? changed_attributes(*b, *a) : std::vector<std::string_view>{"type"};
    auto described = [&] {
      std::string what;
      for (auto w : attrs) {
        if (!what.empty()) what += ", ";
        what += b.ok() && a.ok() ? attribute_text(w, *b, *a) : std::string(w);
      }
      return c.path + " on " + c.node + " (" + what + ")";
    };
    if (fix.size() <= 3) summary += (summary.empty() ? "" : "; ") + described();
    const bool allowed = std::any_of(surface.fix.begin(), surface.fix.end(), [&](const auto& r) {
      return covers(r, c.path) && std::all_of(attrs.begin(), attrs.end(), [&](auto w) {
               return std::find(r.what.begin(), r.what.end(), w) != r.what.end();
             });
    });
    if (allowed) continue;
    ++j.outside;
    if (j.outside > 3) continue;
    listed += (listed.empty() ? "" : "; ") + described();
  }
  j.fix_changes = fix.size();
  auto bound = [](std::string& text) {
    if (text.size() <= kMaxObservedBytes) return;
    text.resize(kMaxObservedBytes - 3);
    text += "...";
  };
  j.summary = fix.empty() ? "no change" : std::to_string(fix.size()) + " changed: " + summary;
  if (fix.size() > 3) j.summary += " and " + std::to_string(fix.size() - 3) + " more";
  bound(j.summary);
  j.fix_digest = to_hex(sha256(change_set_text(std::move(fix))));
  j.ok = j.outside == 0;
  if (!j.ok) {
    j.observed = "the fix changed " + listed;
    if (j.outside > 3) j.observed += " and " + std::to_string(j.outside - 3) + " more paths";
    j.observed += ", which this incident's fix may not change";
    bound(j.observed);
  }
  return j;
}

const std::string& empty_fix_digest() {
  static const std::string digest = to_hex(sha256(std::string_view()));
  return digest;
}

}  // namespace aura::gate
