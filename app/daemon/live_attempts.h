// The daemon's live attempts (each holds a live world: processes, mounts, a folder handle),
// bounded per client and in all, and ended after a time with no command (issue 26; the numbers
// in docs/OPERATIONS.md, "Limits"). A client is the address the HTTP front saw; the machine's
// own root (the command line) is client "" and has no per-client limit. What the engine holds
// is the truth: an attempt whose world it no longer holds (done, abandoned) counts no more.
// Thread-safe. Time is passed in, so the rules are tested without waiting.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace aura::daemon {

using SteadyClock = std::chrono::steady_clock;

struct LiveLimits {
  size_t per_client = 3;               // live attempts of one client address
  size_t total = 32;                   // live attempts in all (LiveAttempts::total_for_machine)
  std::chrono::seconds idle{30 * 60};  // with no command for this long, an attempt is ended
};

// Why a new attempt cannot start now, as the API answers it.
struct LiveRefusal {
  int status = 429;  // 429: the client's own limit; 503: the lab's
  std::string message;
  uint32_t retry_after_s = 0;  // when a place frees at the latest (an idle one expires)
};

class LiveAttempts {
 public:
  explicit LiveAttempts(LiveLimits limits) : limits_(limits) {}

  // A place for one more attempt of `client`, held until bind() or unreserve(), or why not.
  // `held`: the attempts whose live worlds the engine holds now.
  std::optional<LiveRefusal> reserve(const std::string& client,
                                     const std::vector<std::string>& held,
                                     SteadyClock::time_point now);
  // The reserved place becomes `attempt` (started), or is given back (the start failed).
  void bind(const std::string& client, const std::string& attempt, SteadyClock::time_point now);
  void unreserve(const std::string& client);
  // A command on `attempt`: its idle time starts again.
  void touch(const std::string& attempt, SteadyClock::time_point now);
  // Brings the live set to `held` (an attempt held but not known here, one opened after a
  // restart, is the machine's and idle from now), then the attempts idle past the limit, oldest
  // first: ending them is the caller's.
  std::vector<std::string> expired(const std::vector<std::string>& held,
                                   SteadyClock::time_point now);
  // The client that started `attempt` ("" for the machine's own, or unknown).
  std::string client_of(const std::string& attempt) const;
  size_t live() const;
  const LiveLimits& limits() const { return limits_; }

  // How many live attempts this machine holds: half its memory at `world_bytes` per live
  // world, and no more than `open_files` (the daemon's limit) allows at `files_per_world`,
  // leaving 1,024 for everything else; at least 2.
  static size_t total_for_machine(uint64_t world_bytes, uint64_t open_files,
                                  uint64_t files_per_world);

 private:
  struct Entry {
    std::string client;
    SteadyClock::time_point last;
  };
  void sync_locked(const std::vector<std::string>& held, SteadyClock::time_point now);
  // Seconds until the oldest of `client`'s attempts (any client's when empty) expires.
  uint32_t next_free_s_locked(const std::string* client, SteadyClock::time_point now) const;

  const LiveLimits limits_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> live_;       // by attempt
  std::map<std::string, size_t> starting_;  // by client: places reserved, worlds being built
};

}  // namespace aura::daemon
