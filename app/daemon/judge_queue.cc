#include "app/daemon/judge_queue.h"

#include <array>
#include <chrono>

#include "engine/common/json_writer.h"
#include "engine/crypto/ed25519.h"
#include "engine/crypto/sha256.h"
#include "engine/gate/grader.h"

namespace aura::daemon {
namespace {
constexpr size_t kRunsKept = 64;

std::string new_run_id() {
  std::array<uint8_t, 8> b{};
  random_bytes(b);
  return to_hex(b);
}
}  // namespace

JudgeQueue::JudgeQueue(RunOne run_one, size_t limit, std::filesystem::path receipts_dir)
    : run_one_(std::move(run_one)), limit_(limit), receipts_dir_(std::move(receipts_dir)) {
  thread_ = std::thread([this] { worker(); });
}

JudgeQueue::~JudgeQueue() { stop(); }

void JudgeQueue::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (const auto& id : waiting_) {
      auto& r = runs_[id];
      r.state = "failed";
      r.error = "the daemon stopped before this run started";
      touch(r);
    }
    waiting_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void JudgeQueue::touch(JudgeRunRecord& r) {
  r.version++;
  cv_.notify_all();
}

Result<std::string> JudgeQueue::enqueue(const std::string& scenario_id) {
  std::lock_guard lock(mu_);
  if (stopping_) return Status::unavailable("the daemon is stopping");
  if (waiting_.size() >= limit_) {
    return Status::busy("the judge queue is full (" + std::to_string(limit_) +
                        " runs waiting); try again when one has started");
  }
  JudgeRunRecord r;
  r.run = new_run_id();
  r.scenario = scenario_id;
  runs_[r.run] = r;
  order_.push_back(r.run);
  while (order_.size() > kRunsKept) {
    const auto& old = runs_[order_.front()];
    if (old.state != "done" && old.state != "failed") break;
    runs_.erase(order_.front());
    order_.erase(order_.begin());
  }
  waiting_.push_back(r.run);
  cv_.notify_all();
  return r.run;
}

void JudgeQueue::worker() {
  for (;;) {
    std::string id;
    app::JudgeRequest req;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !waiting_.empty(); });
      if (stopping_) return;
      id = waiting_.front();
      waiting_.pop_front();
      auto& r = runs_[id];
      r.state = "running";
      touch(r);
      req.scenario = r.scenario;
      req.receipts_dir = receipts_dir_;
    }
    app::JudgeProgress progress;
    progress.gate = [&](gate::Property p, gate::Outcome o) {
      std::lock_guard lock(mu_);
      auto& r = runs_[id];
      std::string entry = JsonWriter()
                              .str("property", gate::property_name(p))
                              .str("outcome", gate::outcome_name(o))
                              .done();
      r.properties.push_back(std::move(entry));
      touch(r);
    };
    progress.case_done = [&](const app::JudgeCaseRun& c) {
      std::lock_guard lock(mu_);
      auto& r = runs_[id];
      JsonWriter j;
      j.str("case", c.name)
          .str("attempt", c.attempt)
          .str("expect", c.expected)
          .str("verdict", c.verdict)
          .boolean("as_expected", c.as_expected())
          .raw("gate", c.gate_json.empty() ? "null" : c.gate_json)
          .real("gate_seconds", c.gate_seconds);
      if (!c.receipt_sha256.empty()) j.str("receipt_sha256", c.receipt_sha256);
      r.case_json.push_back(j.done());
      r.properties.clear();
      touch(r);
    };
    progress.case_started = [&](const std::string& attempt) {
      std::lock_guard lock(mu_);
      auto& r = runs_[id];
      r.attempts.push_back(attempt);
      r.properties.clear();
      touch(r);
    };
    auto started = std::chrono::steady_clock::now();
    auto report = run_one_(req, progress);
    std::lock_guard lock(mu_);
    auto& r = runs_[id];
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    if (report.ok()) {
      r.state = "done";
    } else {
      r.state = "failed";
      r.error = report.status().message();
    }
    touch(r);
  }
}

std::string JudgeQueue::json_locked(const JudgeRunRecord& r) const {
  size_t position = 0;
  if (r.state == "queued") {
    for (size_t i = 0; i < waiting_.size(); ++i) {
      if (waiting_[i] == r.run) position = i + 1;
    }
  }
  JsonArray cases, attempts;
  for (const auto& c : r.case_json) cases.raw(c);
  for (const auto& a : r.attempts) attempts.str(a);
  JsonWriter j;
  j.str("run", r.run).str("scenario", r.scenario).str("state", r.state).num("position", position);
  j.raw("attempts", attempts.done()).raw("cases", cases.done());
  JsonArray properties;
  for (const auto& p : r.properties) properties.raw(p);
  j.raw("current_properties", properties.done());
  if (!r.error.empty()) j.str("error", r.error);
  if (r.state == "done" || r.state == "failed") j.real("seconds", r.seconds);
  return j.done();
}

std::optional<std::string> JudgeQueue::run_json(const std::string& run) const {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run);
  if (it == runs_.end()) return std::nullopt;
  return json_locked(it->second);
}

std::optional<JudgeRunRecord> JudgeQueue::record(const std::string& run) const {
  std::lock_guard lock(mu_);
  auto it = runs_.find(run);
  if (it == runs_.end()) return std::nullopt;
  return it->second;
}

std::string JudgeQueue::list_json() const {
  std::lock_guard lock(mu_);
  JsonArray runs;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    auto r = runs_.find(*it);
    if (r != runs_.end()) runs.raw(json_locked(r->second));
  }
  return JsonWriter()
      .raw("runs", runs.done())
      .num("queue_limit", uint64_t(limit_))
      .num("waiting", uint64_t(waiting_.size()))
      .done();
}

size_t JudgeQueue::waiting() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

bool JudgeQueue::running() const {
  std::lock_guard lock(mu_);
  for (const auto& [id, r] : runs_) {
    if (r.state == "running") return true;
  }
  return false;
}

uint64_t JudgeQueue::wait_change(const std::string& run, uint64_t version,
                                 std::chrono::milliseconds timeout) const {
  std::unique_lock lock(mu_);
  auto current = [&]() -> uint64_t {
    auto it = runs_.find(run);
    return it == runs_.end() ? 0 : it->second.version;
  };
  cv_.wait_for(lock, timeout, [&] { return stopping_ || current() != version; });
  return current();
}

}  // namespace aura::daemon
