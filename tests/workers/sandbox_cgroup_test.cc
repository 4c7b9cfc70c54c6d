// The cgroup tree, driven directly: limits land in the kernel's files, a group's processes are
// all killed and the group removed; a v2 mount without controllers is refused with a reason.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/support/wait_until.h"
#include "tests/workers/sandbox_support.h"
#include "workers/sandbox/cgroup.h"

namespace fs = std::filesystem;
using aura::sandbox::CgroupTree;
using aura::sandbox::CgroupVersion;

namespace {

std::string test_run_id() { return "cgtest-" + std::to_string(::getpid()); }

// A child that forks `grandchildren` sleepers of its own, then sleeps.
pid_t spawn_family(int grandchildren) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    for (int i = 0; i < grandchildren; ++i) {
      if (::fork() == 0) {
        ::pause();
        ::_exit(0);
      }
    }
    ::pause();
    ::_exit(0);
  }
  return pid;
}

}  // namespace

TEST_CASE("cgroup: the detected tree sets limits, counts, kills every process and removes") {
  auto tree = CgroupTree::detect();
  if (!tree.ok()) {
    REQUIRE(tree.status().code() == aura::ErrorCode::kUnavailable);
    const std::string why = "no usable cgroups: " + tree.status().message();
    WARN_MESSAGE(false, why);
    return;
  }
  const std::string id = test_run_id();
  REQUIRE((*tree)->create(id, {50'000, 100'000, 64ull << 20, 16}).is_ok());
  CHECK((*tree)->create(id, {}).code() == aura::ErrorCode::kBusy);
  for (const fs::path& p : (*tree)->paths(id)) CHECK(fs::is_directory(p));
  bool saw_memory = false, saw_pids = false;
  for (const fs::path& p : (*tree)->paths(id)) {
    if (fs::exists(p / "memory.limit_in_bytes")) {
      CHECK(aura::testing::read_text_file(p / "memory.limit_in_bytes") ==
            std::to_string(64ull << 20) + "\n");
      saw_memory = true;
    }
    if (fs::exists(p / "memory.max")) {
      CHECK(aura::testing::read_text_file(p / "memory.max") == std::to_string(64ull << 20) + "\n");
      saw_memory = true;
    }
    if (fs::exists(p / "pids.max")) {
      CHECK(aura::testing::read_text_file(p / "pids.max") == "16\n");
      saw_pids = true;
    }
  }
  CHECK(saw_memory);
  CHECK(saw_pids);

  // The child joins before it forks, so its children are born inside.
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    char b;
    [[maybe_unused]] ssize_t n = ::read(ready[0], &b, 1);
    ::_exit(spawn_family(3) > 0 ? (::pause(), 0) : 1);
  }
  REQUIRE((*tree)->add_pid(id, child).is_ok());
  REQUIRE(::write(ready[1], "g", 1) == 1);
  size_t count = 0;
  aura::testing::wait_until(
      [&] {
        auto pids = (*tree)->pids(id);
        REQUIRE(pids.ok());
        count = pids->size();
        return count >= 5;
      },
      std::chrono::milliseconds(2));
  CHECK(count == 5);  // child, its child, three grandchildren

  CHECK((*tree)->remove(id).code() == aura::ErrorCode::kBusy);
  auto killed = (*tree)->kill_all(id, 0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);
  REQUIRE((*tree)->kill_all(id, 5000).is_ok());
  auto left = (*tree)->pids(id);
  REQUIRE(left.ok());
  CHECK(left->empty());
  auto usage = (*tree)->usage(id);
  REQUIRE(usage.ok());
  CHECK(usage->peak_memory_bytes > 0);
  REQUIRE((*tree)->remove(id).is_ok());
  for (const fs::path& p : (*tree)->paths(id)) CHECK_FALSE(fs::exists(p));
  CHECK((*tree)->remove(id).is_ok());  // already gone is fine
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST_CASE("cgroup: a cgroup2 mount without cpu, memory and pids is refused with the reason") {
  auto tree = CgroupTree::detect();
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line;
  fs::path cgroup2;
  while (std::getline(mounts, line)) {
    if (line.find(" - cgroup2 ") == std::string::npos) continue;
    std::istringstream f(line);
    std::string id, parent, dev, root, mount_point;
    f >> id >> parent >> dev >> root >> mount_point;
    cgroup2 = mount_point;
  }
  if (cgroup2.empty()) {
    // A v1-only machine: then v1 must be what detect() found, or it says why not.
    CHECK((tree.ok() || tree.status().code() == aura::ErrorCode::kUnavailable));
    return;
  }
  const std::string controllers = aura::testing::read_text_file(cgroup2 / "cgroup.controllers");
  auto v2 = CgroupTree::open_v2(cgroup2);
  const bool has_all = controllers.find("cpu") != std::string::npos &&
                       controllers.find("memory") != std::string::npos &&
                       controllers.find("pids") != std::string::npos;
  if (has_all) {
    CHECK(v2.ok());
    return;
  }
  // This machine's case: cgroup2 is mounted with no controllers, so v2 is unavailable and
  // detect() must have chosen v1 instead of a v2 tree that cannot limit anything.
  REQUIRE_FALSE(v2.ok());
  CHECK(v2.status().code() == aura::ErrorCode::kUnavailable);
  CHECK(v2.status().message().find("controller") != std::string::npos);
  REQUIRE(tree.ok());
  CHECK((*tree)->version() == CgroupVersion::kV1);
}

TEST_CASE("cgroup: a v2 group's processes are all killed by path and its folder removed") {
  // cgroup.procs, cgroup.kill and cgroup.freeze are core cgroup2 files, present even on a mount
  // without controllers, so this path (what reap() uses) is tested on v1 machines as well.
  fs::path mount;
  std::ifstream mounts("/proc/self/mountinfo");
  std::string line;
  while (std::getline(mounts, line)) {
    if (line.find(" - cgroup2 ") == std::string::npos) continue;
    std::istringstream f(line);
    std::string id, parent, dev, root, mount_point;
    f >> id >> parent >> dev >> root >> mount_point;
    mount = mount_point;
  }
  if (mount.empty()) return;  // a v1-only machine: the v1 case above covers it
  std::string own = aura::testing::read_text_file("/proc/self/cgroup");
  const size_t at = own.find("0::");
  REQUIRE(at != std::string::npos);
  own = own.substr(at + 3, own.find('\n', at) - at - 3);
  const fs::path group = mount / fs::path(own).relative_path() / test_run_id();
  REQUIRE(fs::create_directory(group));

  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  if (child == 0) {
    char b;
    [[maybe_unused]] ssize_t n = ::read(ready[0], &b, 1);
    ::_exit(spawn_family(2) > 0 ? (::pause(), 0) : 1);
  }
  std::ofstream(group / "cgroup.procs") << child;
  REQUIRE(::write(ready[1], "g", 1) == 1);
  size_t count = 0;
  aura::testing::wait_until(
      [&] {
        std::istringstream procs(aura::testing::read_text_file(group / "cgroup.procs"));
        count = 0;
        for (long p; procs >> p;) ++count;
        return count >= 4;
      },
      std::chrono::milliseconds(2));
  CHECK(count == 4);
  // Our own child stays a zombie in the group until reaped, so reap it while the kill waits.
  std::thread reaper([&] {
    int status = 0;
    ::waitpid(child, &status, 0);
    CHECK(WIFSIGNALED(status));
  });
  const aura::Status s = aura::sandbox::kill_and_remove_group_path(group, 5000);
  reaper.join();
  INFO(s.message());
  CHECK(s.is_ok());
  CHECK_FALSE(fs::exists(group));
  ::close(ready[0]);
  ::close(ready[1]);
}
