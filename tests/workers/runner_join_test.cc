// The lab's runner joined into a real node (Node::exec with host_program, nsworld/join.h), under
// a real writer and log: a node-root process (all of the node's capabilities, CAP_SYS_PTRACE
// within its user namespace included) that watches for the runner while it works cannot read
// its environment, descriptors or memory, attach to it or take its writer socket -- though the
// same attacks succeed on an ordinary process of the node; and the writer, not the runner, bounds
// what a run may record. Needs root.
#include <doctest/doctest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>

#include "engine/events/event_types.h"
#include "engine/writer/evidence_writer.h"
#include "tests/support/log_lab.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"
#include "workers/nodes/nodes_driver.h"
#include "workers/nsworld/node.h"
#include "workers/supervisor/supervisor.h"

using namespace aura;
using aura::testing::kHangGuard;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"};

struct JoinLab {
  aura::testing::LogLab lab;
  aura::testing::TempDir state;
  writer::RunTokens tokens;
  std::unique_ptr<sandbox::CgroupTree> tree;
  std::unique_ptr<nsworld::Node> node;
  std::string runner;

  JoinLab() {
    auto t = sandbox::CgroupTree::detect();
    REQUIRE_MESSAGE(t.ok(), t.status().message());
    tree = std::move(t).value();
    nsworld::NodeOptions o;
    o.hostname = "joined";
    o.state_dir = state.path();
    o.lower_paths = {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/passwd", "/etc/group"};
    o.forbidden = {lab.data()};
    auto n = nsworld::Node::start(o, *tree);
    REQUIRE_MESSAGE(n.ok(), n.status().message());
    node = std::move(n).value();
    auto r = workers::nodes::tool_path("aura-runner");
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    runner = *r;
  }
  ~JoinLab() { CHECK(node->destroy().is_ok()); }

  // A file of the node, read by the host through the node's root.
  fs::path inside(const std::string& path) const {
    return fs::path("/proc/" + std::to_string(node->init_pid()) + "/root") / path.substr(1);
  }

  // A shell command as the node's root with its full capabilities (the lab's own setup).
  void sh(const std::string& script) {
    auto r = node->exec({"/bin/sh", "-c", script}, kEnv, kHangGuard, 1 << 16,
                        nsworld::Confinement::kNodeRoot);
    REQUIRE(r.ok());
    INFO(r->out << r->err);
    REQUIRE(r->exit_code == 0);
  }

  // One supervised run under `binding` of `argv`, with the writer: the host's runner joined into
  // the node when `host_program`, else a program of the node given the writer as a runner is.
  supervisor::RunRecord run(writer::RunBinding binding, const std::vector<std::string>& argv,
                            bool host_program) {
    binding.attempt = "0123456789abcdef";
    binding.world = "primary";
    binding.kinds = {"probe.output"};
    supervisor::Launcher launch = [&](int fd,
                                      const std::string& token) -> Result<supervisor::HostFacts> {
      std::vector<std::string> env = kEnv;
      env.push_back("AURA_WRITER_FD=3");
      env.push_back("AURA_WRITER_TOKEN=" + token);
      env.push_back("AURA_EVIDENCE_KIND=probe.output");
      nsworld::ExecOptions o;
      o.deadline = kHangGuard;
      o.confine = nsworld::Confinement::kCall;
      o.pass_fd = fd;
      o.group = "r" + std::to_string(++runs_);
      o.host_program = host_program;
      auto r = node->exec(argv, env, o);
      if (!r.ok()) return r.status();
      supervisor::HostFacts f;
      f.exited = r->exited;
      f.exit_code = r->exit_code;
      f.term_signal = r->term_signal;
      f.stdout_bytes = r->out;
      f.stderr_bytes = r->err;
      f.profile_digest = std::string(64, '0');
      return f;
    };
    auto rec = supervisor::supervise_run(binding, launch, *lab.log, *lab.blobs, tokens, kHangGuard);
    REQUIRE_MESSAGE(rec.ok(), rec.status().message());
    return *rec;
  }

  std::vector<std::string> event_types() const {
    std::vector<std::string> out;
    for (uint64_t seq = 1; seq <= lab.log->head().seq; ++seq) {
      auto e = lab.log->get(seq);
      REQUIRE(e.ok());
      out.push_back(e->type);
    }
    return out;
  }

  int runs_ = 0;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The attacker: a node-root process. It first proves each attack on an ordinary process of the
// node (a `sleep` holding a secret in its environment), then answers the runner's http.get only
// after it has attacked every process running aura-runner (so each attack hits a live runner in
// the middle of its call), one line per target in /tmp/attack.txt.
constexpr const char* kAttacker = R"PY(
import ctypes, errno, os, socket, subprocess
libc = ctypes.CDLL(None, use_errno=True)
def sysc(*a):
    r = libc.syscall(*a)
    return 'ok' if r >= 0 else errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
def attack(pid, kind):
    out = ['target=' + kind]
    try:
        uid = [l for l in open('/proc/%d/status' % pid) if l.startswith('Uid:')][0].split()[1]
    except OSError:
        uid = '?'
    out.append('uid=' + uid)
    def tryit(name, f):
        try:
            v = f()
            out.append(name + '=ok' + ('+token' if v and b'AURA_WRITER_TOKEN' in v else ''))
        except OSError as e:
            out.append(name + '=' + errno.errorcode.get(e.errno, str(e.errno)))
    tryit('environ', lambda: open('/proc/%d/environ' % pid, 'rb').read())
    tryit('fd', lambda: os.listdir('/proc/%d/fd' % pid) and None)
    tryit('exe', lambda: os.readlink('/proc/%d/exe' % pid) and None)
    tryit('mem', lambda: open('/proc/%d/mem' % pid, 'rb').close())
    out.append('ptrace=' + (lambda r: r if r != 'ok' else (libc.ptrace(17, pid, 0, 0), 'ok')[1])(
        sysc(101, 16, pid, 0, 0)))
    pidfd = libc.syscall(434, pid, 0)
    if pidfd < 0:
        out.append('pidfd_getfd=nopidfd')
    else:
        got = [sysc(438, pidfd, fd, 0) for fd in (0, 3)]
        out.append('pidfd_getfd=' + ','.join(got))
    return ' '.join(out) + '\n'
decoy = subprocess.Popen(['/bin/sleep', '60'], env={'AURA_WRITER_TOKEN': 'x', 'PATH': '/bin'},
                         stdin=subprocess.DEVNULL)
# Exec'd and its new environment in place: the exe link changes before the kernel sets up the
# new stack, and until then /proc/PID/environ reads empty.
while not os.readlink('/proc/%d/exe' % decoy.pid).endswith('/sleep'):
    pass
while not open('/proc/%d/environ' % decoy.pid, 'rb').read():
    pass
lines = [attack(decoy.pid, 'decoy')]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(('127.0.0.1', 8123))
srv.listen(1)
open('/tmp/attacker.ready', 'w').close()
srv.settimeout(60)
conn, _ = srv.accept()
for p in os.listdir('/proc'):
    if not p.isdigit() or int(p) == os.getpid():
        continue
    try:
        cmd = open('/proc/%s/cmdline' % p, 'rb').read()
    except OSError:
        continue
    if b'aura-runner' in cmd:
        lines.append(attack(int(p), 'runner'))
open('/tmp/attack.txt', 'w').write(''.join(lines))
conn.recv(4096)
conn.sendall(b'HTTP/1.0 200 OK\r\n\r\nattacked\n')
conn.close()
decoy.kill()
)PY";

}  // namespace

TEST_CASE(
    "runner join: a node-root process cannot read, trace or take the descriptors of the lab's "
    "runner while it works in the node") {
  JoinLab j;
  // The attacker runs as the node's root with every capability of the node's user namespace.
  auto attacker = std::async(std::launch::async, [&] {
    return j.node->exec({"/usr/bin/python3", "-c", kAttacker}, kEnv, kHangGuard, 1 << 16,
                        nsworld::Confinement::kNodeRoot);
  });
  aura::testing::wait_until([&] { return fs::exists(j.inside("/tmp/attacker.ready")); },
                            std::chrono::milliseconds(20));
  writer::RunBinding b;
  const auto rec = j.run(
      b,
      {j.runner, R"({"op":"http.get","args":{"url":"http://127.0.0.1:8123/"},"max_output":4096})"},
      true);
  auto a = attacker.get();
  REQUIRE(a.ok());
  INFO("attacker: " << a->out << a->err);
  CHECK(a->exit_code == 0);
  const std::string report = slurp(j.inside("/tmp/attack.txt"));
  INFO("attacks:\n" << report);

  // The probe itself worked: the answer came back through the writer.
  CHECK(rec.facts.exit_code == 0);
  CHECK_FALSE(rec.evidence.rejected);
  REQUIRE(rec.evidence.frames_accepted.size() == 1);
  auto blob = j.lab.blobs->get(rec.evidence.frames_accepted[0].blob);
  REQUIRE(blob.ok());
  CHECK(blob->find("attacked") != std::string::npos);

  // Each attack works on an ordinary process of the node: the attacker is able.
  CHECK(report.find("target=decoy uid=0 environ=ok+token fd=ok exe=ok mem=ok ptrace=ok "
                    "pidfd_getfd=ok,") != std::string::npos);
  // The runner was found at work, already the node's root (uid 0 inside), and every attack on it
  // was refused: the process the node sees was never dumpable and its memory was made on the
  // host, whose user namespace the node's CAP_SYS_PTRACE does not reach.
  std::istringstream lines(report);
  int runners = 0;
  for (std::string line; std::getline(lines, line);) {
    if (!line.starts_with("target=runner")) continue;
    ++runners;
    CHECK(line ==
          "target=runner uid=0 environ=EACCES fd=EACCES exe=EACCES mem=EACCES "
          "ptrace=EPERM pidfd_getfd=EPERM,EPERM");
  }
  CHECK(runners == 1);  // the process inside; the one that joined is never in the node's view
}

TEST_CASE("runner join: the writer bounds a run's evidence, whatever the runner sends") {
  JoinLab j;
  j.sh(
      "head -c 1000 /dev/zero | tr '\\0' a > /tmp/big; "
      "printf '%s' 'import os, socket\n"
      "s = socket.socket(fileno=3)\n"
      "s.send((\"\\x01{\\\"t\\\":\\\"hello\\\",\\\"token\\\":\\\"%s\\\"}\\n\" % "
      "os.environ[\"AURA_WRITER_TOKEN\"]).encode())\n"
      "h = b\"\\x01{\\\"t\\\":\\\"evidence\\\",\\\"kind\\\":\\\"probe.output\\\",\\\"fields\\\":"
      "{\\\"stream\\\":\\\"stdout\\\",\\\"truncated\\\":false}}\\n\"\n"
      "n = 0\n"
      "try:\n"
      "    for i in range(1000):\n"
      "        s.send(h + b\"x\" * 60000)\n"
      "        n += 1\n"
      "except OSError as e:\n"
      "    print(\"stopped\", n)\n' > /tmp/flood.py");

  SUBCASE("a runner's blob over the catalog's bound is refused and the run recorded") {
    writer::RunBinding b;
    b.max_frames = 2;
    b.max_blob_bytes = 100;  // the catalog entry's max_output_bytes
    // A runner told it may send more than the entry allows (as a hijacked one would).
    const auto rec = j.run(
        b, {j.runner, R"({"op":"file.read","args":{"path":"/tmp/big"},"max_output":4096})"}, true);
    CHECK(rec.evidence.rejected);
    CHECK(rec.evidence.reason == "a blob of 1000 bytes is over the run's output bound of 100");
    CHECK(rec.evidence.accepted == 0);
    CHECK(j.event_types() == std::vector<std::string>{events::kRunStarted,
                                                      events::kEvidenceRejected,
                                                      events::kRunEnded});
  }
  SUBCASE("a flood is cut at the run's byte cap and the run recorded") {
    writer::RunBinding b;
    b.max_bytes = 1 << 20;
    const auto rec = j.run(b, {"/usr/bin/python3", "/tmp/flood.py"}, false);
    INFO(rec.facts.stdout_bytes << rec.facts.stderr_bytes);
    CHECK(rec.evidence.rejected);
    CHECK(rec.evidence.reason.find("cap of 1048576 bytes") != std::string::npos);
    CHECK(rec.evidence.accepted < 20);
    CHECK(rec.facts.stdout_bytes.starts_with("stopped "));
    const auto types = j.event_types();
    CHECK(types.back() == events::kRunEnded);
    CHECK(std::count(types.begin(), types.end(), events::kEvidenceRejected) == 1);
  }
  SUBCASE("with a runner call's binding the flood stops at its second frame") {
    writer::RunBinding b;
    b.max_frames = 2;
    b.max_blob_bytes = 4096;
    const auto rec = j.run(b, {"/usr/bin/python3", "/tmp/flood.py"}, false);
    CHECK(rec.evidence.rejected);
    CHECK(rec.evidence.accepted == 0);  // its first evidence frame is already over the bound
    CHECK(rec.evidence.reason.find("output bound of 4096") != std::string::npos);
  }
}
