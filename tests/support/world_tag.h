// A world network tag unique to this test process and moment: `prefix` (a lowercase letter that
// names the test file, so a leftover says where it came from) and 15 hex digits of the pid and
// the clock: 16 characters, as WorldNetwork::create takes them.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace aura::testing {

inline std::string world_tag(char prefix) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%c%07x%08x", prefix, unsigned(::getpid()) & 0xfffffff,
                unsigned(std::chrono::steady_clock::now().time_since_epoch().count()));
  return buf;
}

}  // namespace aura::testing
