// The O1 prototype on real namespace nodes: a control node runs ansible-playbook (confined as
// an action is, Confinement::kCall) and configures three web nodes running Debian's nginx over
// SSH, each web node running Debian's sshd as its own root. Proves the converge changes every
// web node's rendered file, nginx reloads and serves it to another node, and a second run
// changes nothing; prints the timings docs/WORLDS.md records ("O1 prototype: Ansible over SSH
// between nodes"). Non-SSH connections from inside the control node are tried and fail; web1's
// sessions are then confined like an action (ForceCommand + setpriv) and web1 still converges.
#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"
#include "tests/support/world_tag.h"
#include "workers/netns/world_network.h"
#include "workers/nsworld/node.h"
#include "workers/sandbox/registry.h"

using namespace aura;
using nsworld::Confinement;
using nsworld::ExecResult;
using nsworld::Node;
using Clock = std::chrono::steady_clock;
using aura::testing::wait_until;

namespace {

// Hang guards for commands in the nodes (never speed bars), far beyond what each takes on a
// machine half as fast with both cores busy; the figures are printed, never asserted. A shell
// command or an ssh login: under a second idle (docs/WORLDS.md).
constexpr std::chrono::seconds kCommandHangGuard{60};
// One ansible-playbook run or ad-hoc ansible command: 0.9-8 s idle (docs/WORLDS.md).
constexpr std::chrono::seconds kAnsibleHangGuard{180};

const std::vector<std::string> kEnv = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
                                       "LANG=C.UTF-8"};
const std::vector<std::string> kWebs = {"web1", "web2", "web3"};

// What the nodes driver mounts read-only under every node (workers/nodes/nodes_world.cc).
std::vector<std::string> image() {
  std::vector<std::string> out;
  for (const char* p : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/ld.so.cache",
                        "/etc/nsswitch.conf", "/etc/alternatives", "/etc/ssl", "/etc/mime.types"})
    if (::access(p, F_OK) == 0) out.push_back(p);
  return out;
}

std::string tag() { return aura::testing::world_tag('f'); }

// Newlines and tabs as spaces (/proc status lines in one figure row).
std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\t') c = ' ';
  return s;
}

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The figures, printed together at the end (timings belong in docs, not in assertions).
struct Figures {
  std::vector<std::string> rows;
  void add(const std::string& what, double s, const std::string& extra = "") {
    char buf[160];
    std::snprintf(buf, sizeof buf, "%-52s %6.2f s%s", what.c_str(), s, extra.c_str());
    rows.push_back(buf);
  }
  void note(const std::string& what, const std::string& value) {
    rows.push_back(what + ": " + value);
  }
  ~Figures() {
    std::printf("\n== O1 prototype: Ansible over SSH between nodes ==\n");
    for (const auto& row : rows) std::printf("  %s\n", row.c_str());
    std::fflush(stdout);
  }
};

// The world: destroyed in reverse order of declaration (nodes, then the network, then the
// state folder), on success and on a failed REQUIRE alike.
struct World {
  aura::testing::TempDir state;
  netns::WorldNetwork net;
  std::vector<std::unique_ptr<Node>> nodes;  // ctl, web1, web2, web3
  ~World() { (void)destroy(); }
  bool destroy() {
    bool ok = true;
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) ok = (*it)->destroy().is_ok() && ok;
    return net.destroy().is_ok() && ok;
  }
  Node& ctl() { return *nodes[0]; }
  Node& web(size_t i) { return *nodes[1 + i]; }
};

ExecResult sh(Node& node, const std::string& script, const std::vector<std::string>& args,
              Confinement confine, std::chrono::milliseconds deadline = kCommandHangGuard,
              const std::vector<std::string>& extra_env = {}) {
  std::vector<std::string> argv = {"/bin/sh", "-c", script, "sh"};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env = kEnv;
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  auto r = node.exec(argv, env, deadline, 1 << 20, confine);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  return std::move(r).value();
}

// Writes each (path, content) pair as the node's root, making parent folders.
void write_files(Node& node, const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> args;
  for (const auto& [path, content] : files) {
    args.push_back(path);
    args.push_back(content);
  }
  auto r = sh(node,
              "while [ $# -gt 0 ]; do mkdir -p \"$(dirname \"$1\")\" && printf '%s' \"$2\" > "
              "\"$1\" || exit 1; shift 2; done",
              args, Confinement::kNodeRoot);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
}

// A web node's users: root, sshd's privilege separation user, nginx's workers' user.
const char* kWebPasswd =
    "root:x:0:0:root:/root:/bin/sh\n"
    "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n"
    "sshd:x:100:65534::/run/sshd:/usr/sbin/nologin\n"
    "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
const char* kWebGroup = "root:x:0:\nwww-data:x:33:\nnogroup:x:65534:\n";
// Without PAM sshd reads the account's password field: "*" is no password, not a locked account.
const char* kWebShadow = "root:*:19700:0:99999:7:::\n";

std::string sshd_config(const std::string& address) {
  return "Port 22\n"
         "ListenAddress " +
         address +
         "\n"
         "HostKey /etc/ssh/ssh_host_ed25519_key\n"
         "PermitRootLogin prohibit-password\n"
         "PubkeyAuthentication yes\n"
         "AuthorizedKeysFile .ssh/authorized_keys\n"
         "PasswordAuthentication no\n"
         "KbdInteractiveAuthentication no\n"
         "UsePAM no\n"
         "PrintMotd no\n"
         "PrintLastLog no\n"
         "UseDNS no\n"
         "PidFile /run/sshd.pid\n"
         "MaxStartups 32:30:64\n"
         "Subsystem sftp internal-sftp\n";
}

const char* kNginxConf =
    "user www-data;\n"
    "worker_processes 1;\n"
    "pid /run/nginx.pid;\n"
    "error_log /var/log/nginx/error.log;\n"
    "events { worker_connections 64; }\n"
    "http {\n"
    "  access_log off;\n"
    "  default_type text/plain;\n"
    "  include /etc/nginx/conf.d/*.conf;\n"
    "}\n";
const char* kUnconfiguredSite =
    "server { listen 80; location / { return 200 \"unconfigured\\n\"; } }\n";

// The Ansible project in the control node (/srv/o1).
std::vector<std::pair<std::string, std::string>> project(const std::vector<std::string>& addrs) {
  std::string inventory = "[web]\n";
  for (size_t i = 0; i < kWebs.size(); ++i)
    inventory += kWebs[i] + " ansible_host=" + addrs[i] + "\n";
  inventory += "\n[web:vars]\nansible_user=root\n";
  return {
      {"/srv/o1/ansible.cfg",
       "[defaults]\n"
       "inventory = inventory.ini\n"
       "forks = 4\n"
       "gathering = explicit\n"
       "interpreter_python = /usr/bin/python3\n"
       "host_key_checking = True\n"
       "retry_files_enabled = False\n"
       "nocows = 1\n"
       "\n"
       "[ssh_connection]\n"
       "pipelining = True\n"
       "ssh_args = -o ControlMaster=auto -o ControlPersist=60s\n"
       "control_path_dir = /root/.ansible/cp\n"},
      {"/srv/o1/inventory.ini", inventory},
      {"/srv/o1/group_vars/web.yml", "site_port: 80\nsite_message: o1 site\n"},
      {"/srv/o1/host_vars/web2.yml", "site_message: web2 override\n"},
      {"/srv/o1/site.yml", "- hosts: web\n  roles:\n    - site\n"},
      {"/srv/o1/roles/site/tasks/main.yml",
       "- name: nginx server block\n"
       "  ansible.builtin.template:\n"
       "    src: site.conf.j2\n"
       "    dest: /etc/nginx/conf.d/site.conf\n"
       "    owner: root\n"
       "    group: root\n"
       "    mode: \"0644\"\n"
       "  notify: reload nginx\n"},
      {"/srv/o1/roles/site/handlers/main.yml",
       "- name: reload nginx\n"
       "  ansible.builtin.shell: /usr/sbin/nginx -t && /usr/sbin/nginx -s reload\n"},
      {"/srv/o1/roles/site/templates/site.conf.j2",
       "# Managed by Ansible (role site); do not edit.\n"
       "server {\n"
       "    listen {{ site_port }};\n"
       "    server_name {{ inventory_hostname }};\n"
       "    location / {\n"
       "        return 200 \"{{ site_message }} on {{ inventory_hostname }}\\n\";\n"
       "    }\n"
       "}\n"},
  };
}

// `changed=` per host from a PLAY RECAP.
std::vector<std::pair<std::string, int>> recap_changed(const std::string& out) {
  std::vector<std::pair<std::string, int>> hosts;
  static const std::regex line(R"((web\d)\s+:\s+ok=\d+\s+changed=(\d+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), line); it != std::sregex_iterator();
       ++it)
    hosts.emplace_back((*it)[1].str(), std::stoi((*it)[2].str()));
  return hosts;
}

// One ansible-playbook run in the control node, confined as an action is (kCall, a call group
// of the driver's action limits: 256 MiB, 64 pids, one CPU).
struct PlaybookRun {
  ExecResult result;
  double wall_s = 0;
};
PlaybookRun playbook(Node& ctl, const std::string& group, const std::string& args,
                     const std::vector<std::string>& extra_env = {}) {
  nsworld::ExecOptions o;
  o.deadline = kAnsibleHangGuard;
  o.confine = Confinement::kCall;
  o.group = group;
  o.limits.memory_bytes = 256ull << 20;
  o.limits.pids_max = 64;
  o.keep_group = true;  // ControlPersist masters outlive the run, as an action's daemons do
  std::vector<std::string> env = kEnv;
  env.insert(env.end(), extra_env.begin(), extra_env.end());
  const auto t = Clock::now();
  auto r =
      ctl.exec({"/bin/sh", "-c", "cd /srv/o1 && exec ansible-playbook site.yml " + args}, env, o);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  return {std::move(r).value(), seconds_since(t)};
}

// The run succeeded and its PLAY RECAP says `changed=<expected>` for every web node.
bool changed_on_every_web(const ExecResult& r, int expected) {
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  const auto changed = recap_changed(r.out);
  CHECK(changed.size() == kWebs.size());
  bool all = r.exit_code == 0 && changed.size() == kWebs.size();
  for (const auto& [host, n] : changed) {
    CHECK_MESSAGE(n == expected, host);
    all = all && n == expected;
  }
  return all;
}

std::string usage_text(const ExecResult& r) {
  if (!r.usage_known) return "";
  char buf[128];
  std::snprintf(buf, sizeof buf, "   call group CPU %.2f s, peak %llu MiB, forks refused %llu",
                r.usage.cpu_ns / 1e9,
                static_cast<unsigned long long>(r.usage.peak_memory_bytes >> 20),
                static_cast<unsigned long long>(r.usage.pids_limit_hits));
  return buf;
}

// GET http://<address>/ from inside `from` (kRunner: an ordinary unprivileged client).
std::string http_get(Node& from, const std::string& address) {
  auto r = sh(from,
              "exec python3 -c 'import sys,urllib.request;"
              "sys.stdout.write(urllib.request.urlopen(\"http://\"+sys.argv[1]+\"/\",timeout=10)"
              ".read().decode())' \"$1\"",
              {address}, Confinement::kRunner);
  return r.out;
}

}  // namespace

TEST_CASE(
    "o1 ssh: ansible-playbook in a confined control node configures nginx web nodes over "
    "ssh, and a second run changes nothing") {
  const bool openssh = ::access("/usr/sbin/sshd", X_OK) == 0 && ::access("/usr/bin/ssh", X_OK) == 0;
  REQUIRE_MESSAGE(openssh,
                  "openssh-server and openssh-client are not installed (scripts/install-deps.sh)");
  REQUIRE_MESSAGE(::access("/usr/bin/ansible-playbook", X_OK) == 0, "ansible is not installed");
  REQUIRE_MESSAGE(::access("/usr/sbin/nginx", X_OK) == 0, "nginx is not installed");
  auto tree = sandbox::CgroupTree::detect();
  REQUIRE_MESSAGE(tree.ok(), tree.status().message());
  Figures fig;
  World w;

  // The world: one control node and three web nodes on a world network.
  const auto t_world = Clock::now();
  std::vector<std::string> names = {"ctl"};
  names.insert(names.end(), kWebs.begin(), kWebs.end());
  auto net = netns::WorldNetwork::create(tag(), names);
  REQUIRE_MESSAGE(net.ok(), net.status().message());
  w.net = std::move(net).value();
  for (const auto& name : names) {
    nsworld::NodeOptions o;
    o.hostname = name;
    o.netns = "/run/netns/" + w.net.netns_name(name);
    o.state_dir = w.state.path();
    o.lower_paths = image();
    o.limits.memory_bytes = 512ull << 20;  // the nodes driver's node limits
    o.limits.pids_max = 512;
    auto node = Node::start(o, **tree);
    REQUIRE_MESSAGE(node.ok(), node.status().message());
    w.nodes.push_back(std::move(node).value());
  }
  fig.add("network + 4 nodes started", seconds_since(t_world));
  std::vector<std::string> addrs;
  for (const auto& web : kWebs) addrs.push_back(w.net.address(web));

  // Control node: root, /dev/shm (Ansible's worker queues are multiprocessing locks, POSIX
  // semaphores in /dev/shm; the node's minimal /dev has none), the client key (generated at
  // world build).
  const auto t_ctl = Clock::now();
  write_files(w.ctl(), {{"/etc/passwd",
                         "root:x:0:0:root:/root:/bin/sh\n"
                         "nobody:x:65534:65534:nobody:/nonexistent:/bin/false\n"},
                        {"/etc/group", "root:x:0:\nnogroup:x:65534:\n"}});
  auto key = sh(w.ctl(),
                "mkdir -p -m 1777 /dev/shm && "
                "mount -t tmpfs -o size=8m,mode=1777,nosuid,nodev shm /dev/shm && "
                "mkdir -p -m 700 /root/.ssh && ssh-keygen -q -t ed25519 -N '' -C ctl "
                "-f /root/.ssh/id_ed25519 && cat /root/.ssh/id_ed25519.pub",
                {}, Confinement::kNodeRoot);
  INFO(key.err);
  REQUIRE(key.exit_code == 0);
  const std::string client_pub = key.out;
  fig.add("control node: users + client key", seconds_since(t_ctl));

  // Web nodes: users, nginx serving "unconfigured", sshd with a host key made here, and a
  // devpts of the node's own (Ansible without pipelining asks for a tty: `ssh -tt`).
  std::string known_hosts;
  double sshd_start_max = 0;
  for (size_t i = 0; i < kWebs.size(); ++i) {
    Node& web = w.web(i);
    const auto t_web = Clock::now();
    write_files(web, {{"/etc/passwd", kWebPasswd},
                      {"/etc/group", kWebGroup},
                      {"/etc/shadow", kWebShadow},
                      {"/etc/ssh/sshd_config", sshd_config(addrs[i])},
                      {"/root/.ssh/authorized_keys", client_pub},
                      {"/etc/nginx/nginx.conf", kNginxConf},
                      {"/etc/nginx/conf.d/site.conf", kUnconfiguredSite}});
    auto r = sh(web,
                "set -e; chmod 0640 /etc/shadow; chmod 700 /root/.ssh; "
                "chmod 600 /root/.ssh/authorized_keys; "
                "mkdir -p -m 0755 /run/sshd /var/log/nginx /var/lib/nginx /var/www; "
                "mkdir -p /dev/pts && mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 "
                "devpts /dev/pts && ln -sf pts/ptmx /dev/ptmx; "
                "ssh-keygen -q -t ed25519 -N '' -C \"$1\" -f /etc/ssh/ssh_host_ed25519_key; "
                "/usr/sbin/nginx; cat /etc/ssh/ssh_host_ed25519_key.pub",
                {kWebs[i]}, Confinement::kNodeRoot);
    INFO(kWebs[i] << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    std::istringstream pub(r.out);
    std::string type, blob;
    pub >> type >> blob;
    known_hosts += addrs[i] + " " + type + " " + blob + "\n";
    const double setup_s = seconds_since(t_web);

    // sshd: started as the node's root (it chroots and drops to `sshd` per connection), waited
    // for until the node's address accepts on 22 (for 50 s at most: a hang guard inside the
    // command's own).
    const auto t_sshd = Clock::now();
    r = sh(web,
           "/usr/sbin/sshd -t && /usr/sbin/sshd -E /var/log/sshd.log && exec python3 -c '"
           "import socket,sys,time\n"
           "end = time.monotonic() + 50\n"
           "while time.monotonic() < end:\n"
           "  try: socket.create_connection((sys.argv[1],22),1).close(); sys.exit(0)\n"
           "  except OSError: time.sleep(0.01)\n"
           "sys.exit(1)' \"$1\"",
           {addrs[i]}, Confinement::kNodeRoot);
    INFO(kWebs[i] << ": " << r.err);
    REQUIRE(r.exit_code == 0);
    sshd_start_max = std::max(sshd_start_max, seconds_since(t_sshd));
    fig.add(kWebs[i] + ": users, files, host key, nginx", setup_s);
  }
  fig.add("sshd start until port 22 accepts (slowest web node)", sshd_start_max);

  // Control node: known_hosts from the host keys made above, and the project.
  auto files = project(addrs);
  files.emplace_back("/root/.ssh/known_hosts", known_hosts);
  write_files(w.ctl(), files);
  fig.add("world built, sshd ready on 3 web nodes", seconds_since(t_world));

  // One plain ssh login, confined as an action, to see the handshake's cost, and what a
  // session on a web node is: sshd's child, so the web node's root with every capability of its
  // user namespace and no seccomp filter (kNodeRoot), whatever the control node's confinement.
  {
    const auto t = Clock::now();
    auto r = sh(w.ctl(),
                "ssh -o BatchMode=yes root@\"$1\" "
                "'id -u; hostname; grep -E \"^(CapEff|NoNewPrivs|Seccomp):\" /proc/self/status'",
                {addrs[0]}, Confinement::kCall);
    fig.add("one ssh login + command from ctl (kCall)", seconds_since(t));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.rfind("0\nweb1\n", 0) == 0);
    const std::string status = one_line(r.out.substr(std::min(r.out.size(), size_t(7))));
    fig.note("a session on web1", status);
  }

  // Ansible's own start (Python, the collections), no connection made.
  {
    nsworld::ExecOptions o;
    o.deadline = kAnsibleHangGuard;
    o.confine = Confinement::kCall;
    const auto t = Clock::now();
    auto r = w.ctl().exec(
        {"/bin/sh", "-c", "cd /srv/o1 && exec ansible-playbook --syntax-check site.yml"}, kEnv, o);
    REQUIRE(r.ok());
    CHECK_MESSAGE(r->exit_code == 0, r->out << r->err);
    fig.add("ansible-playbook --syntax-check (start-up only)", seconds_since(t));
  }

  // Converge: pipelining and ControlPersist on (ansible.cfg).
  auto converge = playbook(w.ctl(), "converge", "");
  REQUIRE(changed_on_every_web(converge.result, 2));  // the template and the handler
  fig.add("converge (changed), pipelining + ControlPersist", converge.wall_s,
          usage_text(converge.result));

  // Each web node's file was rendered with its own variables; nginx took it and serves it.
  for (size_t i = 0; i < kWebs.size(); ++i) {
    const std::string message = (kWebs[i] == "web2" ? "web2 override" : "o1 site");
    const std::string expect = message + " on " + kWebs[i];
    auto r = sh(w.web(i), "cat /etc/nginx/conf.d/site.conf", {}, Confinement::kRunner);
    CHECK(r.out.rfind("# Managed by Ansible", 0) == 0);
    CHECK(r.out.find("return 200 \"" + expect + "\\n\";") != std::string::npos);
    r = sh(w.web(i), "/usr/sbin/nginx -t 2>&1", {}, Confinement::kNodeRoot);
    CHECK_MESSAGE(r.exit_code == 0, r.out);
    // nginx takes the new file a moment after its reload: asked until it serves it.
    std::string body;
    wait_until(
        [&] {
          body = http_get(w.ctl(), addrs[i]);
          return body == expect + "\n";
        },
        std::chrono::milliseconds(50));
    CHECK(body == expect + "\n");
  }

  // A second run changes nothing.
  auto again = playbook(w.ctl(), "again", "");
  CHECK(changed_on_every_web(again.result, 0));
  fig.add("second run (changed=0), pipelining + ControlPersist", again.wall_s,
          usage_text(again.result));

  // --check --diff with a pending change: reported, not made.
  auto check = playbook(w.ctl(), "check", "--check --diff -e site_message=preview");
  {
    INFO(check.result.out << check.result.err);
    CHECK(check.result.exit_code == 0);
    CHECK(check.result.out.find("+        return 200 \"preview on web1\\n\";") !=
          std::string::npos);
    auto r = sh(w.web(0), "cat /etc/nginx/conf.d/site.conf", {}, Confinement::kRunner);
    CHECK(r.out.find("preview") == std::string::npos);
  }
  fig.add("--check --diff (a pending change)", check.wall_s, usage_text(check.result));

  // The same no-change run without each optimisation. No ControlPersist: ssh_args without it
  // (Ansible then sets no ControlPath), so each task opens a fresh connection.
  struct Variant {
    const char* group;
    const char* what;
    std::vector<std::string> env;
  };
  const Variant variants[] = {
      {"nopipe", "second run, ControlPersist, no pipelining", {"ANSIBLE_PIPELINING=False"}},
      {"nopersist",
       "second run, pipelining, no ControlPersist",
       {"ANSIBLE_SSH_ARGS=-o ControlMaster=no"}},
      {"neither",
       "second run, neither",
       {"ANSIBLE_PIPELINING=False", "ANSIBLE_SSH_ARGS=-o ControlMaster=no"}},
  };
  for (const Variant& v : variants) {
    auto run = playbook(w.ctl(), v.group, "", v.env);
    CHECK_MESSAGE(changed_on_every_web(run.result, 0), std::string(v.what));
    fig.add(std::string(v.what), run.wall_s, usage_text(run.result));
  }

  // Connections that do not go over the network cannot reach another node from inside: the
  // other nodes' processes and roots are not in the control node's PID and mount namespaces,
  // and setns/chroot are refused by the action's seccomp policy. Each is tried through Ansible
  // (which hides the cause) and as the command it runs (which names it).
  struct Other {
    const char* what;
    const char* ansible;
    const char* command;
  };
  const Other others[] = {
      {"community.docker.nsenter",
       "ansible web1 -c community.docker.nsenter -e ansible_nsenter_pid=1 -m ping",
       "nsenter --target 1 --mount --uts --ipc --net --pid -- /bin/true"},
      {"community.general.chroot", "ansible all -i /, -c community.general.chroot -m ping",
       "chroot / /bin/true"},
  };
  for (const Other& o : others) {
    auto r = sh(w.ctl(), std::string("cd /srv/o1 && ") + o.ansible + " 2>&1", {},
                Confinement::kCall, kAnsibleHangGuard);
    CHECK_MESSAGE(r.out.find("SUCCESS") == std::string::npos, r.out);
    r = sh(w.ctl(), std::string(o.command) + " 2>&1", {}, Confinement::kCall);
    CHECK(r.exit_code != 0);
    fig.note(o.what, "`" + std::string(o.command) + "` exits " + std::to_string(r.exit_code) +
                         ": " + r.out.substr(0, r.out.find('\n')));
  }
  // Sessions on a web node can be confined too: web1's sshd forces every session (commands and
  // the sftp subsystem alike) through setpriv with the call capabilities and no_new_privs (no
  // seccomp: setpriv cannot install a filter). The playbook still converges web1.
  {
    write_files(w.web(0),
                {{"/etc/ssh/aura-session",
                  "#!/bin/sh\n"
                  "exec /usr/bin/setpriv --no-new-privs --inh-caps=-all --ambient-caps=-all "
                  "--bounding-set=-all,+chown,+dac_override,+dac_read_search,+fowner,+fsetid,"
                  "+kill -- /bin/sh -c \"$SSH_ORIGINAL_COMMAND\"\n"},
                 {"/etc/ssh/sshd_config", sshd_config(addrs[0]) +
                                              "Subsystem sftp /usr/lib/openssh/sftp-server\n" +
                                              "ForceCommand /etc/ssh/aura-session\n"}});
    auto r = sh(w.web(0),
                "chmod 755 /etc/ssh/aura-session && "
                "sed -i '/^Subsystem sftp internal-sftp$/d' /etc/ssh/sshd_config && "
                "/usr/sbin/sshd -t && kill -HUP $(cat /run/sshd.pid)",
                {}, Confinement::kNodeRoot);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    // sshd re-executes on HUP: a login meanwhile is refused, or served under the old config.
    // Logins are tried until one runs through ForceCommand (or the hang guard passes).
    wait_until(
        [&] {
          r = sh(w.ctl(),
                 "ssh -o BatchMode=yes -o ControlMaster=no -o ControlPath=none root@\"$1\" "
                 "'grep -E \"^(CapEff|NoNewPrivs|Seccomp):\" /proc/self/status'",
                 {addrs[0]}, Confinement::kCall);
          return r.exit_code == 0 && r.out.find("NoNewPrivs:\t1") != std::string::npos;
        },
        std::chrono::milliseconds(50));
    INFO(r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("CapEff:\t000000000000003f") != std::string::npos);  // the call set
    CHECK(r.out.find("NoNewPrivs:\t1") != std::string::npos);
    const std::string status = one_line(r.out);
    fig.note("a session on web1 through ForceCommand setpriv", status);
    auto run = playbook(w.ctl(), "confined", "-l web1 -e site_message=confined",
                        {"ANSIBLE_SSH_ARGS=-o ControlMaster=no"});
    INFO(run.result.out << run.result.err);
    CHECK(run.result.exit_code == 0);
    CHECK(recap_changed(run.result.out) == std::vector<std::pair<std::string, int>>{{"web1", 2}});
    std::string body;
    wait_until(
        [&] {
          body = http_get(w.ctl(), addrs[0]);
          return body == "confined on web1\n";
        },
        std::chrono::milliseconds(50));
    CHECK(body == "confined on web1\n");
    fig.add("converge web1 through confined sessions, no ControlPersist", run.wall_s,
            usage_text(run.result));
  }

  // What the runs leave in the control node: ControlPersist masters (ssh), in kept call groups.
  auto r = sh(w.ctl(), "for p in /proc/[0-9]*; do cat $p/comm; done | sort | uniq -c | xargs", {},
              Confinement::kCall);
  fig.note("processes the control node sees", r.out.substr(0, r.out.find('\n')));
  if (auto groups = w.ctl().call_groups(); groups.ok())
    fig.note("call groups kept in the control node", std::to_string(groups->size()));

  // Everything goes: the nodes (sshd, nginx and the masters with them), then the network.
  const auto t_destroy = Clock::now();
  CHECK(w.destroy());
  fig.add("destroy the world", seconds_since(t_destroy));
  CHECK(netns::netns_names_with_prefix("aura-" + w.net.tag()).empty());
  auto entries = sandbox::Registry(w.state.path()).entries();
  REQUIRE(entries.ok());
  for (const auto& e : *entries) CHECK(e.released);
}
