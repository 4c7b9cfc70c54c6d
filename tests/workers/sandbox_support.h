// Helpers for the sandbox tests: a state folder per test, the default profile with a hang-guard
// deadline, and the rule for machines that lack a mechanism (the run must say it is
// unavailable and why; it must never pass as a success).
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "tests/support/temp_dir.h"
#include "workers/sandbox/sandbox.h"

namespace aura::testing {

// The whole of a small file (a cgroup or /proc file), or "" when it cannot be read.
inline std::string read_text_file(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct SandboxFixture {
  TempDir dir;
  sandbox::Profile profile;
  sandbox::RunOptions options;
  SandboxFixture() {
    // A hang guard: the commands these tests run end within a second or two on an idle machine
    // (a test about the deadline itself sets its own); 60 s allows a machine half as fast and
    // busy many times over.
    profile.wall_deadline_ms = 60'000;
    options.state_dir = dir.path() / "state";
  }
  Result<sandbox::RunResult> run(const std::vector<std::string>& argv,
                                 const std::vector<sandbox::PackageMount>& packages = {}) {
    return sandbox::run(profile, argv, packages, options);
  }
  Result<sandbox::RunResult> sh(const std::string& script) {
    return run({"/bin/sh", "-c", script});
  }
};

// True when `r` may be inspected. When the machine lacks a mechanism the run must be
// kUnavailable with a reason naming it; that is checked here and the case stops, loudly.
inline bool sandbox_ran(const Result<sandbox::RunResult>& r) {
  if (r.ok()) return true;
  INFO("sandbox run failed: ", r.status().message());
  REQUIRE(r.status().code() == ErrorCode::kUnavailable);
  // On a machine known to have every mechanism, AURA_SANDBOX_REQUIRE=1 turns this into a failure.
  if (const char* require = std::getenv("AURA_SANDBOX_REQUIRE"); require && require[0] == '1')
    FAIL("AURA_SANDBOX_REQUIRE=1 but the sandbox is unavailable");
  CHECK(r.status().message().size() > 10);
  const std::string why = "sandbox unavailable on this machine: " + r.status().message();
  WARN_MESSAGE(false, why);
  return false;
}

}  // namespace aura::testing
