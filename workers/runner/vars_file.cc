#include "workers/runner/vars_file.h"

#include <vector>

namespace aura::runner {
namespace {

// The text's lines, each with its '\n' when it has one.
std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    out.push_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

// The value part when `line` sets `key` at column 0 ("key:" then a space, a tab or the end).
std::optional<std::string_view> value_part(std::string_view line, std::string_view key) {
  if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ':')
    return std::nullopt;
  std::string_view rest = line.substr(key.size() + 1);
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == '\r')) rest.remove_suffix(1);
  if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t') return std::nullopt;
  return rest;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The text with every entry of `key` (its line and the indented lines under it)
// removed, and `line` in place of the last one; nullopt when no line sets the key.
std::optional<std::string> rewrite(std::string_view text, std::string_view key,
                                   std::string_view line) {
  const auto lines = lines_of(text);
  std::optional<size_t> last;
  for (size_t i = 0; i < lines.size(); ++i)
    if (value_part(lines[i], key)) last = i;
  if (!last) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    if (!value_part(lines[i], key)) {
      out.append(lines[i++]);
      continue;
    }
    if (i == *last) out.append(line);  // earlier duplicates go: the file ends with one setting
    for (++i; i < lines.size() && !lines[i].empty() && (lines[i][0] == ' ' || lines[i][0] == '\t');)
      ++i;
  }
  return out;
}

}  // namespace

bool is_var_key(std::string_view key) {
  if (key.empty() || key.size() > 64) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    const char c = key[i];
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && (i == 0 || !(c >= '0' && c <= '9'))) return false;
  }
  return true;
}

bool is_plain_var_value(std::string_view value) {
  if (value.empty() || value.size() > 256 || value.front() == '-') return false;
  for (char c : value) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '/' || c == ':' || c == '@' || c == '+' ||
                    c == '-';
    if (!ok) return false;
  }
  return true;
}

std::optional<std::string> vars_get(std::string_view text, std::string_view key) {
  std::optional<std::string_view> found;
  for (std::string_view l : lines_of(text))
    if (auto v = value_part(l, key)) found = v;  // the last line wins
  if (!found) return std::nullopt;
  std::string_view v = trim(*found);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) {
    const size_t close = v.find(v.front(), 1);
    if (close != std::string_view::npos) return std::string(v.substr(1, close - 1));
  }
  if (const size_t hash = v.find(" #"); hash != std::string_view::npos) v = trim(v.substr(0, hash));
  return std::string(v);
}

Result<std::string> vars_unset(std::string_view text, std::string_view key) {
  auto out = rewrite(text, key, "");
  if (!out) return Status::not_found("no top-level \"" + std::string(key) + ":\" line");
  return std::move(*out);
}

std::string vars_set(std::string_view text, std::string_view key, std::string_view value) {
  const std::string line = std::string(key) + ": " + std::string(value) + "\n";
  if (auto out = rewrite(text, key, line)) return std::move(*out);
  std::string out(text);
  if (!out.empty() && out.back() != '\n') out += '\n';
  return out + line;
}

std::vector<std::string> vars_keys(std::string_view text) {
  std::vector<std::string> keys;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line[0] == '#' || line[0] == ' ' || line[0] == '\t' || line == "---" ||
        line == "...")
      continue;
    const size_t colon = line.find(':');
    const std::string key(line.substr(0, colon == std::string_view::npos ? 0 : colon));
    keys.push_back(is_var_key(key) && colon + 1 <= line.size() &&
                           (colon + 1 == line.size() || line[colon + 1] == ' ')
                       ? key
                       : "?" + std::string(line.substr(0, 64)));
  }
  return keys;
}

}  // namespace aura::runner
