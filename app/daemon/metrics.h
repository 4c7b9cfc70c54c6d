// The daemon's metrics, in Prometheus text format (GET /metrics adds the front's own): requests
// by op and status, op latency, judge queue, live worlds, the log's appends and head, projection
// lag, gate durations.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace aura::daemon {

class Metrics {
 public:
  void request(const std::string& op, int status, double seconds);
  void gate(double seconds);
  // Gauges read at scrape time are given by the caller.
  struct Gauges {
    uint64_t log_head = 0;
    uint64_t projection_lag = 0;
    uint64_t judge_waiting = 0;
    uint64_t judge_running = 0;
    uint64_t live_worlds = 0;
    uint64_t connections = 0;
    uint64_t chain_verified = 0;  // the last chain verification held
  };
  std::string text(const Gauges& g) const;

  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.5,    1,     10,   60};
  static constexpr std::array<double, 8> kGateBuckets = {5, 10, 20, 30, 60, 120, 300, 600};

 private:
  struct Histogram {
    std::array<uint64_t, 12> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::array<uint64_t, 8> gate_buckets_{};
  uint64_t gate_count_ = 0;
  double gate_sum_ = 0;
};

}  // namespace aura::daemon
