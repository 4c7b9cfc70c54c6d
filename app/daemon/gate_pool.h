// The transfer gates of a daemon's learners on a bounded pool (issue 26): a gate builds fresh
// worlds (O1: minutes and gigabytes), so at most `workers` run at once and the rest wait in order
// of arrival, each learner holding at most `per_learner` places, the whole queue at most `limit`.
// A learner whose gate waits is told their place and the wait expected from the gates that ran.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/common/status.h"

namespace aura::daemon {

struct GatePlace {
  size_t position = 0;  // 0: running now; N: N gates start before it
  // Seconds until it starts: the gates running end and those ahead of it run, each taking the
  // mean of the gates of its kind this pool ran (of all gates for a kind not seen yet);
  // nullopt before any gate ran.
  std::optional<double> expected_wait_s;
};

// The CPU priority (nice) of the gate workers and of what they start.
inline constexpr int kGateNice = 10;
// Sets the calling thread's nice (Linux: per thread).
void set_thread_nice(int nice);

class GatePool {
 public:
  // `workers` >= 1.
  GatePool(size_t workers, size_t limit, size_t per_learner);
  ~GatePool();

  // Queues `job` for `holder` (whose share it counts in: a client of the lab), a gate of
  // `kind` (its scenario: gates of one take alike): its place, or kBusy (the queue is full, or
  // the holder already has per_learner places) with the reason, or kUnavailable once stopping.
  Result<GatePlace> submit(const std::string& holder, const std::string& kind,
                           std::function<void()> job);
  // Seconds after which a refused gate may be taken: the mean gate (a minute before any ran).
  uint32_t retry_after_s() const;
  // Waiting and running gates now.
  size_t waiting() const;
  size_t running() const;
  size_t workers() const { return threads_.size(); }
  // Drops the waiting gates (never started) and joins the workers after their running gates.
  void stop();

  // How many gates this machine runs at once: one per core, and no more than its available
  // memory holds at `world_bytes` per gate (MemAvailable from /proc/meminfo); at least one.
  static size_t workers_for_machine(uint64_t world_bytes);

 private:
  using Clock = std::chrono::steady_clock;
  struct Job {
    std::string holder, kind;
    std::function<void()> run;
  };
  struct Running {
    uint64_t id;
    std::string holder, kind;
    Clock::time_point started;
  };
  struct KindTimes {
    double seconds = 0;
    double ran = 0;
  };
  void worker();
  std::optional<double> mean_locked(const std::string& kind) const;
  std::optional<double> wait_locked(Clock::time_point now) const;

  const size_t limit_, per_learner_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> waiting_;
  std::vector<Running> running_;
  uint64_t next_run_ = 1;
  std::map<std::string, KindTimes> by_kind_;
  double seconds_total_ = 0;
  size_t ran_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace aura::daemon
