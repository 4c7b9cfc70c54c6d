// The node's users and groups, read from its own /etc/passwd and /etc/group (never NSS, which
// would consult the host's configuration): names for numbers, numbers for names, and the
// groups that list a user. Malformed lines, comments and NIS +/- lines are skipped, as NSS does.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::runner {

inline constexpr std::string_view kPasswdPath = "/etc/passwd";
inline constexpr std::string_view kGroupPath = "/etc/group";

struct PasswdEntry {
  std::string name;
  uint32_t uid = 0;
  uint32_t gid = 0;
  std::string home, shell;
};

struct GroupEntry {
  std::string name;
  uint32_t gid = 0;
  std::vector<std::string> members;
};

// One /etc/group line split into its four fields; nullopt when it is not a group line.
std::optional<GroupEntry> parse_group_line(std::string_view line);

class Accounts {
 public:
  // Reads both files; a missing file is an empty table, any other read failure an error.
  static Result<Accounts> load();
  // The tables from the two files' text (the supervisor reads a node's files from outside).
  static Accounts parse(std::string_view passwd, std::string_view group);

  const std::vector<PasswdEntry>& users() const { return users_; }
  const std::vector<GroupEntry>& groups() const { return groups_; }

  // The first entry with that name, or, for a decimal number, that id.
  const PasswdEntry* find_user(std::string_view name_or_id) const;
  const GroupEntry* find_group(std::string_view name_or_id) const;
  const PasswdEntry* user_by_id(uint32_t uid) const;
  const GroupEntry* group_by_id(uint32_t gid) const;

  // The name, or the number when no entry has that id.
  std::string user_name(uint32_t uid) const;
  std::string group_name(uint32_t gid) const;

 private:
  std::vector<PasswdEntry> users_;
  std::vector<GroupEntry> groups_;
};

// A decimal id ("0".."4294967294"); nullopt for anything else.
std::optional<uint32_t> parse_id(std::string_view s);

}  // namespace aura::runner
