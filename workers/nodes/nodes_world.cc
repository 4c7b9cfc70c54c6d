#include "workers/nodes/nodes_world.h"

#include <sodium.h>
#include <unistd.h>

#include <span>

#include "engine/common/text.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/stage.h"
#include "workers/nodes/world_parts.h"
#include "workers/sandbox/profile.h"

namespace aura::workers::nodes {

namespace fs = std::filesystem;

const std::vector<std::string>& image() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    for (const char* p :
         {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/nsswitch.conf",
          "/etc/alternatives", "/etc/ssl", "/etc/mime.types"}) {
      if (fs::exists(p)) out.push_back(p);
    }
    return out;
  }();
  return paths;
}

const std::vector<std::string>& base_env() {
  static const std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
                                               "LANG=C.UTF-8"};
  return env;
}

std::string random_hex(size_t bytes) {
  std::vector<uint8_t> raw(bytes);
  randombytes_buf(raw.data(), raw.size());
  return to_hex(std::span<const uint8_t>(raw.data(), raw.size()));
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

NodesWorld::NodesWorld(const world::WorldHost& host, sandbox::CgroupTree& tree)
    : host_(host), tree_(&tree) {}

NodesWorld::~NodesWorld() {
  for (auto& n : nodes_)
    if (n.node) n.node->detach();
  if (net_) net_->detach();
  if (holder_.pipe >= 0) ::close(holder_.pipe);  // a holder not told to persist ends now
  holder_.pipe = -1;
}

Status NodesWorld::destroy() {
  Status first = Status::ok();
  auto note = [&](Status s) {
    if (!s.is_ok() && first.is_ok()) first = s;
  };
  for (auto& n : nodes_)
    if (n.node) note(n.node->destroy());
  if (net_) note(net_->destroy());
  // With the nodes gone, this world's uses of stage entries end (an entry no world uses goes).
  Status unstaged = Status::ok();
  if (first.is_ok() && ledger_) unstaged = release_stage_uses(*ledger_, holder_.owner);
  if (first.is_ok()) {
    end_holder(holder_);
    std::error_code ec;
    if (!work_dir_.empty()) fs::remove_all(work_dir_, ec);
    if (ec) note(Status::io("remove " + work_dir_.string() + ": " + ec.message()));
  }
  note(unstaged);
  return first;
}

// The policy every nodes world applies, as canonical text (world_record.cc adds each world's
// own mount plan): the digest receipts bind changes with any of it.
std::string nodes_policy_text() {
  const nsworld::NodeOptions node;
  const sandbox::CgroupLimits call;
  char caps[32];
  std::snprintf(caps, sizeof caps, "0x%llx", (unsigned long long)nsworld::call_linux_caps());
  std::string t = "aura-nodes-policy 1\n" + sandbox::seccomp_program_text();
  t += std::string("call.linux_caps=") + caps + "\ncall.no_new_privs=1\n";
  t += "node.memory_bytes=" + std::to_string(kNodeMemoryBytes) +
       "\nnode.pids_max=" + std::to_string(kNodePidsMax) +
       "\nnode.tmpfs_bytes=" + std::to_string(node.tmpfs_bytes) +
       "\nnode.id_count=" + std::to_string(node.id_count) + "\n";
  t += "call.cpu_quota_us=" + std::to_string(call.cpu_quota_us) +
       "\ncall.cpu_period_us=" + std::to_string(call.cpu_period_us) +
       "\ncall.memory_bytes=" + std::to_string(call.memory_bytes) +
       "\ncall.pids_max=" + std::to_string(call.pids_max) + "\n";
  t +=
      "deadline.probe_ms=" + std::to_string(std::chrono::milliseconds(kProbeDeadline).count()) +
      "\ndeadline.action_ms=" + std::to_string(std::chrono::milliseconds(kActionDeadline).count()) +
      "\nscript.output_cap_bytes=" + std::to_string(kScriptOutputCap) + "\n";
  for (const std::string& p : image()) t += "image=" + p + "\n";
  t += "layers_at=" + std::string(kLayerMount) + "\n";
  return t;
}

}  // namespace aura::workers::nodes
