// Black-box tests of the runner sandbox: what a command inside can see and do. Each case runs
// real commands from the host's /usr in the sandbox and checks what came back, measured by the
// supervisor.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/msg.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "tests/support/wait_until.h"
#include "tests/workers/sandbox_support.h"
#include "workers/sandbox/leak_ledger.h"

namespace fs = std::filesystem;
using aura::sandbox::RunResult;
using aura::testing::sandbox_ran;
using aura::testing::SandboxFixture;

namespace {

// The host-side uid of the first process found in a live run's cgroup, or -1 once `run_done`
// is set (or the hang guard passes) with none found.
long outside_uid_of_run(const fs::path& state_dir, const std::atomic<bool>& run_done) {
  aura::sandbox::LeakLedger ledger(state_dir);
  long found = -1;
  aura::testing::wait_until([&] {
    auto entries = ledger.entries();
    if (entries.ok()) {
      for (const auto& e : *entries) {
        if (e.kind != aura::sandbox::ResourceKind::kCgroup || e.released) continue;
        std::istringstream procs(aura::testing::read_text_file(e.path / "cgroup.procs"));
        long pid;
        if (!(procs >> pid)) continue;
        std::istringstream status(
            aura::testing::read_text_file("/proc/" + std::to_string(pid) + "/status"));
        std::string line;
        while (std::getline(status, line)) {
          if (line.rfind("Uid:", 0) == 0) {
            long real = -1;
            std::istringstream(line.substr(4)) >> real;
            // Before setresuid the child is still host root (unmapped); wait for the command.
            if (real != 0 && found == -1) found = real;
          }
        }
      }
    }
    return found != -1 || run_done.load();
  });
  return found;
}

}  // namespace

TEST_CASE("sandbox run: stdout, stderr and the exit code come back") {
  SandboxFixture f;
  auto r = f.sh("echo hello; echo oops >&2; exit 3");
  if (!sandbox_ran(r)) return;
  CHECK(r->exited);
  CHECK(r->exit_code == 3);
  CHECK(r->stdout_bytes == "hello\n");
  CHECK(r->stderr_bytes == "oops\n");
  CHECK_FALSE(r->stdout_truncated);
  CHECK_FALSE(r->killed_by_deadline);
  CHECK(r->wall_ns > 0);
  CHECK(r->profile_digest == aura::sandbox::profile_digest(f.profile));
}

TEST_CASE("sandbox run: output past the cap is cut and flagged") {
  SandboxFixture f;
  f.profile.output_cap_bytes = 1000;
  auto r = f.sh("head -c 50000 /dev/zero | tr '\\0' a");
  if (!sandbox_ran(r)) return;
  CHECK(r->stdout_bytes.size() == 1000);
  CHECK(r->stdout_truncated);
  CHECK(r->exit_code == 0);
}

TEST_CASE("sandbox run: root inside is the mapped unprivileged uid outside") {
  SandboxFixture f;
  std::atomic<long> outside{-2};
  std::atomic<bool> run_done{false};
  std::thread watcher([&] { outside = outside_uid_of_run(f.options.state_dir, run_done); });
  auto r = f.sh("id -u; id -g; cat /proc/self/uid_map; sleep 1");
  run_done = true;
  watcher.join();
  if (!sandbox_ran(r)) return;
  CHECK(r->stdout_bytes.rfind("0\n0\n", 0) == 0);
  CHECK(r->stdout_bytes.find("100000") != std::string::npos);
  CHECK(outside.load() == static_cast<long>(f.profile.uid_base));
}

TEST_CASE("sandbox run: the host's /root, the repo and the state folder are not visible") {
  SandboxFixture f;
  const fs::path marker = "/root/aura-sandbox-marker-" + std::to_string(::getpid());
  std::ofstream(marker) << "secret";
  const std::string repo = fs::current_path().string();
  auto r = f.sh("test -e " + marker.string() + " && echo root-visible; test -e " + repo +
                " && echo repo-visible; test -e " + f.options.state_dir.string() +
                " && echo state-visible; ls /; echo pid=$$");
  fs::remove(marker);
  if (!sandbox_ran(r)) return;
  CHECK(r->stdout_bytes.find("visible") == std::string::npos);
  // PID namespace: the shell is PID 1.
  CHECK(r->stdout_bytes.find("pid=1\n") != std::string::npos);
  // Only the planned entries make the root.
  CHECK(r->stdout_bytes.find("home") == std::string::npos);
  CHECK(r->stdout_bytes.find("work") == std::string::npos);
  CHECK(r->stdout_bytes.find("usr") != std::string::npos);
}

TEST_CASE("sandbox run: writes land on tmpfs and vanish with the run") {
  SandboxFixture f;
  const std::string probe = "/usr/aura-sandbox-write-" + std::to_string(::getpid());
  auto first = f.sh("echo x > " + probe + " && cat " + probe +
                    "; echo y > /tmp/t && cat /tmp/t; "
                    "stat -f -c %T /; stat -f -c %T /tmp");
  if (!sandbox_ran(first)) return;
  CHECK(first->stdout_bytes == "x\ny\ntmpfs\ntmpfs\n");
  CHECK_FALSE(fs::exists(probe));  // the host's /usr is the read-only lower layer
  auto second = f.sh("test -e " + probe + " || echo gone; test -e /tmp/t || echo gone");
  REQUIRE(second.ok());
  CHECK(second->stdout_bytes == "gone\ngone\n");
}

TEST_CASE("sandbox run: the network namespace has only lo, up, and no route") {
  SandboxFixture f;
  auto r = f.sh(
      "echo routes:; tail -n +2 /proc/net/route; echo links:; ip -o link show | cut -d: -f2; "
      "echo up:; cat /sys/class/net/lo/operstate 2>/dev/null; ip -o link show lo | grep -c UP; "
      "echo v4:; ip -4 route show; echo end");
  if (!sandbox_ran(r)) return;
  INFO(r->stdout_bytes, r->stderr_bytes);
  CHECK(r->stdout_bytes.find("routes:\nlinks:\n lo\nup:\n1\nv4:\nend\n") == 0);
}

TEST_CASE("sandbox run: a busy loop's CPU time comes from the cgroup, within the quota") {
  SandboxFixture f;
  f.profile.cpu_quota_us = 50'000;  // half a CPU
  f.profile.wall_deadline_ms = 1500;
  // The loop runs in a grandchild that is never waited for, so no wait status counts it;
  // only the cgroup does. The deadline kills everything.
  auto r = f.sh("(while :; do :; done) & sleep 100");
  if (!sandbox_ran(r)) return;
  CHECK(r->killed_by_deadline);
  // About 0.75 s at half a CPU over 1.5 s on an idle machine; well above what any wait status
  // shows (the loop is never waited for) even when other work shares the CPUs.
  CHECK(r->cpu_ns > 150'000'000ull);
  CHECK(r->cpu_ns < 1'100'000'000ull);
  CHECK(r->peak_memory_known);
  CHECK(r->peak_memory_bytes > 0);
}

TEST_CASE("sandbox run: hostname, cgroup view, IPC and /dev are the run's own") {
  SandboxFixture f;
  // A System V queue on the host must not be seen from the run's IPC namespace.
  const int queue = ::msgget(IPC_PRIVATE, IPC_CREAT | 0666);
  REQUIRE(queue >= 0);
  auto r = f.sh(
      "hostname; cat /proc/self/cgroup | cut -d: -f3 | sort -u; echo queues=$(ipcs -q | grep -c "
      "0x); ls /dev");
  ::msgctl(queue, IPC_RMID, nullptr);
  if (!sandbox_ran(r)) return;
  INFO(r->stdout_bytes, r->stderr_bytes);
  // UTS: the profile's hostname. cgroup namespace: the run's own group is its root.
  CHECK(r->stdout_bytes.rfind("aura-sandbox\n/\nqueues=0\n", 0) == 0);
  CHECK(r->stdout_bytes.find("sda") == std::string::npos);
  CHECK(r->stdout_bytes.find("vda") == std::string::npos);
  CHECK(r->stdout_bytes.find("null") != std::string::npos);
}

TEST_CASE("sandbox run: a missing command is not found, and bad requests are refused") {
  SandboxFixture f;
  auto missing = f.run({"/usr/bin/no-such-command"});
  if (!missing.ok() && missing.status().code() == aura::ErrorCode::kUnavailable) {
    CHECK(sandbox_ran(missing) == false);
    return;
  }
  CHECK(missing.status().code() == aura::ErrorCode::kNotFound);
  CHECK(f.run({"sh", "-c", "true"}).status().code() == aura::ErrorCode::kInvalidArgument);
  f.profile.lower_paths = {"/"};
  auto root = f.run({"/bin/true"});
  CHECK(root.status().code() == aura::ErrorCode::kInvalidArgument);
  CHECK(root.status().message().find("host root") != std::string::npos);
  f.profile.lower_paths = {"/usr"};
  f.options.forbidden_paths = {"/usr/share"};
  CHECK(f.run({"/bin/true"}).status().code() == aura::ErrorCode::kInvalidArgument);
  f.options.forbidden_paths = {};
  CHECK(f.run({"/bin/true"}, {{f.options.state_dir.parent_path().string(), "/data"}})
            .status()
            .code() == aura::ErrorCode::kInvalidArgument);
  f.profile.uid_base = 0;
  CHECK(f.run({"/bin/true"}).status().code() == aura::ErrorCode::kInvalidArgument);
  f.profile.uid_base = 100'000;
  f.profile.name = "probe\nlower=/etc";
  CHECK(f.run({"/bin/true"}).status().code() == aura::ErrorCode::kInvalidArgument);
}

TEST_CASE("sandbox run: package files are shown read-only at their inside path") {
  SandboxFixture f;
  const fs::path pkg = f.dir.path() / "pkg";
  fs::create_directories(pkg / "bin");
  // The run reads package files as its unprivileged uid: a 0700 folder above them is refused
  // before anything starts, with the folder named.
  fs::permissions(f.dir.path(), fs::perms(0700));
  auto hidden = f.run({"/bin/true"}, {{pkg.string(), "/opt/pkg"}});
  CHECK(hidden.status().code() == aura::ErrorCode::kInvalidArgument);
  CHECK(hidden.status().message().find("not searchable by others") != std::string::npos);
  fs::permissions(f.dir.path(), fs::perms(0755));
  std::ofstream(pkg / "bin" / "hello.sh") << "echo from-package\n";
  std::ofstream(f.dir.path() / "single") << "one file\n";
  auto r = f.run({"/bin/sh", "-c",
                  "sh /opt/pkg/bin/hello.sh; cat /etc/single; echo z > /etc/single || echo ro"},
                 {{pkg.string(), "/opt/pkg"}, {(f.dir.path() / "single").string(), "/etc/single"}});
  if (!sandbox_ran(r)) return;
  CHECK(r->stdout_bytes == "from-package\none file\nro\n");
  CHECK(aura::testing::read_text_file(f.dir.path() / "single") == "one file\n");
}

TEST_CASE("sandbox run: only stdio and the passed descriptor (as fd 3) reach the command") {
  SandboxFixture f;
  int channel[2];
  REQUIRE(::pipe2(channel, O_CLOEXEC) == 0);
  f.options.pass_fd = channel[1];
  auto r = f.sh("echo via-fd3 >&3; ls /proc/self/fd");
  ::close(channel[1]);
  char buf[64] = {};
  const ssize_t n = ::read(channel[0], buf, sizeof buf - 1);
  ::close(channel[0]);
  if (!sandbox_ran(r)) return;
  CHECK(std::string(buf, n > 0 ? static_cast<size_t>(n) : 0) == "via-fd3\n");
  // ls lists 0-3 and the folder it reads (4); nothing else was inherited.
  CHECK(r->stdout_bytes == "0\n1\n2\n3\n4\n");
  f.options.pass_fd = 1;
  CHECK(f.run({"/bin/true"}).status().code() == aura::ErrorCode::kInvalidArgument);
}

TEST_CASE("sandbox profile: named profiles, and the digest covers every field") {
  auto probe = aura::sandbox::named_profile("probe");
  auto script = aura::sandbox::named_profile("script");
  REQUIRE(probe.ok());
  REQUIRE(script.ok());
  CHECK(probe->linux_caps == 0);
  CHECK(script->wall_deadline_ms > probe->wall_deadline_ms);
  CHECK(aura::sandbox::named_profile("root").status().code() == aura::ErrorCode::kNotFound);
  const aura::Digest base = aura::sandbox::profile_digest(*probe);
  CHECK(aura::sandbox::profile_digest(*probe) == base);
  CHECK(aura::sandbox::profile_digest(*script) != base);
  // Any one field changed changes the digest.
  std::vector<std::function<void(aura::sandbox::Profile&)>> changes = {
      [](auto& p) { p.name = "x"; },
      [](auto& p) { p.cpu_quota_us += 1; },
      [](auto& p) { p.cpu_period_us += 1; },
      [](auto& p) { p.memory_bytes += 1; },
      [](auto& p) { p.pids_max += 1; },
      [](auto& p) { p.wall_deadline_ms += 1; },
      [](auto& p) { p.output_cap_bytes += 1; },
      [](auto& p) { p.tmpfs_bytes += 1; },
      [](auto& p) { p.linux_caps = 1; },
      [](auto& p) { p.uid_base += 1; },
      [](auto& p) { p.id_count -= 1; },
      [](auto& p) { p.hostname = "other"; },
      [](auto& p) { p.lower_paths.pop_back(); },
  };
  for (size_t i = 0; i < changes.size(); ++i) {
    aura::sandbox::Profile p = *probe;
    changes[i](p);
    INFO("change ", i);
    CHECK(aura::sandbox::profile_digest(p) != base);
  }
}
