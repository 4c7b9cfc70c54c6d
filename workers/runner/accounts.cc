#include "workers/runner/accounts.h"

#include <charconv>

#include "workers/runner/node_fs.h"

namespace aura::runner {
namespace {

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == std::string_view::npos) {
      out.push_back(s.substr(start));
      return out;
    }
    out.push_back(s.substr(start, at - start));
    start = at + 1;
  }
}

bool skipped(std::string_view line) {
  return line.empty() || line.front() == '#' || line.front() == '+' || line.front() == '-';
}

Result<std::string> read_table(std::string_view path) {
  auto r = read_system_file(std::string(path));
  if (!r.ok() && r.status().code() == ErrorCode::kNotFound) return std::string();
  return r;
}

template <class Entry, class Parse>
std::vector<Entry> parse_lines(const std::string& text, Parse parse) {
  std::vector<Entry> out;
  for (std::string_view line : split(text, '\n')) {
    if (skipped(line)) continue;
    if (auto e = parse(line)) out.push_back(std::move(*e));
  }
  return out;
}

std::optional<PasswdEntry> parse_passwd_line(std::string_view line) {
  const auto f = split(line, ':');
  if (f.size() != 7 || f[0].empty()) return std::nullopt;
  const auto uid = parse_id(f[2]);
  const auto gid = parse_id(f[3]);
  if (!uid || !gid) return std::nullopt;
  return PasswdEntry{std::string(f[0]), *uid, *gid, std::string(f[5]), std::string(f[6])};
}

template <class Entry>
const Entry* find_by(const std::vector<Entry>& list, std::string_view name_or_id,
                     uint32_t Entry::*id) {
  for (const Entry& e : list)
    if (e.name == name_or_id) return &e;
  if (auto n = parse_id(name_or_id)) {
    for (const Entry& e : list)
      if (e.*id == *n) return &e;
  }
  return nullptr;
}

}  // namespace

std::optional<uint32_t> parse_id(std::string_view s) {
  uint32_t v = 0;
  if (s.empty() || s.size() > 10) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v == UINT32_MAX) return std::nullopt;
  return v;
}

std::optional<GroupEntry> parse_group_line(std::string_view line) {
  const auto f = split(line, ':');
  if (f.size() != 4 || f[0].empty()) return std::nullopt;
  const auto gid = parse_id(f[2]);
  if (!gid) return std::nullopt;
  GroupEntry g{std::string(f[0]), *gid, {}};
  if (!f[3].empty()) {
    for (std::string_view m : split(f[3], ','))
      if (!m.empty()) g.members.emplace_back(m);
  }
  return g;
}

Result<Accounts> Accounts::load() {
  std::string passwd, group;
  AURA_ASSIGN_OR_RETURN(passwd, read_table(kPasswdPath));
  AURA_ASSIGN_OR_RETURN(group, read_table(kGroupPath));
  return parse(passwd, group);
}

Accounts Accounts::parse(std::string_view passwd, std::string_view group) {
  Accounts a;
  a.users_ = parse_lines<PasswdEntry>(std::string(passwd), parse_passwd_line);
  a.groups_ = parse_lines<GroupEntry>(std::string(group), parse_group_line);
  return a;
}

const PasswdEntry* Accounts::find_user(std::string_view name_or_id) const {
  return find_by(users_, name_or_id, &PasswdEntry::uid);
}
const GroupEntry* Accounts::find_group(std::string_view name_or_id) const {
  return find_by(groups_, name_or_id, &GroupEntry::gid);
}

const PasswdEntry* Accounts::user_by_id(uint32_t uid) const {
  for (const auto& u : users_)
    if (u.uid == uid) return &u;
  return nullptr;
}
const GroupEntry* Accounts::group_by_id(uint32_t gid) const {
  for (const auto& g : groups_)
    if (g.gid == gid) return &g;
  return nullptr;
}

std::string Accounts::user_name(uint32_t uid) const {
  const PasswdEntry* u = user_by_id(uid);
  return u ? u->name : std::to_string(uid);
}
std::string Accounts::group_name(uint32_t gid) const {
  const GroupEntry* g = group_by_id(gid);
  return g ? g->name : std::to_string(gid);
}

}  // namespace aura::runner
