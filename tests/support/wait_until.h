// Waiting for something to happen in a test: poll the condition, end as soon as it holds, and
// give up only at a hang guard (house style: a deadline in a test is a hang guard sized for a
// machine half as fast, never a speed bar). Nothing here measures how long a step took.
#pragma once

#include <chrono>
#include <thread>

namespace aura::testing {

// The hang guard for a wait on something that takes milliseconds to a few seconds on an idle
// two-core machine (a process to start, listen or die, a packet to arrive, a file or a line to
// appear). A machine half as fast with both cores busy takes about four times as long; 60 s is
// far beyond that, so reaching it means a hang, not a slow machine.
inline constexpr std::chrono::seconds kHangGuard{60};

// Calls `done` every `every` until it returns true (true) or `guard` has passed (false). `done`
// is called once more after the last sleep, so a condition that holds at the guard counts.
template <class Done>
bool wait_until(Done&& done, std::chrono::milliseconds every = std::chrono::milliseconds(10),
                std::chrono::steady_clock::duration guard = kHangGuard) {
  const auto deadline = std::chrono::steady_clock::now() + guard;
  for (;;) {
    if (done()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(every);
  }
}

}  // namespace aura::testing
