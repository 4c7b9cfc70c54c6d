#include "workers/filetree/fleet.h"

#include <algorithm>

#include "engine/scenario/call.h"
#include "engine/scenario/call_dom.h"

namespace aura::workers::filetree {
namespace {

bool is_blank(std::string_view line) {
  return std::all_of(line.begin(), line.end(), [](char c) { return c == ' ' || c == '\t'; });
}

// Calls `fn(line)` for each line of `text` (the last one may lack its '\n').
template <class Fn>
void for_each_line(std::string_view text, Fn fn) {
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    fn(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
}

// The key of a "key=value" line, or "" for blank lines, comments and lines without '='.
std::string_view key_of(std::string_view line) {
  if (is_blank(line) || line.front() == '#') return {};
  const size_t eq = line.find('=');
  return eq == std::string_view::npos ? std::string_view() : line.substr(0, eq);
}

}  // namespace

std::string host_vars_path(std::string_view node) {
  return "/fleet/host_vars/" + std::string(node) + ".conf";
}

std::string app_conf_path(std::string_view node) {
  return "/nodes/" + std::string(node) + "/app.conf";
}

bool is_fleet_name(std::string_view name) {
  if (name.empty() || name.size() > 64 || name[0] < 'a' || name[0] > 'z') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool is_var_value(std::string_view value) {
  return value.size() <= kMaxValueBytes && !scenario::call_reader::has_control(value);
}

const std::string* Vars::find(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

Result<Vars> parse_vars(std::string_view text, std::string_view file) {
  Vars out;
  size_t line_no = 0;
  Status status;
  for_each_line(text, [&](std::string_view line) {
    ++line_no;
    if (!status.is_ok() || is_blank(line) || line.front() == '#') return;
    const auto bad = [&](std::string_view why) {
      status = Status::invalid(std::string(file) + ":" + std::to_string(line_no) + ": " +
                               std::string(why));
    };
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return bad("expected key=value");
    const std::string_view key = line.substr(0, eq);
    const std::string_view value = line.substr(eq + 1);
    if (!is_fleet_name(key)) return bad("key is not [a-z][a-z0-9_-]{0,63}");
    if (!is_var_value(value)) {
      return bad("value has a control character or more than " + std::to_string(kMaxValueBytes) +
                 " bytes");
    }
    if (out.find(key) != nullptr) return bad("duplicate key " + std::string(key));
    if (out.entries.size() >= kMaxVars)
      return bad("more than " + std::to_string(kMaxVars) + " keys");
    out.entries.emplace_back(std::string(key), std::string(value));
  });
  if (!status.is_ok()) return status;
  return out;
}

std::string with_var_set(std::string_view text, std::string_view key, std::string_view value) {
  std::string out;
  bool done = false;
  for_each_line(text, [&](std::string_view line) {
    if (key_of(line) == key) {
      if (done) return;
      out += std::string(key) + "=" + std::string(value) + "\n";
      done = true;
      return;
    }
    out += std::string(line) + "\n";
  });
  if (!done) out += std::string(key) + "=" + std::string(value) + "\n";
  return out;
}

std::string with_var_unset(std::string_view text, std::string_view key) {
  std::string out;
  for_each_line(text, [&](std::string_view line) {
    if (key_of(line) != key) out += std::string(line) + "\n";
  });
  return out;
}

std::string render_app_conf(std::string_view node, const Effective& vars) {
  std::string out = "# Rendered by fleet.converge from " + std::string(kGroupVarsPath) + " and " +
                    host_vars_path(node) + "; do not edit.\n";
  for (const auto& [key, v] : vars) out += key + "=" + v.value + "\n";
  return out;
}

Result<std::string> read_config(const WorldFs& world, std::string_view path) {
  auto data = world.read_file(path, kMaxConfigBytes);
  if (!data.ok()) return data.status();
  if (data->truncated) {
    return Status::invalid(std::string(path) + ": larger than " + std::to_string(kMaxConfigBytes) +
                           " bytes");
  }
  return std::move(data->bytes);
}

Result<Fleet> Fleet::load(const WorldFs& world) {
  Fleet fleet(world);
  auto inventory_text = read_config(world, kInventoryPath);
  if (!inventory_text.ok()) return inventory_text.status();
  auto inventory = parse_vars(*inventory_text, kInventoryPath);
  if (!inventory.ok()) return inventory.status();
  if (inventory->entries.empty()) {
    return Status::invalid(std::string(kInventoryPath) + ": lists no node");
  }
  for (const auto& [node, role] : inventory->entries) {
    if (!is_fleet_name(role)) {
      return Status::invalid(std::string(kInventoryPath) + ": node " + node +
                             ": role is not [a-z][a-z0-9_-]{0,63}");
    }
    fleet.nodes_.push_back({node, role});
  }
  if (fleet.nodes_.size() > kMaxNodes) {
    return Status::invalid(std::string(kInventoryPath) + ": more than " +
                           std::to_string(kMaxNodes) + " nodes");
  }
  std::sort(fleet.nodes_.begin(), fleet.nodes_.end(),
            [](const Node& a, const Node& b) { return a.name < b.name; });
  auto group_text = read_config(world, kGroupVarsPath);
  if (!group_text.ok()) return group_text.status();
  auto group = parse_vars(*group_text, kGroupVarsPath);
  if (!group.ok()) return group.status();
  fleet.group_ = std::move(*group);
  return fleet;
}

const Node* Fleet::find(std::string_view name) const {
  for (const Node& n : nodes_) {
    if (n.name == name) return &n;
  }
  return nullptr;
}

Result<std::string> Fleet::host_vars_text(std::string_view node) const {
  auto text = read_config(*world_, host_vars_path(node));
  if (!text.ok() && text.status().code() == ErrorCode::kNotFound) {
    auto there = world_->stat(host_vars_path(node));
    if (there.ok() && !there->has_value()) return std::string();
  }
  return text;
}

Result<Vars> Fleet::host_vars(std::string_view node) const {
  auto text = host_vars_text(node);
  if (!text.ok()) return text.status();
  return parse_vars(*text, host_vars_path(node));
}

Result<Effective> Fleet::effective(std::string_view node) const {
  auto host = host_vars(node);
  if (!host.ok()) return host.status();
  Effective out;
  for (const auto& [k, v] : group_.entries) out[k] = {v, std::string(kGroupVarsPath)};
  for (const auto& [k, v] : host->entries) out[k] = {v, host_vars_path(node)};
  return out;
}

Result<std::string> Fleet::render(std::string_view node) const {
  auto eff = effective(node);
  if (!eff.ok()) return eff.status();
  return render_app_conf(node, *eff);
}

Result<bool> Fleet::folder_holds(std::string_view value, std::string_view file) const {
  if (!scenario::is_normalised_absolute_path(value)) return false;
  const std::string folder = value == "/" ? "" : std::string(value);
  return world_->is_regular_file(folder + "/" + std::string(file));
}

Result<std::vector<std::string>> Fleet::stale_overrides(std::string_view var,
                                                        std::string_view file) const {
  const std::string* group_value = group_.find(var);
  std::vector<std::string> out;
  for (const Node& n : nodes_) {
    auto host = host_vars(n.name);
    if (!host.ok()) return host.status();
    const std::string* value = host->find(var);
    if (value == nullptr || (group_value != nullptr && *value == *group_value)) continue;
    auto holds = folder_holds(*value, file);
    if (!holds.ok()) return holds.status();
    if (!*holds) out.push_back(n.name);
  }
  return out;
}

Result<std::vector<std::string>> Fleet::without_file(std::string_view var,
                                                     std::string_view file) const {
  std::vector<std::string> out;
  for (const Node& n : nodes_) {
    const std::string path = app_conf_path(n.name);
    auto text = read_config(*world_, path);
    if (!text.ok() && text.status().code() == ErrorCode::kIo) return text.status();
    auto vars = text.ok() ? parse_vars(*text, path) : Result<Vars>(text.status());
    const std::string* value = vars.ok() ? vars->find(var) : nullptr;
    bool holds = false;
    if (value != nullptr) AURA_ASSIGN_OR_RETURN(holds, folder_holds(*value, file));
    if (!holds) out.push_back(n.name);
  }
  return out;
}

}  // namespace aura::workers::filetree
