#include "app/daemon/metrics.h"

#include <cstdio>

namespace aura::daemon {
namespace {
std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
}  // namespace

void Metrics::request(const std::string& op, int status, double seconds) {
  std::lock_guard lock(mu_);
  requests_[{op, status}]++;
  Histogram& h = latency_[op];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) h.buckets[i]++;
  }
  h.count++;
  h.sum += seconds;
}

void Metrics::gate(double seconds) {
  std::lock_guard lock(mu_);
  for (size_t i = 0; i < kGateBuckets.size(); ++i) {
    if (seconds <= kGateBuckets[i]) gate_buckets_[i]++;
  }
  gate_count_++;
  gate_sum_ += seconds;
}

std::string Metrics::text(const Gauges& g) const {
  std::lock_guard lock(mu_);
  std::string o;
  o += "# HELP aura_daemon_requests_total Daemon requests by op and status.\n";
  o += "# TYPE aura_daemon_requests_total counter\n";
  for (const auto& [k, n] : requests_) {
    o += "aura_daemon_requests_total{op=\"" + k.first + "\",status=\"" + std::to_string(k.second) +
         "\"} " + std::to_string(n) + "\n";
  }
  o += "# HELP aura_daemon_request_seconds Time the daemon took to answer, by op.\n";
  o += "# TYPE aura_daemon_request_seconds histogram\n";
  for (const auto& [op, h] : latency_) {
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      o += "aura_daemon_request_seconds_bucket{op=\"" + op + "\",le=\"" + num(kBuckets[i]) +
           "\"} " + std::to_string(h.buckets[i]) + "\n";
    }
    o += "aura_daemon_request_seconds_bucket{op=\"" + op + "\",le=\"+Inf\"} " +
         std::to_string(h.count) + "\n";
    o += "aura_daemon_request_seconds_sum{op=\"" + op + "\"} " + num(h.sum) + "\n";
    o += "aura_daemon_request_seconds_count{op=\"" + op + "\"} " + std::to_string(h.count) + "\n";
  }
  o += "# HELP aura_gate_seconds TransferGate durations (every property on fresh worlds).\n";
  o += "# TYPE aura_gate_seconds histogram\n";
  for (size_t i = 0; i < kGateBuckets.size(); ++i) {
    o += "aura_gate_seconds_bucket{le=\"" + num(kGateBuckets[i]) + "\"} " +
         std::to_string(gate_buckets_[i]) + "\n";
  }
  o += "aura_gate_seconds_bucket{le=\"+Inf\"} " + std::to_string(gate_count_) + "\n";
  o += "aura_gate_seconds_sum " + num(gate_sum_) + "\n";
  o += "aura_gate_seconds_count " + std::to_string(gate_count_) + "\n";
  auto gauge = [&](const char* name, const char* help, uint64_t v) {
    o += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n" + name + " " +
         std::to_string(v) + "\n";
  };
  gauge("aura_log_head_seq", "Seq of the log's last event (its appends so far).", g.log_head);
  gauge("aura_projection_lag_events", "Events the projections are behind the log's head.",
        g.projection_lag);
  gauge("aura_judge_queue_waiting", "Judge runs waiting.", g.judge_waiting);
  gauge("aura_judge_running", "Judge runs running (0 or 1).", g.judge_running);
  gauge("aura_live_worlds", "Worlds alive under the data folder.", g.live_worlds);
  gauge("aura_chain_verified",
        "1 when the daemon's last verification of the log (chain, tree, checkpoints, blobs) held.",
        g.chain_verified);
  gauge("aura_daemon_connections", "Open daemon socket connections.", g.connections);
  return o;
}

}  // namespace aura::daemon
