// Hostile commands inside the sandbox: a fork bomb, a memory hog, a command past its deadline,
// and every denied syscall. Each is contained, and the supervisor's facts say what happened.
#include <doctest/doctest.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/workers/sandbox_support.h"
#include "workers/sandbox/registry.h"
#include "workers/sandbox/seccomp_policy.h"

namespace fs = std::filesystem;
using aura::Result;
using aura::testing::sandbox_ran;
using aura::testing::SandboxFixture;

namespace {

// Every cgroup folder and stage folder the runs under `state_dir` recorded is gone and marked
// released.
void check_nothing_left(const fs::path& state_dir) {
  aura::sandbox::Registry registry(state_dir);
  auto entries = registry.entries();
  REQUIRE(entries.ok());
  CHECK_FALSE(entries->empty());
  for (const auto& e : *entries) {
    INFO(e.path.string());
    CHECK(e.released);
    CHECK_FALSE(fs::exists(e.path));
  }
}

}  // namespace

TEST_CASE("sandbox confinement: a fork bomb stops at the pids limit and is destroyed") {
  SandboxFixture f;
  f.profile.pids_max = 32;
  f.profile.wall_deadline_ms = 2000;
  // PID 1 spins on builtins only, so it needs no fork of its own to outlive the bomb.
  auto r = f.sh("b() { b | b & }; b; while :; do :; done");
  if (!sandbox_ran(r)) return;
  CHECK(r->pids_limit_hits > 0);
  CHECK(r->killed_by_deadline);
  CHECK(r->wall_ns < 10'000'000'000ull);
  check_nothing_left(f.options.state_dir);
}

TEST_CASE("sandbox confinement: a memory hog is killed by the memory limit") {
  SandboxFixture f;
  f.profile.memory_bytes = 48ull << 20;
  auto r = f.run({"/usr/bin/awk", "BEGIN { s = \"xxxxxxxxxxxxxxxx\"; while (1) s = s s }"});
  if (!sandbox_ran(r)) return;
  CHECK_FALSE(r->exited);
  CHECK(r->term_signal == SIGKILL);
  CHECK(r->oom_kills >= 1);
  CHECK_FALSE(r->killed_by_deadline);
  CHECK(r->peak_memory_bytes <= f.profile.memory_bytes + (1u << 20));
  CHECK(r->peak_memory_bytes > f.profile.memory_bytes / 2);
  check_nothing_left(f.options.state_dir);
}

TEST_CASE("sandbox confinement: sleep 100 is killed at the deadline and its cgroup is gone") {
  SandboxFixture f;
  f.profile.wall_deadline_ms = 500;
  auto r = f.run({"/bin/sleep", "100"});
  if (!sandbox_ran(r)) return;
  CHECK(r->killed_by_deadline);
  CHECK_FALSE(r->exited);
  CHECK(r->term_signal == SIGKILL);
  CHECK(r->wall_ns >= 500'000'000ull);
  CHECK(r->wall_ns < 5'000'000'000ull);
  check_nothing_left(f.options.state_dir);
}

// Runs inside the sandbox (this binary, shown at /probe): tries each denied call and more, and
// prints one "name=result" line each. Does nothing outside a sandbox run.
TEST_CASE("sandbox probe: syscalls from inside") {
  if (std::getenv("AURA_SANDBOX_PROBE") == nullptr) return;
  std::ostringstream out;
  for (const std::string& name : aura::sandbox::seccomp_denied_syscalls()) {
    const int nr = seccomp_syscall_resolve_name(name.c_str());
    if (nr < 0) continue;
    errno = 0;
    const long rc = ::syscall(nr, 0, 0, 0, 0, 0, 0);
    out << "deny " << name << "=" << (rc == -1 ? strerrorname_np(errno) : "ok") << "\n";
  }
  errno = 0;
  long rc = ::syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);
  if (rc == 0) ::_exit(0);
  out << "clone-newnet=" << (rc == -1 ? strerrorname_np(errno) : "ok") << "\n";
  rc = ::syscall(SYS_clone3, nullptr, 0);
  out << "clone3=" << (rc == -1 ? strerrorname_np(errno) : "ok") << "\n";
  rc = ::syscall(SYS_personality, 0xffffffffUL);
  out << "personality-query=" << (rc == -1 ? strerrorname_np(errno) : "ok") << "\n";
  rc = ::syscall(SYS_mknodat, AT_FDCWD, "/tmp/disk", S_IFBLK | 0600, makedev(8, 0));
  out << "mknod-block=" << (rc == -1 ? strerrorname_np(errno) : "ok") << "\n";
  for (const auto& [name, family] : {std::pair{"vsock", AF_VSOCK}, std::pair{"packet", AF_PACKET},
                                     std::pair{"inet", AF_INET}, std::pair{"unix", AF_UNIX}}) {
    const int fd = ::socket(family, family == AF_PACKET ? SOCK_RAW : SOCK_STREAM, 0);
    out << "socket-" << name << "=" << (fd < 0 ? strerrorname_np(errno) : "ok") << "\n";
    if (fd >= 0) ::close(fd);
  }
  out << "pid=" << ::getpid() << "\n";
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    for (const char* key :
         {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:", "NoNewPrivs:", "Seccomp:"}) {
      if (line.rfind(key, 0) == 0) out << line << "\n";
    }
  }
  std::cout << "PROBE\n" << out.str() << "END\n";
}

TEST_CASE("sandbox confinement: denied syscalls fail with EPERM inside; no capabilities") {
  SandboxFixture f;
  f.options.env = {"AURA_SANDBOX_PROBE=1", "PATH=/usr/bin:/bin"};
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  auto r = f.run({"/probe", "--test-case=sandbox probe: syscalls from inside", "--no-intro"},
                 {{self, "/probe"}});
  if (!sandbox_ran(r)) return;
  INFO(r->stdout_bytes, r->stderr_bytes);
  const std::string& out = r->stdout_bytes;
  REQUIRE(out.find("PROBE\n") != std::string::npos);
  REQUIRE(out.find("END\n") != std::string::npos);
  for (const std::string& name : aura::sandbox::seccomp_denied_syscalls()) {
    if (seccomp_syscall_resolve_name(name.c_str()) < 0) continue;
    INFO(name);
    CHECK(out.find("deny " + name + "=EPERM\n") != std::string::npos);
  }
  CHECK(out.find("deny mount=EPERM\n") != std::string::npos);
  CHECK(out.find("deny unshare=EPERM\n") != std::string::npos);
  CHECK(out.find("clone-newnet=EPERM\n") != std::string::npos);
  CHECK(out.find("clone3=ENOSYS\n") != std::string::npos);
  CHECK(out.find("personality-query=ok\n") != std::string::npos);
  CHECK(out.find("mknod-block=EPERM\n") != std::string::npos);
  CHECK(out.find("pid=1\n") != std::string::npos);
  // AF_VSOCK is not namespaced and would reach the hypervisor's host.
  CHECK(out.find("socket-vsock=EAFNOSUPPORT\n") != std::string::npos);
  CHECK(out.find("socket-packet=EAFNOSUPPORT\n") != std::string::npos);
  CHECK(out.find("socket-inet=ok\n") != std::string::npos);
  CHECK(out.find("socket-unix=ok\n") != std::string::npos);
  for (const char* key : {"CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"})
    CHECK(out.find(std::string(key) + "\t0000000000000000\n") != std::string::npos);
  CHECK(out.find("NoNewPrivs:\t1\n") != std::string::npos);
  CHECK(out.find("Seccomp:\t2\n") != std::string::npos);
}

TEST_CASE("sandbox confinement: unshare(1) and mount(8) are refused inside") {
  SandboxFixture f;
  auto r = f.sh("unshare -U true; echo rc=$?; mount -t tmpfs none /tmp; echo rc=$?");
  if (!sandbox_ran(r)) return;
  INFO(r->stdout_bytes, r->stderr_bytes);
  CHECK(r->stdout_bytes.find("rc=0") == std::string::npos);
  CHECK(r->stderr_bytes.find("Operation not permitted") != std::string::npos);
}

// Inside the sandbox: a 32-bit system call through int 0x80, which the filter's architecture
// check must answer by killing the process.
TEST_CASE("sandbox probe: a foreign-architecture syscall") {
  if (std::getenv("AURA_SANDBOX_PROBE") == nullptr) return;
#if defined(__x86_64__)
  long rc = 20;  // getpid on i386
  asm volatile("int $0x80" : "+a"(rc) : : "memory");
  std::cout << "survived rc=" << rc << "\n";
#endif
}

TEST_CASE("sandbox confinement: a syscall from another architecture kills the process") {
#if !defined(__x86_64__)
  return;
#endif
  SandboxFixture f;
  f.options.env = {"AURA_SANDBOX_PROBE=1"};
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  auto r = f.run({"/probe", "--test-case=sandbox probe: a foreign-architecture syscall"},
                 {{self, "/probe"}});
  if (!sandbox_ran(r)) return;
  INFO(r->stdout_bytes, r->stderr_bytes);
  CHECK(r->stdout_bytes.find("survived") == std::string::npos);
  CHECK_FALSE(r->exited);
  CHECK(r->term_signal == SIGSYS);
}

TEST_CASE("sandbox confinement: /proc/sys, sysrq and cgroupfs are out of reach; no core dumps") {
  SandboxFixture f;
  auto r = f.sh(
      "echo 3 > /proc/sys/vm/drop_caches && echo drop-caches-written; "
      "echo h > /proc/sysrq-trigger && echo sysrq-written; "
      "echo 1 > /proc/sys/kernel/panic && echo panic-written; "
      "test -e /sys/fs/cgroup && echo cgroupfs-visible; "
      "cat /proc/1/environ > /dev/null && echo own-pid1-readable; "
      "ulimit -H -c unlimited 2>/dev/null && echo core-raised; echo core=$(ulimit -H -c); echo "
      "end");
  if (!sandbox_ran(r)) return;
  INFO(r->stdout_bytes, r->stderr_bytes);
  CHECK(r->stdout_bytes == "own-pid1-readable\ncore=0\nend\n");
}

TEST_CASE(
    "sandbox confinement: a setup step that fails stops the run, names the step, leaks "
    "nothing") {
  SandboxFixture f;
  // procfs cannot be an overlay lower layer, so building the root fails at that mount.
  auto r = f.run({"/bin/true"}, {{"/proc/sys/kernel", "/k"}});
  REQUIRE_FALSE(r.ok());
  INFO(r.status().message());
  CHECK(r.status().code() == aura::ErrorCode::kUnavailable);
  CHECK(r.status().message().find("mount overlay at root/k") != std::string::npos);
  check_nothing_left(f.options.state_dir);
}

TEST_CASE("sandbox confinement: concurrent runs are separate and both destroyed") {
  SandboxFixture f;
  Result<aura::sandbox::RunResult> other = aura::Status::io("not run");
  std::thread t([&] { other = f.sh("echo b > /tmp/x; sleep 0.3; cat /tmp/x"); });
  auto mine = f.sh("echo a > /tmp/x; sleep 0.3; cat /tmp/x");
  t.join();
  if (!sandbox_ran(mine)) return;
  REQUIRE(other.ok());
  CHECK(mine->stdout_bytes == "a\n");
  CHECK(other->stdout_bytes == "b\n");
  CHECK(mine->run_id != other->run_id);
  check_nothing_left(f.options.state_dir);
}

TEST_CASE(
    "sandbox confinement: listeners on the host's loopback and abstract sockets are out of "
    "reach") {
  if (!fs::exists("/usr/bin/python3")) {
    WARN_MESSAGE(false, "no /usr/bin/python3 to connect from inside; case not run");
    return;
  }
  // Two listeners on the host: TCP on 127.0.0.1 and an abstract Unix socket.
  const int tcp = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(tcp >= 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(tcp, reinterpret_cast<sockaddr*>(&in), sizeof in) == 0);
  socklen_t len = sizeof in;
  REQUIRE(::getsockname(tcp, reinterpret_cast<sockaddr*>(&in), &len) == 0);
  REQUIRE(::listen(tcp, 4) == 0);
  const int port = ntohs(in.sin_port);
  const std::string abstract_name = "aura-sandbox-test-" + std::to_string(::getpid());
  const int unix_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(unix_fd >= 0);
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::memcpy(un.sun_path + 1, abstract_name.data(), abstract_name.size());
  const socklen_t un_len =
      static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + abstract_name.size());
  REQUIRE(::bind(unix_fd, reinterpret_cast<sockaddr*>(&un), un_len) == 0);
  REQUIRE(::listen(unix_fd, 4) == 0);

  SandboxFixture f;
  const std::string script =
      "import socket\n"
      "def attempt(family, addr):\n"
      "    s = socket.socket(family, socket.SOCK_STREAM)\n"
      "    s.settimeout(2)\n"
      "    try:\n"
      "        s.connect(addr); return 'connected'\n"
      "    except OSError as e:\n"
      "        return type(e).__name__\n"
      "print('tcp', attempt(socket.AF_INET, ('127.0.0.1', " +
      std::to_string(port) +
      ")))\n"
      "print('abstract', attempt(socket.AF_UNIX, '\\0" +
      abstract_name + "'))\n";
  auto r = f.run({"/usr/bin/python3", "-c", script});
  ::close(tcp);
  ::close(unix_fd);
  if (!sandbox_ran(r)) return;
  INFO(r->stdout_bytes, r->stderr_bytes);
  CHECK(r->stdout_bytes == "tcp ConnectionRefusedError\nabstract ConnectionRefusedError\n");
}

TEST_CASE("sandbox confinement: a profile keeps exactly the capabilities it names") {
  SandboxFixture f;
  f.profile.capabilities = (1ull << 0) | (1ull << 13);  // CAP_CHOWN, CAP_NET_RAW
  auto r = f.sh("grep -E '^Cap(Prm|Eff|Bnd)' /proc/self/status");
  if (!sandbox_ran(r)) return;
  CHECK(r->stdout_bytes ==
        "CapPrm:\t0000000000002001\nCapEff:\t0000000000002001\nCapBnd:\t0000000000002001\n");
}
