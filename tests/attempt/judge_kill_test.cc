// A judge killed mid-gate leaves nothing on the machine: its worlds' holders tear them down once
// the judge is gone (SIGKILL included), and when the holders are killed too, the node keepers
// take the nodes' processes with them and the names left behind are reaped through the machine's
// run folder after the judge's data folder is gone. Black-box through the real binary on O2
// (needs root: namespace worlds, nginx, aura-svcman).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/attempt/package_lab.h"
#include "tests/cli/cli_util.h"

using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

constexpr const char* kO2 = "o2-service-chain";
// Hang guards, sized for a machine half as fast as this one with both cores busy: reaching the
// gate takes about 3 s here, the holders' teardown well under a second.
constexpr auto kReachGate = std::chrono::seconds(300);
constexpr auto kTeardown = std::chrono::seconds(120);

// The file's bytes; "" when it cannot be read (a /proc file of a process that just ended: its
// read fails with ESRCH, which libstdc++'s streams would throw).
std::string slurp(const fs::path& p) {
  const int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  ::close(fd);
  return n < 0 ? std::string() : out;
}

// The machine's run folder (ledgers): $AURA_RUN_DIR, else /run/aura, as the lab's.
fs::path run_dir() {
  const char* env = std::getenv("AURA_RUN_DIR");
  return env != nullptr && *env != '\0' ? fs::path(env) : fs::path("/run/aura");
}

// Every name this lab's ledgers ever recorded (the run folder's ledgers whose state folder
// is inside the lab's folder), remembered across reads: a holder compacts its ledger once its
// names are gone, and a reap removes an emptied ledger. Only this lab's names are looked at, so
// another lab running on the machine at the same time cannot fail the test.
struct Names {
  std::set<std::string> cgroups, netns, dirs;

  void read(const fs::path& lab_root) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run_dir() / "ledger", ec)) {
      std::istringstream in(slurp(e.path()));
      std::string line;
      if (!std::getline(in, line) || !line.starts_with("# state_dir ") ||
          !(fs::path(line.substr(12)).string() + "/").starts_with(lab_root.string() + "/"))
        continue;
      while (std::getline(in, line)) {
        std::istringstream f(line);
        std::string op, owner, run_id, kind, path;
        if (!(f >> op >> owner >> run_id >> kind) || op != "+") continue;
        std::getline(f >> std::ws, path);
        (kind == "cgroup" ? cgroups : kind == "netns" ? netns : dirs).insert(path);
      }
    }
  }
};

// What of the lab is on the machine: its recorded names that still exist, processes in one of its
// cgroups, mounts of its namespaces or inside its folder, and holders of its state folder.
struct Traces {
  std::set<std::string> netns, cgroups, processes, mounts, holders;

  static Traces now(const fs::path& lab_root, Names& names) {
    names.read(lab_root);
    Traces t;
    std::set<std::string> groups;  // "/<leaf>" of each cgroup, as /proc/<pid>/cgroup names it
    for (const std::string& c : names.cgroups) {
      if (fs::exists(c)) t.cgroups.insert(c);
      groups.insert("/aura/" + fs::path(c).filename().string());
    }
    for (const std::string& n : names.netns)
      if (fs::exists(n)) t.netns.insert(n);
    for (const std::string& d : names.dirs)
      if (fs::exists(d)) t.cgroups.insert("folder " + d);
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      const std::string pid = e.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      const std::string stat = slurp(e.path() / "stat");
      const size_t close = stat.rfind(')');
      if (close == std::string::npos || stat.substr(close + 2, 1) == "Z") continue;
      std::istringstream cg(slurp(e.path() / "cgroup"));
      for (std::string line; std::getline(cg, line);) {
        const size_t at = line.find("/aura/");
        if (at != std::string::npos && groups.contains(line.substr(at))) {
          t.processes.insert(pid + " " + slurp(e.path() / "comm"));
          break;
        }
      }
      std::string cmd = slurp(e.path() / "cmdline");
      for (char& c : cmd)
        if (c == '\0') c = ' ';
      if (cmd.starts_with("aura-holder ") && cmd.find(lab_root.string()) != std::string::npos)
        t.holders.insert(pid);
    }
    std::istringstream mi(slurp("/proc/self/mountinfo"));
    for (std::string line; std::getline(mi, line);) {
      bool ours = line.find(lab_root.string()) != std::string::npos;
      for (const std::string& n : names.netns)
        ours = ours || line.find(n + " ") != std::string::npos;
      if (ours) t.mounts.insert(line);
    }
    return t;
  }

  bool empty() const {
    return netns.empty() && cgroups.empty() && processes.empty() && mounts.empty() &&
           holders.empty();
  }
  std::string describe() const {
    std::string out;
    auto list = [&](const char* what, const std::set<std::string>& s) {
      for (const auto& x : s) out += std::string(what) + ": " + x + "\n";
    };
    list("netns", netns);
    list("cgroup", cgroups);
    list("process", processes);
    list("mount", mounts);
    list("holder", holders);
    return out;
  }
};

// Reaps every exited child (this process is the subreaper of the judge's orphans); true when no
// child is left at all.
bool reap_children() {
  for (;;) {
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0) continue;
    return pid < 0 && errno == ECHILD;
  }
}

// Starts `aura judge O2` in `s`'s lab and returns once its gate runs on fresh worlds: the log
// holds gate.started and at least two of its holders live (the live world's and a gate world's).
std::unique_ptr<CliProcess> judge_in_its_gate(const PackageLab& s, Names& names) {
  auto judge = std::make_unique<CliProcess>(
      std::vector<std::string>{"judge", kO2, "--seed", "0", "--data", s.lab.data().string(),
                               "--keys", s.lab.keys().string()});
  const auto deadline = std::chrono::steady_clock::now() + kReachGate;
  while (std::chrono::steady_clock::now() < deadline) {
    const Traces t = Traces::now(s.lab.root(), names);
    if (t.holders.size() >= 2 &&
        s.lab.aura({"log", "tail", "--from", "1"}).out.find("\"gate.started\"") !=
            std::string::npos)
      return judge;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL("the judge did not reach its gate within the hang guard");
  return judge;
}

// Waits (bounded by kTeardown) until nothing of the lab is left and every child is reaped; the
// traces still there.
Traces wait_for_nothing_left(const PackageLab& s, Names& names) {
  const auto deadline = std::chrono::steady_clock::now() + kTeardown;
  Traces left;
  for (;;) {
    const bool no_children = reap_children();
    left = Traces::now(s.lab.root(), names);
    if ((left.empty() && no_children) || std::chrono::steady_clock::now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return left;
}

struct Subreaper {
  // The judge's orphans (holders, node keepers) come to this process, which reaps them: on a
  // machine whose PID 1 does not reap, they would otherwise stay as zombies.
  Subreaper() { REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0); }
  ~Subreaper() {
    reap_children();
    ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  }
};

}  // namespace

TEST_CASE("judge killed mid-gate: its holders tear every world down; nothing of it is left") {
  Subreaper subreaper;
  PackageLab s("AURA_O2_PACKAGE", kO2, "untraversable-folder", "{}");
  Names names;
  auto judge = judge_in_its_gate(s, names);
  const Traces during = Traces::now(s.lab.root(), names);
  // The gate's worlds are really there: nodes' processes, network namespaces and cgroups.
  CHECK(!during.processes.empty());
  CHECK(!during.netns.empty());
  CHECK(!during.cgroups.empty());
  judge->kill_now();

  const Traces left = wait_for_nothing_left(s, names);
  CHECK_MESSAGE(left.empty(), left.describe());
  CHECK(reap_children());
}

TEST_CASE(
    "judge and its holders killed: the nodes die with them; the names are reaped later "
    "without the data folder") {
  Subreaper subreaper;
  PackageLab s("AURA_O2_PACKAGE", kO2, "untraversable-folder", "{}");
  Names names;
  auto judge = judge_in_its_gate(s, names);
  const Traces during = Traces::now(s.lab.root(), names);
  REQUIRE(!during.holders.empty());
  judge->kill_now();
  for (const std::string& pid : during.holders) ::kill(std::stoi(pid), SIGKILL);

  // No holder runs to remove the names, but the keepers end every node's processes.
  const auto deadline = std::chrono::steady_clock::now() + kTeardown;
  Traces left;
  do {
    reap_children();
    left = Traces::now(s.lab.root(), names);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  } while ((!left.processes.empty() || !left.holders.empty()) &&
           std::chrono::steady_clock::now() < deadline);
  CHECK_MESSAGE(left.processes.empty(), left.describe());
  CHECK(left.holders.empty());
  // Some names are left, recorded in the machine's run folder, not only in the data folder.
  CHECK((!left.netns.empty() || !left.cgroups.empty()));

  // The data folder goes (as a test's temporary folder would); a supervisor of another lab
  // reaps what is left, found through the run folder.
  fs::remove_all(s.lab.data());
  // (Any lab's supervisor on the machine reaps them: another lab running at the same time may
  // be first, so the count this one reports is not asserted, only that nothing is left.)
  Lab other;
  CliResult r = other.ok({"worker", "--json"});
  CHECK(r.last_line().find("\"orphan_runs\":") != std::string::npos);
  left = wait_for_nothing_left(s, names);
  CHECK_MESSAGE(left.empty(), left.describe());
}
