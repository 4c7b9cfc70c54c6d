// Log lines written in batches instead of one write each: a request log at tens of thousands
// of lines a second otherwise costs a system call per line. A line is written at most
// `max_delay` after it was added (a flusher thread), at once when the batch reaches
// `max_bytes`, on flush(), and when the batcher is destroyed. Lines keep their order.
// Thread-safe. The flusher thread starts with the first line, so a process that must change
// its credentials while it has one thread can make a batcher before that.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

namespace aura {

class LineBatcher {
 public:
  // `sink` receives whole lines, each ending in '\n'; it is called with no lock of the
  // caller's held but never twice at once.
  using Sink = std::function<void(std::string_view lines)>;
  explicit LineBatcher(Sink sink,
                       std::chrono::milliseconds max_delay = std::chrono::milliseconds(200),
                       size_t max_bytes = 16 * 1024);
  ~LineBatcher();
  LineBatcher(const LineBatcher&) = delete;
  LineBatcher& operator=(const LineBatcher&) = delete;

  // Adds one line (without its '\n').
  void add(std::string_view line);
  // Writes what is waiting now.
  void flush();

 private:
  void write_locked(std::unique_lock<std::mutex>& lock);
  void run();

  Sink sink_;
  const std::chrono::milliseconds max_delay_;
  const size_t max_bytes_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string waiting_;
  std::chrono::steady_clock::time_point first_;  // when the oldest waiting line came
  bool stopping_ = false;
  std::mutex sink_mu_;  // one sink call at a time, in order
  std::thread flusher_;
};

}  // namespace aura
