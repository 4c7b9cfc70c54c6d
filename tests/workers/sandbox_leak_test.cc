// Leak accounting: every name a run makes is in the ledger and gone after the run, over 100
// create/destroy cycles; a supervisor killed mid-run leaves a run that reap() then removes.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "tests/support/spawn_self.h"
#include "tests/support/wait_until.h"
#include "tests/workers/sandbox_support.h"
#include "workers/sandbox/leak_ledger.h"

namespace fs = std::filesystem;
using aura::sandbox::LeakLedger;
using aura::sandbox::ResourceKind;
using aura::testing::sandbox_ran;
using aura::testing::SandboxFixture;

namespace {

bool mounted_anywhere_under(const fs::path& dir) {
  return aura::testing::read_text_file("/proc/self/mountinfo").find(dir.string()) !=
         std::string::npos;
}

}  // namespace

TEST_CASE("sandbox leaks: 100 create/destroy cycles leave no recorded name behind") {
  SandboxFixture f;
  std::set<std::string> run_ids;
  for (int i = 0; i < 100; ++i) {
    auto r = f.run({"/bin/true"});
    if (!sandbox_ran(r)) return;
    REQUIRE(r->exit_code == 0);
    run_ids.insert(r->run_id);
  }
  CHECK(run_ids.size() == 100);
  LeakLedger ledger(f.options.state_dir);
  auto entries = ledger.entries();
  REQUIRE(entries.ok());
  std::set<std::string> recorded_runs;
  size_t cgroups = 0, dirs = 0;
  for (const auto& e : *entries) {
    INFO(e.path.string());
    recorded_runs.insert(e.run_id);
    CHECK(e.released);
    CHECK_FALSE(fs::exists(e.path));
    (e.kind == ResourceKind::kCgroup ? cgroups : dirs)++;
  }
  CHECK(recorded_runs == run_ids);
  CHECK(dirs == 100);
  CHECK(cgroups >= 100);  // one per hierarchy: 5 on this machine's v1, 1 on v2
  CHECK(cgroups % 100 == 0);
  CHECK(fs::is_empty(f.options.state_dir / "runs"));
  CHECK_FALSE(mounted_anywhere_under(f.options.state_dir));
}

// Child half of the reap test: a supervisor that starts a long run and is then SIGKILLed.
TEST_CASE("sandbox leaks: supervisor that dies mid-run" *
          doctest::skip(std::getenv("AURA_SANDBOX_DYING_STATE") == nullptr)) {
  const char* state = std::getenv("AURA_SANDBOX_DYING_STATE");
  aura::sandbox::Profile profile;
  profile.wall_deadline_ms = 60'000;
  [[maybe_unused]] auto r = aura::sandbox::run(profile, {"/bin/sleep", "100"}, {}, {state});
  std::_Exit(r.ok() ? 0 : 3);
}

TEST_CASE("sandbox leaks: reap() removes what a killed supervisor left") {
  SandboxFixture f;
  {
    auto probe = f.run({"/bin/true"});
    if (!sandbox_ran(probe)) return;
  }
  const pid_t supervisor =
      aura::testing::spawn_self_case("sandbox leaks: supervisor that dies mid-run",
                                     {"AURA_SANDBOX_DYING_STATE=" + f.options.state_dir.string()});
  REQUIRE(supervisor > 0);
  // Wait until its run's sleep is in its cgroup.
  LeakLedger ledger(f.options.state_dir);
  std::vector<fs::path> live;
  pid_t sleeper = -1;
  aura::testing::wait_until([&] {
    auto entries = ledger.entries();
    REQUIRE(entries.ok());
    live.clear();
    for (const auto& e : *entries)
      if (!e.released) live.push_back(e.path);
    for (const fs::path& p : live) {
      std::istringstream procs(aura::testing::read_text_file(p / "cgroup.procs"));
      long pid;
      if (procs >> pid &&
          aura::testing::read_text_file("/proc/" + std::to_string(pid) + "/comm") == "sleep\n")
        sleeper = static_cast<pid_t>(pid);
    }
    return sleeper > 0;
  });
  REQUIRE(sleeper > 0);
  REQUIRE(::kill(supervisor, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(supervisor, &status, 0) == supervisor);
  CHECK(WIFSIGNALED(status));
  // The run outlived its supervisor: that is the leak reap() exists for.
  CHECK(::kill(sleeper, 0) == 0);
  for (const fs::path& p : live) CHECK(fs::exists(p));

  auto report = aura::sandbox::reap(f.options.state_dir);
  REQUIRE(report.ok());
  const std::string first_failure = report->failures.empty() ? "" : report->failures[0];
  INFO(first_failure);
  CHECK(report->failures.empty());
  CHECK(report->runs_reaped == 1);
  CHECK(report->paths_removed == static_cast<int>(live.size()));
  for (const fs::path& p : live) CHECK_FALSE(fs::exists(p));
  aura::testing::wait_until([&] { return ::kill(sleeper, 0) != 0; });
  CHECK(aura::testing::read_text_file("/proc/" + std::to_string(sleeper) + "/comm") != "sleep\n");
  auto after = ledger.entries();
  REQUIRE(after.ok());
  CHECK(after->empty());  // compacted
  // A second reap finds nothing.
  auto again = aura::sandbox::reap(f.options.state_dir);
  REQUIRE(again.ok());
  CHECK(again->runs_reaped == 0);
}

TEST_CASE("sandbox leaks: reap() leaves a live owner's runs alone") {
  aura::testing::TempDir dir;
  const fs::path state = dir.path() / "state";
  const fs::path live_dir = state / "runs" / "live";
  fs::create_directories(live_dir);
  LeakLedger ledger(state);
  REQUIRE(ledger.record("live", ResourceKind::kDir, live_dir).is_ok());
  auto report = aura::sandbox::reap(state);
  REQUIRE(report.ok());
  CHECK(report->runs_reaped == 0);
  CHECK(fs::exists(live_dir));
  auto entries = ledger.entries();
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);
  CHECK_FALSE((*entries)[0].released);
  CHECK(LeakLedger::owner_alive((*entries)[0].owner));
  CHECK_FALSE(LeakLedger::owner_alive("999999999.1"));
  CHECK_FALSE(LeakLedger::owner_alive(std::to_string(::getpid()) + ".1"));  // pid reused
  CHECK_FALSE(LeakLedger::owner_alive("garbage"));
  REQUIRE(ledger.release("live", ResourceKind::kDir, live_dir).is_ok());
}

// A run SIGKILLed together with everything it started (a test harness's limit, a session's end)
// leaves its temporary data folder behind, and no one will reopen that lab: any supervisor's
// reap_orphans() removes its dead owner's names anyway, and leaves a live owner's alone.
TEST_CASE("sandbox leaks: reap_orphans() removes a dead owner's names though its folder remains") {
  aura::testing::TempDir dir;
  const fs::path state = dir.path() / "state";
  const fs::path dead_dir = state / "runs" / "dead";
  const fs::path live_dir = state / "runs" / "live";
  fs::create_directories(dead_dir);
  fs::create_directories(live_dir);
  LeakLedger dead(state, "999999999.1");
  REQUIRE(dead.record("dead", ResourceKind::kDir, dead_dir).is_ok());
  LeakLedger live(state);
  REQUIRE(live.record("live", ResourceKind::kDir, live_dir).is_ok());

  auto report = aura::sandbox::reap_orphans();
  REQUIRE(report.ok());
  CHECK(report->failures.empty());
  CHECK(report->runs_reaped >= 1);
  CHECK_FALSE(fs::exists(dead_dir));
  CHECK(fs::exists(live_dir));
  CHECK(fs::exists(state));  // the lab's folder is not the reaper's to remove
  auto entries = live.entries();
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);  // the dead owner's entry compacted away
  CHECK((*entries)[0].run_id == "live");
  CHECK(fs::exists(live.file()));  // the ledger of a folder that exists stays

  // With no dead owner's name in it, another lab's ledger is left byte for byte (its own
  // history, released entries included, is its lab's to compact).
  REQUIRE(live.release("live", ResourceKind::kDir, live_dir).is_ok());
  const std::string history = aura::testing::read_text_file(live.file());
  report = aura::sandbox::reap_orphans();
  REQUIRE(report.ok());
  CHECK(aura::testing::read_text_file(live.file()) == history);
  CHECK(history.find("- live dir ") != std::string::npos);

  // Names this very process owns in a lab whose folder is gone: the reaper does not end itself
  // (nor any live owner but a world holder of that folder).
  const fs::path gone = dir.path() / "gone";
  const fs::path mine = dir.path() / "mine";
  fs::create_directories(mine);
  LeakLedger own(gone);
  REQUIRE(own.record("mine", ResourceKind::kDir, mine).is_ok());
  CHECK(fs::is_directory(gone));  // recording a name makes its state folder first
  REQUIRE(fs::remove(gone));      // then the folder is removed, as an operator's rm -r does
  report = aura::sandbox::reap_orphans();
  REQUIRE(report.ok());
  CHECK(fs::exists(mine));
  REQUIRE(own.release("mine", ResourceKind::kDir, mine).is_ok());
  report = aura::sandbox::reap_orphans();  // now empty: the ledger of the gone folder goes
  REQUIRE(report.ok());
  CHECK_FALSE(fs::exists(own.file()));
}

// A reap takes only what is provably dead (docs/WORLDS.md, "What a reap may take"): an owner
// whose pid no process has, one whose pid another process now has (another start time), or a
// zombie. A token that names no process is not known to be dead: its names are left, and no
// such token is ever recorded. A name is never recorded for a folder that cannot be made.
TEST_CASE("sandbox leaks: a reap takes only a provably dead owner's names") {
  using aura::sandbox::OwnerState;
  CHECK(LeakLedger::owner_state(LeakLedger::self_owner()) == OwnerState::kAlive);
  CHECK(LeakLedger::owner_state("999999999.1") == OwnerState::kDead);
  CHECK(LeakLedger::owner_state(std::to_string(::getpid()) + ".1") == OwnerState::kDead);
  for (const char* token : {"garbage", "123.", ".5", "12x.5", "12.5x", ""})
    CHECK_MESSAGE(LeakLedger::owner_state(token) == OwnerState::kUnknown, token);

  // A zombie holds nothing any more: dead, whoever is late to reap it.
  int gate[2];
  REQUIRE(::pipe(gate) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(gate[1]);  // the read below ends when the parent closes the last write end
    char c;
    [[maybe_unused]] ssize_t n = ::read(gate[0], &c, 1);
    ::_exit(0);
  }
  ::close(gate[0]);
  const std::string zombie = aura::sandbox::owner_of(child);
  CHECK(LeakLedger::owner_state(zombie) == OwnerState::kAlive);
  ::close(gate[1]);
  CHECK(aura::testing::wait_until(
      [&] { return LeakLedger::owner_state(zombie) == OwnerState::kDead; }));
  REQUIRE(::waitpid(child, nullptr, 0) == child);

  aura::testing::TempDir dir;
  const fs::path state = dir.path() / "state";
  const fs::path kept = dir.path() / "kept";
  fs::create_directories(kept);
  CHECK_FALSE(LeakLedger(state, "garbage").record("bad", ResourceKind::kDir, kept).is_ok());
  CHECK_FALSE(fs::exists(state));
  // The data folder gone: nothing is recorded, and the folder is not made again.
  LeakLedger lost(dir.path() / "gone" / "state");
  CHECK_FALSE(lost.record("lost", ResourceKind::kDir, kept).is_ok());
  CHECK_FALSE(fs::exists(dir.path() / "gone"));
  CHECK_FALSE(fs::exists(lost.file()));

  // A line whose owner names no process (written by hand) is left by a reap.
  LeakLedger live(state);
  REQUIRE(live.record("live", ResourceKind::kDir, kept).is_ok());
  std::ofstream(live.file(), std::ios::app) << "+ 12x.5 odd dir " << kept.string() << "\n";
  auto report = aura::sandbox::reap(state);
  REQUIRE(report.ok());
  CHECK(report->runs_reaped == 0);
  CHECK(fs::exists(kept));
  auto entries = live.entries();
  REQUIRE(entries.ok());
  CHECK(entries->size() == 2);
  fs::remove(live.file());  // the odd line would stay for good
}

// A record that waits for the ledger's lock while a reap drops the file (an emptied ledger
// of a gone folder is unlinked) lands in the file later readers open, never in the unlinked one.
TEST_CASE("sandbox leaks: a record that waited while a reap dropped the ledger is kept") {
  aura::testing::TempDir dir;
  const fs::path state = dir.path() / "state";
  LeakLedger ledger(state);
  REQUIRE(ledger.record("first", ResourceKind::kDir, dir.path() / "a").is_ok());
  REQUIRE(ledger.release("first", ResourceKind::kDir, dir.path() / "a").is_ok());
  const int fd = ::open(ledger.file().c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  struct stat st {};
  REQUIRE(::fstat(fd, &st) == 0);
  aura::Status recorded = aura::Status::ok();
  std::thread waiter(
      [&] { recorded = ledger.record("second", ResourceKind::kDir, dir.path() / "b"); });
  // /proc/locks lists a request blocked on the file's inode with "->".
  const std::string inode = ":" + std::to_string(st.st_ino) + " ";
  const bool waiting = aura::testing::wait_until([&] {
    std::istringstream locks(aura::testing::read_text_file("/proc/locks"));
    for (std::string line; std::getline(locks, line);)
      if (line.find("->") != std::string::npos && line.find(inode) != std::string::npos)
        return true;
    return false;
  });
  CHECK(waiting);
  ::unlink(ledger.file().c_str());  // as reap_file drops an emptied ledger, under the lock
  ::close(fd);
  waiter.join();
  REQUIRE(recorded.is_ok());
  auto entries = ledger.entries();
  REQUIRE(entries.ok());
  REQUIRE(entries->size() == 1);
  CHECK((*entries)[0].run_id == "second");
  CHECK_FALSE((*entries)[0].released);
  REQUIRE(ledger.release("second", ResourceKind::kDir, dir.path() / "b").is_ok());
  fs::remove(ledger.file());
}
