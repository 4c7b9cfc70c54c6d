#include "workers/services/unit.h"

#include <algorithm>
#include <charconv>

#include "engine/common/text.h"

namespace aura::services {
namespace {

bool is_name(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  const bool first_ok = (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_' || (s[0] >= '0' && s[0] <= '9');
  return first_ok && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
         });
}

bool is_absolute_clean(std::string_view p) {
  if (p.empty() || p[0] != '/' || p.size() > 1024) return false;
  size_t i = 1;
  while (i <= p.size()) {
    size_t j = p.find('/', i);
    if (j == std::string_view::npos) j = p.size();
    const std::string_view part = p.substr(i, j - i);
    if ((part.empty() && j != p.size()) || part == "." || part == "..") return false;
    i = j + 1;
  }
  return p.find('\0') == std::string_view::npos;
}

Result<uint32_t> number(std::string_view v, uint32_t lo, uint32_t hi, std::string_view where) {
  uint32_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (ec != std::errc() || ptr != v.data() + v.size() || out < lo || out > hi) {
    return Status::invalid(std::string(where) + ": must be a number in " + std::to_string(lo) +
                           ".." + std::to_string(hi));
  }
  return out;
}

std::vector<std::string> split_spaces(std::string_view v) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= v.size()) {
    size_t j = v.find(' ', i);
    if (j == std::string_view::npos) j = v.size();
    out.emplace_back(v.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

// The "key=value" lines of `text`, blank lines and '#' comments skipped; `what` names the file
// in the error for a line without '=' (or with an empty key).
struct KeyValue {
  size_t line_no = 0;
  std::string_view key, value;
};
Result<std::vector<KeyValue>> key_values(std::string_view text, const std::string& what) {
  std::vector<KeyValue> out;
  size_t line_no = 0;
  for (size_t i = 0; i < text.size();) {
    size_t j = text.find('\n', i);
    if (j == std::string_view::npos) j = text.size();
    const std::string_view line = text.substr(i, j - i);
    i = j + 1;
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == 0 || eq == std::string_view::npos) {
      return Status::invalid(what + " line " + std::to_string(line_no) + ": not key=value");
    }
    out.push_back({line_no, line.substr(0, eq), line.substr(eq + 1)});
  }
  return out;
}

}  // namespace

std::string_view restart_name(Restart r) {
  switch (r) {
    case Restart::kNo:
      return "no";
    case Restart::kOnFailure:
      return "on-failure";
    case Restart::kAlways:
      return "always";
  }
  return "?";
}

bool is_valid_unit_name(std::string_view name) {
  return !name.empty() && name[0] >= 'a' && name[0] <= 'z' && is_name(name, 32);
}

Result<Unit> parse_unit(std::string_view name, std::string_view text) {
  if (!is_valid_unit_name(name)) {
    return Status::invalid("unit name \"" + safe_text(name, 64) + "\" is not [a-z][a-z0-9-]{0,31}");
  }
  if (text.size() > kMaxUnitBytes)
    return Status::invalid("unit " + std::string(name) + ": too large");
  if (!is_valid_utf8(text)) return Status::invalid("unit " + std::string(name) + ": not UTF-8");
  Unit u;
  u.name = std::string(name);
  u.working_directory = "/";
  std::vector<std::string> seen;
  std::vector<KeyValue> lines;
  AURA_ASSIGN_OR_RETURN(lines, key_values(text, "unit " + u.name));
  for (const KeyValue& kv : lines) {
    const std::string where = "unit " + u.name + " line " + std::to_string(kv.line_no);
    const std::string key(kv.key);
    const std::string_view v = kv.value;
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return Status::invalid(where + ": " + key + " given twice");
    }
    seen.push_back(key);
    const std::string at = where + " (" + key + ")";
    if (key == "exec") {
      u.exec = split_spaces(v);
      if (u.exec.size() > kMaxArgs) return Status::invalid(at + ": too many arguments");
      if (!is_absolute_clean(u.exec[0])) return Status::invalid(at + ": not an absolute path");
      for (const auto& a : u.exec) {
        if (a.empty()) return Status::invalid(at + ": empty argument (one space between each)");
      }
    } else if (key == "user" || key == "group") {
      if (!is_name(v, 32)) return Status::invalid(at + ": not a user/group name or number");
      (key == "user" ? u.user : u.group) = std::string(v);
    } else if (key == "supplementary_groups") {
      for (const auto& g : split_spaces(v)) {
        if (!is_name(g, 32)) return Status::invalid(at + ": \"" + g + "\" is not a group name");
        u.supplementary_groups.push_back(g);
      }
      if (u.supplementary_groups.size() > 32) return Status::invalid(at + ": too many groups");
    } else if (key == "working_directory" || key == "environment_file") {
      if (!is_absolute_clean(v)) return Status::invalid(at + ": not an absolute clean path");
      (key == "working_directory" ? u.working_directory : u.environment_file) = std::string(v);
    } else if (key == "restart") {
      if (v == "no")
        u.restart = Restart::kNo;
      else if (v == "on-failure")
        u.restart = Restart::kOnFailure;
      else if (v == "always")
        u.restart = Restart::kAlways;
      else
        return Status::invalid(at + ": must be no, on-failure or always");
    } else if (key == "restart_delay_ms") {
      AURA_ASSIGN_OR_RETURN(u.restart_delay_ms, number(v, 10, 60'000, at));
    } else if (key == "start_limit") {
      AURA_ASSIGN_OR_RETURN(u.start_limit, number(v, 1, 100, at));
    } else if (key == "start_limit_window_ms") {
      AURA_ASSIGN_OR_RETURN(u.start_limit_window_ms, number(v, 100, 600'000, at));
    } else {
      return Status::invalid(where + ": unknown key \"" + safe_text(key, 64) + "\"");
    }
  }
  if (u.exec.empty()) return Status::invalid("unit " + u.name + ": no exec=");
  if (u.user.empty()) {
    return Status::invalid("unit " + u.name +
                           ": no user= (a service never runs as root by default)");
  }
  return u;
}

Result<std::vector<std::string>> parse_environment_file(std::string_view text) {
  if (text.size() > kMaxEnvFileBytes) return Status::invalid("environment file too large");
  if (!is_valid_utf8(text)) return Status::invalid("environment file is not UTF-8");
  std::vector<std::string> out;
  std::vector<KeyValue> lines;
  AURA_ASSIGN_OR_RETURN(lines, key_values(text, "environment file"));
  for (const KeyValue& kv : lines) {
    const std::string where = "environment file line " + std::to_string(kv.line_no);
    const std::string_view key = kv.key;
    const bool key_ok =
        !(key[0] >= '0' && key[0] <= '9') && std::all_of(key.begin(), key.end(), [](char c) {
          return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        });
    if (!key_ok) return Status::invalid(where + ": key is not [A-Z_][A-Z0-9_]*");
    if (out.size() == kMaxEnvEntries) return Status::invalid(where + ": too many entries");
    out.push_back(std::string(kv.key) + "=" + std::string(kv.value));
  }
  return out;
}

}  // namespace aura::services
