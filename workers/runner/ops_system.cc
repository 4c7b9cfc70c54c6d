// user.id, user.list, group.list, proc.list, service.status, service.log, nginx.test (probes);
// group.add_member, group.remove_member, service.restart, service.reload, nginx.reload,
// journal.undo (actions).
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "workers/runner/accounts.h"
#include "workers/runner/file_edit.h"
#include "workers/runner/journal.h"
#include "workers/runner/node_fs.h"
#include "workers/runner/op.h"
#include "workers/runner/tool.h"

namespace aura::runner {
namespace {

constexpr std::string_view kNginx = "/usr/sbin/nginx";
constexpr size_t kMaxArgsBytes = 256;
constexpr size_t kMaxProcFileBytes = 64 << 10;

std::string or_dash(std::string_view s) { return s.empty() ? "-" : escape_name(s); }

std::string id_name(uint32_t id, const std::string& name) {
  return std::to_string(id) + "(" + escape_name(name) + ")";
}

Status user_id(const Args& args, const Context&, Output& out) {
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  const std::string& who = args.str("user");
  const PasswdEntry* u = accounts.find_user(who);
  if (u == nullptr) return world_error("user.id " + escape_name(who), "no such user");
  const auto group_text = [&](uint32_t gid) {
    const GroupEntry* g = accounts.group_by_id(gid);
    return g ? id_name(gid, g->name) : std::to_string(gid);
  };
  std::vector<uint32_t> gids = {u->gid};
  for (const GroupEntry& g : accounts.groups()) {
    if (std::find(g.members.begin(), g.members.end(), u->name) != g.members.end() &&
        std::find(gids.begin(), gids.end(), g.gid) == gids.end()) {
      gids.push_back(g.gid);
    }
  }
  std::string line = "uid=" + id_name(u->uid, u->name) + " gid=" + group_text(u->gid) + " groups=";
  for (size_t i = 0; i < gids.size(); ++i) line += (i ? "," : "") + group_text(gids[i]);
  out.line(line);
  return Status::ok();
}

Status user_list(const Args&, const Context&, Output& out) {
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  std::vector<PasswdEntry> users = accounts.users();
  std::stable_sort(users.begin(), users.end(),
                   [](const auto& a, const auto& b) { return a.uid < b.uid; });
  for (const PasswdEntry& u : users) {
    out.line(escape_name(u.name) + " " + std::to_string(u.uid) + " " + std::to_string(u.gid) + " " +
             or_dash(u.home) + " " + or_dash(u.shell));
  }
  return Status::ok();
}

std::string join(const std::vector<std::string>& list, char sep) {
  std::string out;
  for (const std::string& s : list) {
    if (!out.empty()) out.push_back(sep);
    out += s;
  }
  return out;
}

Status group_list(const Args&, const Context&, Output& out) {
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  std::vector<GroupEntry> groups = accounts.groups();
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.gid < b.gid; });
  for (const GroupEntry& g : groups) {
    out.line(escape_name(g.name) + " " + std::to_string(g.gid) + " " +
             or_dash(join(g.members, ',')));
  }
  return Status::ok();
}

// A user or group name as /etc/group holds it: no field or list separators, no line breaks.
Status check_account_name(std::string_view arg, std::string_view name) {
  if (name.empty() || name.size() > 256) return bad_arg(arg, "must be 1 to 256 bytes");
  for (unsigned char c : name) {
    if (c == ':' || c == ',' || c < 0x20 || c == 0x7f) {
      return bad_arg(arg, "must not contain ':', ',' or control characters");
    }
  }
  return Status::ok();
}

// Adds (add=true) or removes `user` in `group`'s member list in /etc/group, journaled.
Status edit_membership(const Args& args, const Context& ctx, Output& out, bool add) {
  const std::string& group = args.str("group");
  const std::string& user = args.str("user");
  AURA_RETURN_IF_ERROR(check_account_name("group", group));
  AURA_RETURN_IF_ERROR(check_account_name("user", user));
  const std::string what = std::string(add ? "group.add_member " : "group.remove_member ") +
                           escape_name(group) + " " + escape_name(user);
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  const PasswdEntry* u = accounts.find_user(user);
  if (u == nullptr) return world_error(what, "no such user");
  EditTarget t;
  AURA_ASSIGN_OR_RETURN(t, load_edit_target("group", kGroupPath));
  if (!t.before.existed) return world_error(what, std::string(kGroupPath) + " does not exist");
  const std::string& text = *t.before.bytes;
  // The group's line, by name (or by gid for a number), edited in place; other lines untouched.
  const auto gid = parse_id(group);
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    auto g = parse_group_line(line);
    if (g && (g->name == group || (gid && g->gid == *gid))) {
      auto& m = g->members;
      const bool member = std::find(m.begin(), m.end(), u->name) != m.end();
      if (add && member) return world_error(what, u->name + " is already a member of " + g->name);
      if (!add && !member) return world_error(what, u->name + " is not a member of " + g->name);
      if (add) m.push_back(u->name);
      if (!add) m.erase(std::remove(m.begin(), m.end(), u->name), m.end());
      const std::string new_line(std::string(line.substr(0, line.rfind(':') + 1)) + join(m, ','));
      const std::string bytes = text.substr(0, start) + new_line + text.substr(end);
      AURA_RETURN_IF_ERROR(commit_edit(ctx, t, bytes, std::nullopt));
      out.line(std::string(add ? "added " : "removed ") + u->name + (add ? " to " : " from ") +
               g->name);
      return Status::ok();
    }
    start = end + 1;
  }
  return world_error(what, "no such group");
}

Status group_add_member(const Args& args, const Context& ctx, Output& out) {
  return edit_membership(args, ctx, out, true);
}
Status group_remove_member(const Args& args, const Context& ctx, Output& out) {
  return edit_membership(args, ctx, out, false);
}

// The value of "Key:" in a /proc/PID/status text (its first number for Uid/Gid).
std::optional<uint32_t> status_id(std::string_view status, std::string_view key) {
  const size_t at = status.find("\n" + std::string(key) + ":");
  if (at == std::string_view::npos) return std::nullopt;
  size_t p = at + key.size() + 2;
  while (p < status.size() && (status[p] == '\t' || status[p] == ' ')) ++p;
  size_t e = p;
  while (e < status.size() && status[e] >= '0' && status[e] <= '9') ++e;
  return parse_id(status.substr(p, e - p));
}

Status proc_list(const Args&, const Context&, Output& out) {
  Accounts accounts;
  AURA_ASSIGN_OR_RETURN(accounts, Accounts::load());
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return errno_error("list /proc", errno);
  std::unique_ptr<DIR, int (*)(DIR*)> guard(d, ::closedir);
  std::vector<uint32_t> pids;
  while (dirent* de = ::readdir(d)) {
    if (auto pid = parse_id(de->d_name)) pids.push_back(*pid);
  }
  std::sort(pids.begin(), pids.end());
  for (uint32_t pid : pids) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/";
    bool more = false;
    // A process that ended while it was listed is skipped.
    auto status = read_regular(dir + "status", kMaxProcFileBytes, &more, "read");
    auto comm = read_regular(dir + "comm", kMaxProcFileBytes, &more, "read");
    auto cmdline = read_regular(dir + "cmdline", kMaxArgsBytes, &more, "read");
    if (!status.ok() || !comm.ok() || !cmdline.ok()) continue;
    const auto uid = status_id("\n" + *status, "Uid");
    const auto gid = status_id("\n" + *status, "Gid");
    if (!uid || !gid) continue;
    std::string name = *comm;
    if (!name.empty() && name.back() == '\n') name.pop_back();
    std::string argv = *cmdline;
    std::replace(argv.begin(), argv.end(), '\0', ' ');
    while (!argv.empty() && argv.back() == ' ') argv.pop_back();
    if (argv.empty()) argv = "[" + name + "]";  // a kernel thread
    out.line(std::to_string(pid) + " " + escape_name(accounts.user_name(*uid)) + " " +
             escape_name(accounts.group_name(*gid)) + " " + or_dash(name) + " " +
             escape_name(argv));
  }
  return Status::ok();
}

Result<std::string> service_file(const Args& args, const Context& ctx, std::string_view ext) {
  const std::string& name = args.str("name");
  bool ok = !name.empty() && name.size() <= 32 && name[0] >= 'a' && name[0] <= 'z';
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (!ok) return bad_arg("name", "must match [a-z][a-z0-9-]{0,31}");
  return ctx.svcman_state + "/" + name + std::string(ext);
}

Status service_status(const Args& args, const Context& ctx, Output& out) {
  std::string path;
  AURA_ASSIGN_OR_RETURN(path, service_file(args, ctx, ".status"));
  bool more = false;
  std::string bytes;
  AURA_ASSIGN_OR_RETURN(bytes, read_regular(path, out.cap(), &more, "read"));
  out.append(bytes);
  if (more) out.mark_truncated();
  return Status::ok();
}

Status service_log(const Args& args, const Context& ctx, Output& out) {
  const int64_t lines = args.integer("lines", 100);
  if (lines < 1 || lines > 1000) return bad_arg("lines", "must be 1 to 1000");
  std::string path;
  AURA_ASSIGN_OR_RETURN(path, service_file(args, ctx, ".log"));
  const std::string what = "read " + path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno_error(what, errno);
  if (!S_ISREG(st.st_mode)) return world_error(what, "not a regular file");
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return errno_error(what, errno);
  file_io::Fd guard(fd);
  if (::fstat(fd, &st) != 0) return errno_error(what, errno);
  if (!S_ISREG(st.st_mode)) return world_error(what, "not a regular file");
  // Only the file's last cap+1 bytes are read; the lines are counted within them.
  const uint64_t window = std::min<uint64_t>(uint64_t(st.st_size), out.cap() + 1);
  if (::lseek(fd, off_t(uint64_t(st.st_size) - window), SEEK_SET) < 0) {
    return errno_error(what, errno);
  }
  std::string tail;
  AURA_ASSIGN_OR_RETURN(tail, read_fd_bounded(fd, window, what));
  size_t end = tail.size();
  if (end > 0 && tail[end - 1] == '\n') --end;  // the last line's own break separates nothing
  size_t from = 0;
  bool enough = false;
  int64_t found = 0;
  for (size_t i = end; i > 0 && !enough; --i) {
    if (tail[i - 1] == '\n' && ++found == lines) {
      from = i;
      enough = true;
    }
  }
  if (!enough && window < uint64_t(st.st_size)) {
    // The window began mid-line: that partial first line is dropped, and the cut flagged.
    const size_t nl = tail.find('\n');
    from = nl == std::string::npos ? tail.size() : nl + 1;
    out.mark_truncated();
  }
  out.append(std::string_view(tail).substr(from));
  return Status::ok();
}

Status svcman(const Args& args, const Context& ctx, Output& out, const char* command) {
  std::string ignored;
  AURA_ASSIGN_OR_RETURN(ignored, service_file(args, ctx, ""));
  return report_tool(
      {ctx.svcman_bin, "ctl", "--state", ctx.svcman_state, command, args.str("name")}, out);
}
Status service_restart(const Args& args, const Context& ctx, Output& out) {
  return svcman(args, ctx, out, "restart");
}
Status service_reload(const Args& args, const Context& ctx, Output& out) {
  return svcman(args, ctx, out, "reload");
}

Status nginx_test(const Args&, const Context&, Output& out) {
  return report_tool({std::string(kNginx), "-t"}, out);
}
Status nginx_reload(const Args&, const Context&, Output& out) {
  return report_tool({std::string(kNginx), "-s", "reload"}, out);
}

Status journal_undo(const Args&, const Context& ctx, Output& out) {
  std::unique_ptr<Journal> journal;
  AURA_ASSIGN_OR_RETURN(journal, Journal::open(ctx.journal_dir));
  // The lines of what was undone stay in the output, then the line of what failed.
  if (Status s = journal->undo(out); !s.is_ok()) {
    out.line("error: " + s.message());
    return failure_in_output();
  }
  return Status::ok();
}

}  // namespace

std::vector<OpSpec> system_ops() {
  using C = OpClass;
  return {
      {"user.id", C::kProbe, {{"user"}}, user_id},
      {"user.list", C::kProbe, {}, user_list},
      {"group.list", C::kProbe, {}, group_list},
      {"proc.list", C::kProbe, {}, proc_list},
      {"service.status", C::kProbe, {{"name"}}, service_status},
      {"service.log", C::kProbe, {{"name"}, {"lines", false, true}}, service_log},
      {"nginx.test", C::kProbe, {}, nginx_test},
      {"group.add_member", C::kAction, {{"group"}, {"user"}}, group_add_member},
      {"group.remove_member", C::kAction, {{"group"}, {"user"}}, group_remove_member},
      {"service.restart", C::kAction, {{"name"}}, service_restart},
      {"service.reload", C::kAction, {{"name"}}, service_reload},
      {"nginx.reload", C::kAction, {}, nginx_reload},
      {"journal.undo", C::kAction, {}, journal_undo},
  };
}

}  // namespace aura::runner
