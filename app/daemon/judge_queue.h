// Judge Mode as a service: one judge run at a time (it uses every core), a bounded queue of
// runs waiting, each run's progress and result kept for the daemon's lifetime (the attempts and
// receipts themselves are in the log). Runs use their own attempt engine, so learners' commands
// are not queued behind a judge run's gate.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/lab/judge.h"
#include "engine/attempt/attempt_engine.h"
#include "engine/common/status.h"

namespace aura::daemon {

struct JudgeRunRecord {
  std::string run;  // 16 lowercase hex
  std::string scenario;
  std::string state = "queued";  // queued | running | done | failed
  std::string error;
  std::vector<std::string> attempts;    // as each case starts
  std::vector<std::string> case_json;   // each finished case
  std::vector<std::string> properties;  // the current case's properties as decided (JSON each)
  uint64_t version = 0;                 // bumped on every change
  double seconds = 0;
};

class JudgeQueue {
 public:
  // `run_one` runs one judge request on the daemon's judge engine (app::judge).
  using RunOne =
      std::function<Result<app::JudgeReport>(const app::JudgeRequest&, const app::JudgeProgress&)>;
  JudgeQueue(RunOne run_one, size_t limit, std::filesystem::path receipts_dir);
  ~JudgeQueue();

  // Queues a run; kBusy when `limit` runs already wait.
  Result<std::string> enqueue(const std::string& scenario_id);
  // {"run":..,"scenario":..,"state":..,"position":..,"cases":[..],...}; nullopt when unknown.
  std::optional<std::string> run_json(const std::string& run) const;
  std::optional<JudgeRunRecord> record(const std::string& run) const;
  // {"runs":[...],"queue_limit":N,"waiting":N}
  std::string list_json() const;
  size_t waiting() const;
  bool running() const;
  // Waits until the run's version passes `version` or the timeout; returns the version then.
  uint64_t wait_change(const std::string& run, uint64_t version,
                       std::chrono::milliseconds timeout) const;
  void stop();

 private:
  void worker();
  std::string json_locked(const JudgeRunRecord& r) const;
  void touch(JudgeRunRecord& r);

  RunOne run_one_;
  size_t limit_;
  std::filesystem::path receipts_dir_;
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::deque<std::string> waiting_;
  std::map<std::string, JudgeRunRecord> runs_;
  std::vector<std::string> order_;  // runs by enqueue time, the newest 64 kept
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace aura::daemon
