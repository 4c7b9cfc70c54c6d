// Hostile commands inside the sandbox: a fork bomb, a memory hog, a command past its deadline,
// and every denied syscall. Each is contained, and the supervisor's facts say what happened.
#include <doctest/doctest.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/if_ether.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "tests/workers/sandbox_support.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/sandbox/seccomp_policy.h"

namespace fs = std::filesystem;
using aura::Result;
using aura::testing::sandbox_ran;
using aura::testing::SandboxFixture;

namespace {

// Every cgroup folder and stage folder the runs under `state_dir` recorded is gone and marked
// released.
void check_nothing_left(const fs::path& state_dir) {
  aura::sandbox::LeakLedger ledger(state_dir);
  auto entries = ledger.entries();
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
  // A hang guard, not a speed bar: the kill at the 2 s deadline ends the run within a second
  // here; 60 s allows a machine half as fast and busy.
  CHECK(r->wall_ns < 60'000'000'000ull);
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
  CHECK(r->wall_ns < 60'000'000'000ull);  // a hang guard (the run ends just past 500 ms here)
  check_nothing_left(f.options.state_dir);
}

// Runs inside the sandbox (this binary, shown at /probe): tries each denied call and more, and
// prints one "name=result" line each. Does nothing outside a sandbox run.
TEST_CASE("sandbox probe: syscalls from inside" *
          doctest::skip(std::getenv("AURA_SANDBOX_PROBE") == nullptr)) {
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

#if defined(__x86_64__)
namespace {

constexpr long kI386ExitGroup = 252;  // ioprio_get (allowed) on x86_64
constexpr long kI386Getpid = 20;      // writev (allowed) on x86_64
constexpr long kI386Getresuid = 165;  // mount (refused with EPERM) on x86_64
constexpr int kRanExitCode = 77;      // the first argument: exit_group(77) exits 77 if it runs

// One i386 system call from 64-bit code. Only eax comes back; kernels before 4.17 zeroed r8-r11
// on this path, so they are clobbers too.
long int80_syscall(long nr, long arg1) {
  asm volatile("int $0x80" : "+a"(nr) : "b"(arg1) : "memory", "r8", "r9", "r10", "r11");
  return nr;
}

// Whether int 0x80 reaches a system call here at all: i386 exit_group(77) in an unfiltered
// child. Where the machine has no i386 gate (ia32_emulation=0, or a hypervisor such as PVM whose
// host IDT does not let int 0x80 through) the CPU raises #GP on the instruction and the child
// dies of SIGSEGV with no system call entered, filter or not.
bool i386_syscalls_run_here(int* wait_status) {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const struct rlimit no_core = {0, 0};
    ::setrlimit(RLIMIT_CORE, &no_core);
    ::signal(SIGSEGV, SIG_DFL);  // not doctest's crash report
    int80_syscall(kI386ExitGroup, kRanExitCode);
    ::_exit(0);
  }
  REQUIRE(::waitpid(pid, wait_status, 0) == pid);
  return WIFEXITED(*wait_status) && WEXITSTATUS(*wait_status) == kRanExitCode;
}

// Runs a seccomp program on one call as the kernel does, for the instructions libseccomp emits.
uint32_t run_seccomp_program(const std::vector<sock_filter>& program, const seccomp_data& call) {
  uint32_t a = 0;
  for (size_t pc = 0; pc < program.size(); ++pc) {
    const sock_filter& i = program[pc];
    switch (i.code) {
      case BPF_LD | BPF_W | BPF_ABS:
        if (i.k + sizeof a > sizeof call) FAIL("a load past seccomp_data at ", pc);
        std::memcpy(&a, reinterpret_cast<const char*>(&call) + i.k, sizeof a);
        break;
      case BPF_ALU | BPF_AND | BPF_K:
        a &= i.k;
        break;
      case BPF_JMP | BPF_JA:
        pc += i.k;
        break;
      case BPF_JMP | BPF_JEQ | BPF_K:
        pc += a == i.k ? i.jt : i.jf;
        break;
      case BPF_JMP | BPF_JGT | BPF_K:
        pc += a > i.k ? i.jt : i.jf;
        break;
      case BPF_JMP | BPF_JGE | BPF_K:
        pc += a >= i.k ? i.jt : i.jf;
        break;
      case BPF_JMP | BPF_JSET | BPF_K:
        pc += (a & i.k) != 0 ? i.jt : i.jf;
        break;
      case BPF_RET | BPF_K:
        return i.k;
      default:
        FAIL("instruction code ", i.code, " at ", pc, " is not interpreted here");
    }
  }
  FAIL("the program ran off its end");
  return 0;
}

void on_sigsys(int) {
  constexpr char kCaught[] = "caught SIGSYS\n";
  (void)!::write(1, kCaught, sizeof kCaught - 1);
  ::_exit(70);
}

}  // namespace
#endif

// Inside the sandbox: the i386 call AURA_PROBE_I386_NR through int 0x80, after a line showing
// the probe got that far. A SIGSYS handler shows whether the filter's answer could be caught.
TEST_CASE("sandbox probe: a foreign-architecture syscall" *
          doctest::skip(std::getenv("AURA_SANDBOX_PROBE") == nullptr ||
                        std::getenv("AURA_PROBE_I386_NR") == nullptr)) {
  const char* nr = std::getenv("AURA_PROBE_I386_NR");
#if defined(__x86_64__)
  ::signal(SIGSYS, on_sigsys);
  std::cout << "reached int 0x80\n" << std::flush;
  const long rc = int80_syscall(std::atol(nr), kRanExitCode);
  std::cout << "survived rc=" << rc << "\n";
#endif
}

// The guarantee: an i386 call never runs, and where the machine can make one at all the filter
// kills the process for it (SECCOMP_RET_KILL_PROCESS: an uncatchable SIGSYS, whatever the
// number means natively). Where int 0x80 raises #GP instead, the call cannot run either, and the
// process dies of SIGSEGV as it would with no filter; the program case below covers the filter.
TEST_CASE("sandbox confinement: a syscall from another architecture kills the process") {
#if defined(__x86_64__)
  int unfiltered_status = 0;
  const bool i386_runs = i386_syscalls_run_here(&unfiltered_status);
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  for (const long nr : {kI386ExitGroup, kI386Getpid, kI386Getresuid}) {
    SandboxFixture f;
    f.options.env = {"AURA_SANDBOX_PROBE=1", "AURA_PROBE_I386_NR=" + std::to_string(nr)};
    auto r = f.run({"/probe", "--test-case=sandbox probe: a foreign-architecture syscall"},
                   {{self, "/probe"}});
    if (!sandbox_ran(r)) return;
    INFO("i386 nr ", nr, "; unfiltered wait status ", unfiltered_status);
    INFO(r->stdout_bytes, r->stderr_bytes);
    CHECK(r->stdout_bytes.find("reached int 0x80\n") != std::string::npos);
    CHECK(r->stdout_bytes.find("survived") == std::string::npos);
    CHECK_FALSE(r->exited);  // exit code 77: the call ran; 70: its SIGSYS was caught
    CHECK(r->term_signal == (i386_runs ? SIGSYS : SIGSEGV));
  }
  if (!i386_runs)
    WARN_MESSAGE(false,
                 "int 0x80 raises #GP on this machine (no i386 system call gate): the "
                 "filter's architecture check is not reached; the program case checks it");
#endif
}

// The architecture check of the exported program itself, on every machine (the case above
// reaches it only where int 0x80 is a system call).
TEST_CASE("seccomp policy: i386 and x32 calls get KILL_PROCESS whatever their number") {
#if defined(__x86_64__)
  auto program = aura::sandbox::build_seccomp_program();
  REQUIRE(program.ok());
  const auto verdict = [&](uint32_t arch, int nr) {
    seccomp_data call{};
    call.arch = arch;
    call.nr = nr;
    return run_seccomp_program(program->instructions, call);
  };
  // The interpreter agrees with the kernel on native calls.
  CHECK(verdict(AUDIT_ARCH_X86_64, SYS_getpid) == SECCOMP_RET_ALLOW);
  CHECK(verdict(AUDIT_ARCH_X86_64, SYS_mount) == (SECCOMP_RET_ERRNO | EPERM));
  CHECK(verdict(AUDIT_ARCH_X86_64, SYS_clone3) == (SECCOMP_RET_ERRNO | ENOSYS));
  for (const long nr : {kI386ExitGroup, kI386Getpid, kI386Getresuid, 0L, 1L, 400L}) {
    INFO("i386 nr ", nr);
    CHECK(verdict(AUDIT_ARCH_I386, static_cast<int>(nr)) == SECCOMP_RET_KILL_PROCESS);
  }
  for (const int nr : {SYS_getpid, SYS_write, SYS_mount}) {
    INFO("x32 nr ", nr);
    CHECK(verdict(AUDIT_ARCH_X86_64, nr | __X32_SYSCALL_BIT) == SECCOMP_RET_KILL_PROCESS);
  }
#endif
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
  f.profile.linux_caps = (1ull << 0) | (1ull << 13);  // CAP_CHOWN, CAP_NET_RAW
  auto r = f.sh("grep -E '^Cap(Prm|Eff|Bnd)' /proc/self/status");
  if (!sandbox_ran(r)) return;
  CHECK(r->stdout_bytes ==
        "CapPrm:\t0000000000002001\nCapEff:\t0000000000002001\nCapBnd:\t0000000000002001\n");
}
