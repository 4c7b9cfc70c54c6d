// For crash tests: re-run this test binary as a child limited to one test case (which reads its
// inputs from the environment), and a random seed that an environment variable can pin.
#pragma once

#include <spawn.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace aura::testing {

// The seed named by `env_var` if set (to replay a failure), else a random one.
inline uint64_t seed_from_env(const char* env_var) {
  if (const char* s = std::getenv(env_var)) return std::strtoull(s, nullptr, 10);
  return std::random_device()() * uint64_t(0x100000000) + std::random_device()();
}

// Spawns /proc/self/exe --test-case=<test_case> with `extra_env` ("NAME=value") ahead of this
// process's environment. Throws if the spawn fails.
inline pid_t spawn_self_case(const std::string& test_case, std::vector<std::string> extra_env) {
  std::string exe = std::filesystem::read_symlink("/proc/self/exe").string();
  std::string filter = "--test-case=" + test_case;
  std::vector<char*> envp;
  for (auto& s : extra_env) envp.push_back(s.data());
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  std::vector<char*> argv = {exe.data(), filter.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, argv.data(), envp.data()) != 0)
    throw std::runtime_error("posix_spawn failed");
  return pid;
}

}  // namespace aura::testing
