#include "engine/common/line_batcher.h"

namespace aura {

LineBatcher::LineBatcher(Sink sink, std::chrono::milliseconds max_delay, size_t max_bytes)
    : sink_(std::move(sink)), max_delay_(max_delay), max_bytes_(max_bytes) {}

LineBatcher::~LineBatcher() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (flusher_.joinable()) flusher_.join();
  flush();
}

void LineBatcher::add(std::string_view line) {
  std::unique_lock lock(mu_);
  const bool was_empty = waiting_.empty();
  if (was_empty) first_ = std::chrono::steady_clock::now();
  waiting_.append(line);
  waiting_ += '\n';
  if (!flusher_.joinable() && !stopping_) flusher_ = std::thread([this] { run(); });
  if (waiting_.size() >= max_bytes_) {
    write_locked(lock);
    return;
  }
  // Only the first line of a batch wakes the flusher (it then waits for the batch's due time;
  // waking it for every line would cost a context switch each).
  if (was_empty) cv_.notify_one();
}

void LineBatcher::flush() {
  std::unique_lock lock(mu_);
  write_locked(lock);
}

// Takes the waiting lines and writes them with mu_ released (adds go on meanwhile); sink_mu_,
// taken before mu_ is released, keeps the batches in order.
void LineBatcher::write_locked(std::unique_lock<std::mutex>& lock) {
  if (waiting_.empty()) return;
  std::string out;
  out.swap(waiting_);
  std::lock_guard sink_lock(sink_mu_);
  lock.unlock();
  sink_(out);
}

void LineBatcher::run() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (waiting_.empty()) {
      cv_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
      continue;
    }
    auto due = first_ + max_delay_;
    if (cv_.wait_until(lock, due, [&] { return stopping_ || waiting_.empty(); })) continue;
    write_locked(lock);
    lock.lock();
  }
}

}  // namespace aura
