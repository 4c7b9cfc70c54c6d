#include "app/daemon/gate_pool.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <queue>
#include <thread>

#include "engine/common/memory.h"

namespace aura::daemon {

void set_thread_nice(int nice) {
  // Linux: a thread's nice is its own (setpriority on its tid). Raising it back needs
  // CAP_SYS_NICE, which the daemon (root) has; failing that it stays lower, never higher.
  (void)::setpriority(PRIO_PROCESS, id_t(::syscall(SYS_gettid)), nice);
}

GatePool::GatePool(size_t workers, size_t limit, size_t per_learner)
    : limit_(limit), per_learner_(per_learner) {
  for (size_t i = 0; i < std::max<size_t>(workers, 1); ++i)
    threads_.emplace_back([this] { worker(); });
}

GatePool::~GatePool() { stop(); }

void GatePool::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    waiting_.clear();
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

std::optional<double> GatePool::mean_locked(const std::string& kind) const {
  auto it = by_kind_.find(kind);
  if (it != by_kind_.end() && it->second.ran > 0) return it->second.seconds / it->second.ran;
  if (ran_ > 0) return seconds_total_ / double(ran_);  // a kind not seen yet: all gates' mean
  return std::nullopt;
}

std::optional<double> GatePool::wait_locked(Clock::time_point now) const {
  // The workers' free times: each running gate ends at its kind's mean (at the earliest now);
  // then each waiting gate, in order, takes the first worker free for its kind's mean.
  std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
  for (const Running& r : running_) {
    auto mean = mean_locked(r.kind);
    if (!mean) return std::nullopt;
    const double elapsed = std::chrono::duration<double>(now - r.started).count();
    free_at.push(std::max(0.0, *mean - elapsed));
  }
  while (free_at.size() < threads_.size()) free_at.push(0.0);
  for (const Job& j : waiting_) {
    auto mean = mean_locked(j.kind);
    if (!mean) return std::nullopt;
    const double t = free_at.top();
    free_at.pop();
    free_at.push(t + *mean);
  }
  return free_at.top();
}

Result<GatePlace> GatePool::submit(const std::string& holder, const std::string& kind,
                                   std::function<void()> job) {
  std::lock_guard lock(mu_);
  if (stopping_) return Status::unavailable("the daemon is stopping");
  const size_t mine = size_t(std::count_if(running_.begin(), running_.end(),
                                           [&](const Running& r) { return r.holder == holder; })) +
                      size_t(std::count_if(waiting_.begin(), waiting_.end(),
                                           [&](const Job& j) { return j.holder == holder; }));
  if (mine >= per_learner_)
    return Status::busy("you already have " + std::to_string(mine) +
                        " gates running or waiting (at most " + std::to_string(per_learner_) +
                        "); try again when one has ended");
  if (waiting_.size() >= limit_)
    return Status::busy("the gate queue is full (" + std::to_string(limit_) +
                        " gates waiting); try again when one has started");
  GatePlace place;
  const size_t idle = threads_.size() - std::min(threads_.size(), running_.size());
  // Ahead of it: every gate waiting, less the workers free to take them at once.
  place.position = waiting_.size() + 1 > idle ? waiting_.size() + 1 - idle : 0;
  if (ran_ > 0) place.expected_wait_s = place.position == 0 ? 0.0 : wait_locked(Clock::now());
  waiting_.push_back(Job{holder, kind, std::move(job)});
  cv_.notify_one();
  return place;
}

uint32_t GatePool::retry_after_s() const {
  std::lock_guard lock(mu_);
  if (ran_ == 0) return 60;
  return uint32_t(std::clamp(seconds_total_ / double(ran_), 1.0, 3600.0));
}

size_t GatePool::waiting() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

size_t GatePool::running() const {
  std::lock_guard lock(mu_);
  return running_.size();
}

void GatePool::worker() {
  // A gate builds and checks worlds for minutes: below the reads' CPU priority (the processes
  // it starts inherit it), so a lab running gates still answers reads at once.
  set_thread_nice(kGateNice);
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping, nothing left to start
    Job job = std::move(waiting_.front());
    waiting_.pop_front();
    const auto started = Clock::now();
    const uint64_t id = next_run_++;
    running_.push_back(Running{id, job.holder, job.kind, started});
    lock.unlock();
    job.run();
    const double seconds = std::chrono::duration<double>(Clock::now() - started).count();
    lock.lock();
    running_.erase(std::find_if(running_.begin(), running_.end(),
                                [&](const Running& r) { return r.id == id; }));
    seconds_total_ += seconds;
    ++ran_;
    by_kind_[job.kind].seconds += seconds;
    ++by_kind_[job.kind].ran;
  }
}

size_t GatePool::workers_for_machine(uint64_t world_bytes) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t available = meminfo_bytes("MemAvailable");
  if (available == 0 || world_bytes == 0) return cores;
  const size_t by_memory = size_t(available / world_bytes);
  return std::max<size_t>(1, std::min(cores, by_memory));
}

}  // namespace aura::daemon
