// What a nodes world was built with (its build record: the policy and per-node mount plan, the
// programs it runs, the package layers it was made from) and the ACK readback of each action:
// the lab's own code reading the node from outside (openat2 in the node's root), never a report
// of the node's own. Contracts: engine/world/world_driver.h, docs/ATTEMPTS.md.
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "engine/common/text.h"
#include "engine/crypto/sha256.h"
#include "workers/inspect/exe_identity.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/checks.h"
#include "workers/nodes/nodes_driver.h"
#include "workers/nodes/nodes_world.h"
#include "workers/runner/accounts.h"
#include "workers/runner/vars_file.h"

namespace aura::workers::nodes {
namespace {

namespace fs = std::filesystem;

constexpr size_t kReadbackFileCap = 4 << 20;  // a file read back for its digest
constexpr size_t kReadbackLineBytes = 512;
// The Ansible program and the Python package it runs, hashed when the world runs Ansible.
constexpr std::string_view kPlaybookProgram = "/usr/bin/ansible-playbook";
constexpr std::string_view kAnsiblePackage = "/usr/lib/python3/dist-packages/ansible";
constexpr size_t kMaxTreeFiles = 20'000;

// SHA-256 of a host file, cached by its identity (device, inode, size, modification time): a
// world build hashes the same programs as the last one did.
Result<std::string> cached_digest(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Status::not_found(path.string() + ": not found");
  const std::string key = path.string() + "|" + std::to_string(st.st_dev) + "|" +
                          std::to_string(st.st_ino) + "|" + std::to_string(st.st_size) + "|" +
                          std::to_string(st.st_mtim.tv_sec) + "." +
                          std::to_string(st.st_mtim.tv_nsec);
  static std::mutex mu;
  static std::map<std::string, std::string> cache;
  {
    std::lock_guard lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  std::string digest;
  AURA_ASSIGN_OR_RETURN(digest, inspect::file_digest(path));
  std::lock_guard lock(mu);
  cache[key] = digest;
  return digest;
}

// A program tree's digest: SHA-256 of "<sha256>  <relative path>\n" for every regular file under
// `dir` and "symlink <target>  <relative path>\n" for every symlink, sorted by path (the
// SHA256SUMS form). docs/formats/receipt.md ("tree digest").
Result<std::string> tree_digest(const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> lines;  // relative path, line
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const fs::path rel = it->path().lexically_relative(dir);
    if (it->is_symlink(ec)) {
      lines.emplace_back(rel.string(), "symlink " + fs::read_symlink(it->path(), ec).string() +
                                           "  " + rel.string() + "\n");
    } else if (it->is_regular_file(ec)) {
      std::string digest;
      AURA_ASSIGN_OR_RETURN(digest, cached_digest(it->path()));
      lines.emplace_back(rel.string(), digest + "  " + rel.string() + "\n");
    }
    if (lines.size() > kMaxTreeFiles) return Status::invalid(dir.string() + ": too many files");
  }
  if (ec) return Status::io(dir.string() + ": " + ec.message());
  std::sort(lines.begin(), lines.end());
  std::string all;
  for (const auto& [rel, line] : lines) all += line;
  return to_hex(sha256(all));
}

std::string mode_text(uint32_t mode) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04o", mode & 07777);
  return buf;
}

const std::string* string_param(const scenario::Call& call, std::string_view name) {
  const scenario::ParamValue* v = call.find(std::string(name));
  return v == nullptr ? nullptr : std::get_if<std::string>(v);
}

// "node" or "node:path", as run_calls reports each run's targets.
std::pair<std::string, std::string> split_resolved(const std::string& r) {
  const size_t colon = r.find(':');
  if (colon == std::string::npos) return {r, ""};
  return {r.substr(0, colon), r.substr(colon + 1)};
}

// One file as the node holds it now: "sha256=... bytes=N mode=0644 uid=U gid=G", or why not.
struct FileNow {
  bool present = false;
  inspect::FileInfo info;
  std::string bytes;
  bool truncated = false;
  std::string text;
};

Result<FileNow> file_now(const inspect::NodeView& view, const std::string& path) {
  FileNow f;
  auto st = view.stat(path);
  if (!st.ok()) {
    if (st.status().code() == ErrorCode::kIo) return st.status();
    f.text = "absent";
    return f;
  }
  f.present = true;
  f.info = *st;
  f.text = std::string(inspect::type_name(st->type)) + " mode=" + mode_text(st->mode) +
           " uid=" + std::to_string(st->uid) + " gid=" + std::to_string(st->gid);
  if (st->type == inspect::FileInfo::Type::kFile) {
    auto bytes = view.read_file(path, kReadbackFileCap, &f.truncated);
    if (!bytes.ok()) return bytes.status().with_context("read back " + path);
    f.bytes = std::move(bytes).value();
    f.text += " sha256=" + to_hex(sha256(f.bytes)) + " bytes=" + std::to_string(f.bytes.size()) +
              (f.truncated ? " (read in part)" : "");
  }
  return f;
}

}  // namespace

Result<world::BuildRecord> NodesWorld::build_record() {
  world::BuildRecord r;
  r.profile = nodes_policy_text();
  // The policy is the same for every world of a scenario (the gate's receipt binds one): what
  // services run with what confinement and which kernel filesystems nodes mount, as a set --
  // not by node name or role (a control world adds a canary role) and without the layers (each
  // world's own, bound by world_images).
  std::set<std::string> layers, policy;
  for (const LiveNode& n : nodes_) {
    const NodeSpec& ns = *n.spec;
    for (const std::string& l : ns.layers) layers.insert(l);
    for (const std::string& m : ns.mounts) policy.insert("mount=" + m + "\n");
    for (const ServiceSpec& svc : ns.services) {
      std::string line = "service." + svc.name + "=";
      for (const std::string& a : svc.argv) line += " " + a;
      char caps[32];
      std::snprintf(caps, sizeof caps, "0x%llx", (unsigned long long)svc.linux_caps);
      policy.insert(line + "\nservice." + svc.name + ".linux_caps=" + caps +
                    " no_new_privs=1 seccomp=runner\n");
    }
  }
  for (const std::string& line : policy) r.profile += line;
  r.layers.assign(layers.begin(), layers.end());
  r.package_sums_sha256 = package_sums_sha256_;
  // The programs: what the checks and services identify (hashed at build), the lab's own, and
  // the Ansible tree when the world runs it.
  r.binaries = binaries_;
  for (std::string_view tool : {"aura-runner", "aura-svcman", "aura-app"}) {
    std::string host;
    AURA_ASSIGN_OR_RETURN(host, tool_path(tool));
    std::string digest;
    AURA_ASSIGN_OR_RETURN(digest, cached_digest(host));
    r.binaries["/aura/bin/" + std::string(tool)] = digest;
  }
  if (runs_ansible_) {
    std::string digest;
    AURA_ASSIGN_OR_RETURN(digest, cached_digest(std::string(kPlaybookProgram)));
    r.binaries[std::string(kPlaybookProgram)] = digest;
    AURA_ASSIGN_OR_RETURN(digest, tree_digest(std::string(kAnsiblePackage)));
    r.binaries[std::string(kAnsiblePackage) + "/"] = digest;
  }
  return r;
}

Result<world::Readback> NodesWorld::read_back(const scenario::Call& action,
                                              const world::AppliedCall& applied) {
  world::Readback rb;
  const std::string& op = action.name;
  if (op == "journal.undo") {
    rb.typed = false;
    rb.observed = "an undo restores what the journal held; it requests no value to compare";
    return rb;
  }
  if (op == "ansible.run") {
    // The converge's counts, from its recap (the runner's output of the run).
    std::vector<std::string> recap;
    bool in_recap = false;
    size_t at = 0;
    const std::string& out = applied.output;
    while (at < out.size()) {
      size_t nl = std::min(out.find('\n', at), out.size());
      const std::string line = out.substr(at, nl - at);
      at = nl + 1;
      if (line.starts_with("PLAY RECAP")) {
        in_recap = true;
        continue;
      }
      if (in_recap && line.find(" : ok=") != std::string::npos) recap.push_back(line);
    }
    if (recap.empty()) {
      rb.typed = false;
      rb.observed = "the converge's output holds no PLAY RECAP to read its counts from";
      return rb;
    }
    for (std::string line : recap) {
      // "web1   : ok=3 changed=1 unreachable=0 failed=0 ..." -> one space between fields.
      std::string compact;
      for (char c : line)
        if (!(c == ' ' && !compact.empty() && compact.back() == ' ')) compact += c;
      rb.observed += safe_text(compact, kReadbackLineBytes) + "\n";
      for (const char* bad : {"unreachable=", "failed="}) {
        const size_t p = compact.find(bad);
        if (p != std::string::npos && compact.compare(p + std::strlen(bad), 2, "0 ") != 0 &&
            !(p + std::strlen(bad) + 1 == compact.size() && compact.back() == '0')) {
          rb.differences.push_back("the converge did not complete: " +
                                   safe_text(compact, kReadbackLineBytes));
          break;
        }
      }
    }
    return rb;
  }

  for (const std::string& r : applied.resolved) {
    auto [node_name, path] = split_resolved(r);
    // A literal path is not part of what the call resolved (only selectors are): it is the
    // call's own parameter.
    if (path.empty()) {
      if (const std::string* literal = string_param(action, "path")) path = *literal;
    }
    LiveNode* n = find_node(node_name);
    if (n == nullptr) {
      rb.differences.push_back("node " + node_name + " is not in this world");
      continue;
    }
    auto view_or = inspect::NodeView::open(n->node->init_pid());
    if (!view_or.ok()) return view_or.status();
    const inspect::NodeView& view = *view_or;
    const std::string where = node_name + (path.empty() ? "" : ":" + path);
    const auto differ = [&](const std::string& what) {
      rb.differences.push_back(where + ": " + what);
    };

    if (op == "file.write" || op == "file.replace" || op == "file.chmod" || op == "file.chown") {
      FileNow f;
      AURA_ASSIGN_OR_RETURN(f, file_now(view, path));
      rb.observed += where + " " + f.text + "\n";
      if (!f.present) {
        differ("absent; the action requested a file there");
        continue;
      }
      if (op == "file.write") {
        const std::string* content = string_param(action, "content");
        if (content != nullptr && (f.truncated || f.bytes != *content)) {
          differ("holds sha256 " + to_hex(sha256(f.bytes)) + " (" + std::to_string(f.bytes.size()) +
                 " bytes); requested sha256 " + to_hex(sha256(*content)) + " (" +
                 std::to_string(content->size()) + " bytes)");
        }
      }
      if (op == "file.replace") {
        const std::string* old_text = string_param(action, "old");
        const std::string* new_text = string_param(action, "new");
        if (new_text != nullptr && f.bytes.find(*new_text) == std::string::npos) {
          differ("does not hold the requested replacement text");
        } else if (old_text != nullptr && new_text != nullptr && !old_text->empty() &&
                   new_text->find(*old_text) == std::string::npos &&
                   f.bytes.find(*old_text) != std::string::npos) {
          differ("still holds the text the action replaced");
        }
      }
      const std::string* mode = string_param(action, "mode");
      if (mode != nullptr && (op == "file.write" || op == "file.chmod")) {
        const uint32_t want = uint32_t(std::strtoul(mode->c_str(), nullptr, 8));
        if ((f.info.mode & 07777) != want) {
          differ("mode is " + mode_text(f.info.mode) + "; requested " + mode_text(want));
        }
      }
      if (op == "file.chown") {
        auto passwd = view.read_file("/etc/passwd", 1 << 20);
        auto group = view.read_file("/etc/group", 1 << 20);
        const runner::Accounts accounts =
            runner::Accounts::parse(passwd.ok() ? *passwd : "", group.ok() ? *group : "");
        if (const std::string* user = string_param(action, "user"); user && !user->empty()) {
          const runner::PasswdEntry* u = accounts.find_user(*user);
          if (u == nullptr) {
            differ("user " + *user + " has no uid in the node's /etc/passwd");
          } else if (u->uid != f.info.uid) {
            differ("owner uid is " + std::to_string(f.info.uid) + "; requested " + *user + " (" +
                   std::to_string(u->uid) + ")");
          }
        }
        if (const std::string* g = string_param(action, "group"); g && !g->empty()) {
          const auto* ge = accounts.find_group(*g);
          if (ge == nullptr) {
            differ("group " + *g + " has no gid in the node's /etc/group");
          } else if (ge->gid != f.info.gid) {
            differ("group gid is " + std::to_string(f.info.gid) + "; requested " + *g + " (" +
                   std::to_string(ge->gid) + ")");
          }
        }
      }
    } else if (op == "vars.set" || op == "vars.unset") {
      const std::string* key = string_param(action, "key");
      auto text = view.read_file(path, 1 << 20);
      if (!text.ok()) {
        if (text.status().code() == ErrorCode::kIo) return text.status();
        rb.observed += where + " absent\n";
        differ("the vars file is absent");
        continue;
      }
      const auto value = key ? runner::vars_get(*text, *key) : std::nullopt;
      rb.observed += where + " " + (key ? *key : std::string("?")) + "=" +
                     (value ? safe_text(*value, kReadbackLineBytes) : std::string("(unset)")) +
                     "\n";
      if (op == "vars.set") {
        const std::string* want = string_param(action, "value");
        if (want != nullptr && value != *want) {
          differ(*key + " is " + (value ? *value : std::string("unset")) + "; requested " + *want);
        }
      } else if (value) {
        differ(*key + " is still set (" + *value + "); requested unset");
      }
    } else if (op == "group.add_member" || op == "group.remove_member") {
      const std::string* g = string_param(action, "group");
      const std::string* user = string_param(action, "user");
      auto text = view.read_file("/etc/group", 1 << 20);
      if (!text.ok()) return text.status().with_context("read back " + where + ": /etc/group");
      const runner::Accounts accounts = runner::Accounts::parse("", *text);
      const auto* ge = g ? accounts.find_group(*g) : nullptr;
      const bool member =
          ge != nullptr && user != nullptr &&
          std::find(ge->members.begin(), ge->members.end(), *user) != ge->members.end();
      rb.observed += where + " group " + (g ? *g : "?") + (ge ? "" : " absent") + ": " +
                     (user ? *user : "?") + (member ? " is a member" : " is not a member") + "\n";
      if (ge == nullptr) {
        differ("group " + (g ? *g : std::string("?")) + " is absent");
      } else if (member != (op == "group.add_member")) {
        differ(*user + (member ? " is still a member of " : " is not a member of ") + *g);
      }
    } else if (op == "service.restart" || op == "service.reload") {
      const std::string* name = string_param(action, "name");
      const std::string status_path =
          std::string(kSvcmanStateDir) + "/" + (name ? *name : "") + ".status";
      // A manager's restart returns before the service is up: a service still starting is
      // read again every kSettlePoll, until kSettleGuard, before its state is taken.
      auto text = view.read_file(status_path, 64 << 10);
      const auto settle_by = std::chrono::steady_clock::now() + kSettleGuard;
      while (text.ok() &&
             (text->find(R"("state":"starting")") != std::string::npos ||
              text->find(R"("state":"restarting")") != std::string::npos) &&
             std::chrono::steady_clock::now() < settle_by) {
        std::this_thread::sleep_for(kSettlePoll);
        text = view.read_file(status_path, 64 << 10);
      }
      if (!text.ok()) {
        if (text.status().code() == ErrorCode::kIo) return text.status();
        rb.observed += where + " " + status_path + " absent\n";
        differ("the service manager has no status for " + (name ? *name : std::string("?")));
        continue;
      }
      simdjson::dom::parser parser;
      simdjson::dom::object o;
      std::string_view state;
      int64_t pid = -1;
      uint64_t restarts = 0;
      if (parser.parse(*text).get_object().get(o) != simdjson::SUCCESS ||
          o["state"].get_string().get(state) != simdjson::SUCCESS ||
          o["pid"].get_int64().get(pid) != simdjson::SUCCESS) {
        rb.observed += where + " " + status_path + " unreadable\n";
        differ("the service's status does not parse");
        continue;
      }
      if (o["restarts"].get_uint64().get(restarts) != simdjson::SUCCESS) restarts = 0;
      rb.observed += where + " service " + *name + " state=" + std::string(state) +
                     " main_pid=" + std::to_string(pid) +
                     " generation=" + std::to_string(restarts) + "\n";
      if (state != "running" || pid <= 0) {
        differ("service " + *name + " is " + std::string(state) + "; requested running");
      }
    } else if (op == "nginx.reload") {
      std::vector<pid_t> pids;
      if (auto p = tree_->pids(n->node->id()); p.ok()) pids = *p;
      auto procs = view.processes(pids);
      if (!procs.ok()) return procs.status().with_context("read back " + where);
      pid_t master = 0;
      for (const auto& p : *procs)
        if (p.comm == "nginx" && p.cmdline.find("master process") != std::string::npos)
          master = p.pid;
      rb.observed += where + " nginx master " +
                     (master > 0 ? "pid " + std::to_string(master) : std::string("absent")) + "\n";
      if (master <= 0) differ("no nginx master process runs");
    } else {
      rb.typed = false;
      rb.observed += where + ": " + op + " requests no effect this driver reads back\n";
    }
  }
  return rb;
}

}  // namespace aura::workers::nodes
