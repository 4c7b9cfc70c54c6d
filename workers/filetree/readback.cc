// A filetree world's build record and the ACK readback of its actions: the driver's own code
// reading the world's files through WorldFs (docs/WORLDS.md), changing nothing.
#include <cstdio>
#include <cstdlib>

#include "engine/crypto/sha256.h"
#include "workers/filetree/filetree_world.h"
#include "workers/filetree/fleet.h"

namespace aura::workers::filetree {
namespace {

std::string octal(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

const std::string* param_text(const scenario::Call& call, std::string_view name) {
  const scenario::ParamValue* v = call.find(std::string(name));
  return v == nullptr ? nullptr : std::get_if<std::string>(v);
}

}  // namespace

Result<world::BuildRecord> FiletreeWorld::build_record() {
  if (!record_)
    return Status::unavailable(
        "world " + id_ + " was reopened; its build record is kept only by the create that made it");
  return *record_;
}

Result<world::Readback> FiletreeWorld::read_back(const scenario::Call& action,
                                                 const world::AppliedCall& applied) {
  world::Readback rb;
  const std::string& op = action.name;
  const auto differ = [&](const std::string& where, const std::string& what) {
    rb.differences.push_back(where + ": " + what);
  };
  if (op == "file.write" || op == "file.chmod") {
    // A path given as a target (kind path) is read back where it resolved.
    const std::string* path = param_text(action, "path");
    if (path == nullptr && !applied.resolved.empty()) path = &applied.resolved.front();
    if (path == nullptr) return Status::invalid(op + ": no path");
    auto st = fs_->stat(*path);
    if (!st.ok()) return st.status();
    if (!st->has_value()) {
      rb.observed = *path + " absent\n";
      differ(*path, "absent; the action requested a file there");
      return rb;
    }
    rb.observed = *path + " mode=" + octal((*st)->mode);
    if (op == "file.write") {
      auto data = fs_->read_file(*path, kMaxFileBytes);
      if (!data.ok()) return data.status();
      rb.observed +=
          " sha256=" + to_hex(sha256(data->bytes)) + " bytes=" + std::to_string(data->bytes.size());
      const std::string* content = param_text(action, "content");
      if (content != nullptr && (data->truncated || data->bytes != *content)) {
        differ(*path, "holds sha256 " + to_hex(sha256(data->bytes)) + "; requested sha256 " +
                          to_hex(sha256(*content)));
      }
    }
    rb.observed += "\n";
    if (const std::string* mode = param_text(action, "mode"); mode && op == "file.chmod") {
      const uint32_t want = uint32_t(std::strtoul(mode->c_str(), nullptr, 8));
      if (((*st)->mode & 07777) != want) {
        differ(*path, "mode is " + octal((*st)->mode) + "; requested " + octal(want));
      }
    }
    return rb;
  }
  if (op == "vars.set" || op == "vars.unset" || op == "fleet.converge") {
    auto fleet = Fleet::load(*fs_);
    if (!fleet.ok()) {
      rb.observed = "the fleet does not load: " + fleet.status().message() + "\n";
      rb.differences.push_back("the fleet does not load: " + fleet.status().message());
      return rb;
    }
    const std::string* key = param_text(action, "key");
    for (const std::string& node : applied.resolved) {
      if (op == "fleet.converge") {
        const std::string path = app_conf_path(node);
        auto want = fleet->render(node);
        auto have = fs_->read_file(path, kMaxConfigBytes);
        const std::string now = have.ok() ? to_hex(sha256(have->bytes)) : "absent";
        rb.observed += node + " " + path + " sha256=" + now + "\n";
        if (!want.ok() || !have.ok() || have->bytes != *want) {
          differ(node, path + " does not hold what the source of truth renders");
        }
        continue;
      }
      auto vars = fleet->host_vars(node);
      if (!vars.ok()) return vars.status();
      const std::string* value = key ? vars->find(*key) : nullptr;
      rb.observed += node + " " + host_vars_path(node) + " " + (key ? *key : "?") + "=" +
                     (value ? *value : std::string("(unset)")) + "\n";
      if (op == "vars.set") {
        const std::string* want = param_text(action, "value");
        if (want != nullptr && (value == nullptr || *value != *want)) {
          differ(node, (key ? *key : "?") + " is " + (value ? *value : std::string("unset")) +
                           "; requested " + *want);
        }
      } else if (op == "vars.unset" && value != nullptr) {
        differ(node, *key + " is still set (" + *value + "); requested unset");
      }
    }
    return rb;
  }
  rb.typed = false;
  rb.observed = op + ": requests no value to compare (an undo restores what the journal held)\n";
  return rb;
}

}  // namespace aura::workers::filetree
