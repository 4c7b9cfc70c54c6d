// vars.set, vars.unset (actions on an Ansible vars file, journaled as file.write is);
// ansible.check (probe) and ansible.run (action): ansible-playbook on the node's project.
#include "workers/runner/file_edit.h"
#include "workers/runner/node_fs.h"
#include "workers/runner/op.h"
#include "workers/runner/tool.h"
#include "workers/runner/vars_file.h"

namespace aura::runner {
namespace {

constexpr std::string_view kPlaybookBin = "/usr/bin/ansible-playbook";

Status check_key(const Args& args) {
  if (!is_var_key(args.str("key")))
    return world_error("key " + escape_name(args.str("key")),
                       "not a variable name [A-Za-z_][A-Za-z0-9_]{0,63}");
  return Status::ok();
}

// The vars file at args.path, which must exist, be named *.yml or *.yaml and sit directly in a
// host_vars or group_vars folder: these ops never touch a playbook, a role or an inventory.
Result<EditTarget> vars_target(const Args& args, std::string_view verb) {
  const std::string& path = args.str("path");
  const size_t slash = path.rfind('/');
  const std::string_view name = std::string_view(path).substr(slash + 1);
  const std::string_view dir =
      std::string_view(path).substr(0, slash == std::string::npos ? 0 : slash);
  const std::string_view folder =
      dir.substr(dir.rfind('/') == std::string_view::npos ? 0 : dir.rfind('/') + 1);
  if ((folder != "host_vars" && folder != "group_vars") ||
      !(name.ends_with(".yml") || name.ends_with(".yaml")) || name.size() < 5)
    return world_error(std::string(verb) + " " + escape_name(path),
                       "not a vars file (host_vars/NAME.yml or group_vars/NAME.yml)");
  EditTarget t;
  AURA_ASSIGN_OR_RETURN(t, load_edit_target("path", args.str("path")));
  if (!t.before.existed)
    return errno_error(std::string(verb) + " " + escape_name(t.parent.path), ENOENT);
  return t;
}

Status vars_set_op(const Args& args, const Context& ctx, Output& out) {
  AURA_RETURN_IF_ERROR(check_key(args));
  if (args.str("key").starts_with("ansible_"))
    return world_error("set " + args.str("key"),
                       "connection and behaviour variables (ansible_*) are not set by this op");
  const std::string& value = args.str("value");
  if (!is_plain_var_value(value)) {
    return world_error("set " + args.str("key"),
                       "the value is not a plain scalar (1..256 bytes of [A-Za-z0-9_./:@+-], "
                       "not starting with -)");
  }
  EditTarget t;
  AURA_ASSIGN_OR_RETURN(t, vars_target(args, "set"));
  const std::string& key = args.str("key");
  const auto old = vars_get(*t.before.bytes, key);
  AURA_RETURN_IF_ERROR(commit_edit(ctx, t, vars_set(*t.before.bytes, key, value), std::nullopt));
  out.line("set " + key + ": " + value + " in " + escape_name(t.parent.path) +
           (old ? " (was " + escape_name(*old) + ")" : " (was unset)"));
  return Status::ok();
}

Status vars_unset_op(const Args& args, const Context& ctx, Output& out) {
  AURA_RETURN_IF_ERROR(check_key(args));
  EditTarget t;
  AURA_ASSIGN_OR_RETURN(t, vars_target(args, "unset"));
  const std::string& key = args.str("key");
  const std::string what = "unset " + key + " in " + escape_name(t.parent.path);
  const auto old = vars_get(*t.before.bytes, key);
  auto text = vars_unset(*t.before.bytes, key);
  if (!text.ok()) return world_error(what, text.status().message());
  AURA_RETURN_IF_ERROR(commit_edit(ctx, t, *text, std::nullopt));
  out.line("removed " + key + " from " + escape_name(t.parent.path) + " (was " +
           escape_name(old.value_or("")) + ")");
  return Status::ok();
}

Status playbook(const Context& ctx, Output& out, bool check) {
  std::vector<std::string> argv = {std::string(kPlaybookBin), "site.yml"};
  if (check) {
    argv.push_back("--check");
    argv.push_back("--diff");
  }
  ToolPlace place;
  place.cwd = ctx.ansible_project;
  place.env = {"HOME=/root", "LC_ALL=C.UTF-8", "ANSIBLE_NOCOLOR=1", "ANSIBLE_FORCE_COLOR=0"};
  return report_tool(argv, out, place);
}

Status ansible_check(const Args&, const Context& ctx, Output& out) {
  return playbook(ctx, out, true);
}
Status ansible_run(const Args&, const Context& ctx, Output& out) {
  return playbook(ctx, out, false);
}

}  // namespace

std::vector<OpSpec> ansible_ops() {
  using C = OpClass;
  return {
      {"ansible.check", C::kProbe, {}, ansible_check},
      {"vars.set", C::kAction, {{"path"}, {"key"}, {"value"}}, vars_set_op},
      {"vars.unset", C::kAction, {{"path"}, {"key"}}, vars_unset_op},
      {"ansible.run", C::kAction, {}, ansible_run},
  };
}

}  // namespace aura::runner
