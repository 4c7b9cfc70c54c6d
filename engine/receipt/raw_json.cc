#include "engine/receipt/raw_json.h"

#include <algorithm>

#include "engine/json/json_reader.h"

namespace aura::receipt {
namespace {

constexpr size_t kNpos = std::string_view::npos;

// One past the string that starts with the quote at s[i], or kNpos.
size_t skip_string(std::string_view s, size_t i) {
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return kNpos;
}

// One past the compact JSON value that starts at s[i], or kNpos.
size_t skip_value(std::string_view s, size_t i) {
  if (i >= s.size()) return kNpos;
  if (s[i] == '"') return skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    size_t depth = 0;
    while (i < s.size()) {
      const char c = s[i];
      if (c == '"') {
        i = skip_string(s, i);
        if (i == kNpos) return kNpos;
        continue;
      }
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return kNpos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']') ++i;
  return i;
}

}  // namespace

Result<std::string> minify_json(std::string_view text, size_t max_bytes, std::string_view what) {
  json::Limits limits;
  limits.max_bytes = max_bytes;
  limits.max_depth = kMaxRawJsonDepth;
  // Whoever reads the members bounds them; here the document's size bounds them all.
  limits.max_members = json::kUnbounded;
  limits.max_elements = json::kUnbounded;
  limits.max_string_bytes = json::kUnbounded;
  limits.style = json::PathStyle::kRelative;
  limits.prefix = std::string(what) + ": ";
  json::Reader reader(std::move(limits));
  AURA_RETURN_IF_ERROR(reader.parse(text).status());
  return without_whitespace(text);
}

std::string without_whitespace(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false;
  bool escaped = false;
  for (const char c : json) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      out += c;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '"') in_string = true;
    out += c;
  }
  return out;
}

Result<std::vector<RawMember>> raw_members(std::string_view s, std::string_view what) {
  const std::string w(what);
  const auto malformed = [&](size_t at) {
    return Status::invalid(w + ": malformed compact JSON object at byte " + std::to_string(at));
  };
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') {
    return Status::invalid(w + ": not a JSON object");
  }
  std::vector<RawMember> out;
  size_t i = 1;
  if (s[i] == '}') {
    if (i + 1 != s.size()) return malformed(i);
    return out;
  }
  while (true) {
    if (s[i] != '"') return malformed(i);
    const size_t key_end = skip_string(s, i);
    if (key_end == kNpos || key_end >= s.size() || s[key_end] != ':') return malformed(i);
    const std::string_view key = s.substr(i + 1, key_end - i - 2);
    if (key.find('\\') != kNpos) return Status::invalid(w + ": a member name holds an escape");
    for (const auto& m : out) {
      if (m.key == key)
        return Status::invalid(w + ": duplicate member \"" + std::string(key) + "\"");
    }
    const size_t value_start = key_end + 1;
    const size_t value_end = skip_value(s, value_start);
    if (value_end == kNpos || value_end >= s.size() || value_end == value_start) {
      return malformed(value_start);
    }
    out.push_back({key, s.substr(value_start, value_end - value_start)});
    if (s[value_end] == '}') {
      if (value_end + 1 != s.size()) return malformed(value_end);
      return out;
    }
    if (s[value_end] != ',') return malformed(value_end);
    i = value_end + 1;
  }
}

Result<std::string_view> raw_member(const std::vector<RawMember>& members, std::string_view key,
                                    std::string_view what) {
  for (const auto& m : members) {
    if (m.key == key) return m.value;
  }
  return Status::invalid(std::string(what) + ": no member \"" + std::string(key) + "\"");
}

Status check_unique_members(simdjson::dom::object object, std::string_view what) {
  std::vector<std::string_view> seen;
  for (auto field : object) {
    if (std::find(seen.begin(), seen.end(), field.key) != seen.end()) {
      return Status::invalid(std::string(what) + ": duplicate member \"" + std::string(field.key) +
                             "\"");
    }
    seen.push_back(field.key);
  }
  return Status::ok();
}

}  // namespace aura::receipt
