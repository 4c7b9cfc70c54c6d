#include "app/daemon/gate_pool.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace aura::daemon {

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

Result<GatePlace> GatePool::submit(const std::string& holder, std::function<void()> job) {
  std::lock_guard lock(mu_);
  if (stopping_) return Status::unavailable("the daemon is stopping");
  const size_t mine = size_t(std::count(running_.begin(), running_.end(), holder)) +
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
  if (ran_ > 0) {
    const double mean = seconds_total_ / double(ran_);
    // Each round of `workers` gates takes about one mean gate.
    place.expected_wait_s =
        place.position == 0
            ? 0.0
            : mean * double((place.position + threads_.size() - 1) / threads_.size());
  }
  waiting_.push_back(Job{holder, std::move(job)});
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
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
    if (waiting_.empty()) return;  // stopping, nothing left to start
    Job job = std::move(waiting_.front());
    waiting_.pop_front();
    running_.push_back(job.holder);
    lock.unlock();
    const auto started = std::chrono::steady_clock::now();
    job.run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    lock.lock();
    running_.erase(std::find(running_.begin(), running_.end(), job.holder));
    seconds_total_ += seconds;
    ++ran_;
  }
}

size_t GatePool::workers_for_machine(uint64_t world_bytes) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  std::ifstream in("/proc/meminfo");
  uint64_t available_kb = 0;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::string key;
    f >> key;
    if (key == "MemAvailable:") f >> available_kb;
  }
  if (available_kb == 0 || world_bytes == 0) return cores;
  const size_t by_memory = size_t(available_kb * 1024 / world_bytes);
  return std::max<size_t>(1, std::min(cores, by_memory));
}

}  // namespace aura::daemon
