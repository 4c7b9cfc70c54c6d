#include "workers/runner/vars_file.h"

#include <vector>

namespace aura::runner {
namespace {

struct Line {
  size_t begin = 0, end = 0;  // [begin, end) including the '\n' when there is one
};

std::vector<Line> lines_of(std::string_view text) {
  std::vector<Line> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = text.find('\n', at);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    out.push_back({at, end});
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

// Lines [i+1, j) indented under the key at line i (or blank).
size_t end_of_entry(std::string_view text, const std::vector<Line>& lines, size_t i) {
  size_t j = i + 1;
  while (j < lines.size()) {
    const std::string_view l = text.substr(lines[j].begin, lines[j].end - lines[j].begin);
    if (l.empty() || (l[0] != ' ' && l[0] != '\t')) break;
    ++j;
  }
  return j;
}

std::optional<size_t> last_line_of(std::string_view text, const std::vector<Line>& lines,
                                   std::string_view key) {
  std::optional<size_t> found;
  for (size_t i = 0; i < lines.size(); ++i)
    if (value_part(text.substr(lines[i].begin, lines[i].end - lines[i].begin), key)) found = i;
  return found;
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
  const auto lines = lines_of(text);
  const auto i = last_line_of(text, lines, key);
  if (!i) return std::nullopt;
  std::string_view v =
      trim(*value_part(text.substr(lines[*i].begin, lines[*i].end - lines[*i].begin), key));
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'')) {
    const size_t close = v.find(v.front(), 1);
    if (close != std::string_view::npos) return std::string(v.substr(1, close - 1));
  }
  if (const size_t hash = v.find(" #"); hash != std::string_view::npos) v = trim(v.substr(0, hash));
  return std::string(v);
}

Result<std::string> vars_unset(std::string_view text, std::string_view key) {
  const auto lines = lines_of(text);
  std::string out;
  bool removed = false;
  for (size_t i = 0; i < lines.size();) {
    const std::string_view l = text.substr(lines[i].begin, lines[i].end - lines[i].begin);
    if (value_part(l, key)) {
      i = end_of_entry(text, lines, i);
      removed = true;
      continue;
    }
    out.append(l);
    ++i;
  }
  if (!removed) return Status::not_found("no top-level \"" + std::string(key) + ":\" line");
  return out;
}

std::string vars_set(std::string_view text, std::string_view key, std::string_view value) {
  const std::string line = std::string(key) + ": " + std::string(value) + "\n";
  const auto lines = lines_of(text);
  const auto at = last_line_of(text, lines, key);
  if (!at) {
    std::string out(text);
    if (!out.empty() && out.back() != '\n') out += '\n';
    return out + line;
  }
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    const std::string_view l = text.substr(lines[i].begin, lines[i].end - lines[i].begin);
    if (value_part(l, key)) {
      if (i == *at) out += line;  // earlier duplicates go: the file ends with one setting
      i = end_of_entry(text, lines, i);
      continue;
    }
    out.append(l);
    ++i;
  }
  return out;
}

}  // namespace aura::runner
