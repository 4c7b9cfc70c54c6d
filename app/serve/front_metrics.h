// The front's own metrics, rendered in the Prometheus text format (docs/SERVE.md, "Metrics"):
// requests by route template and status, a latency histogram per route template, open
// connections, open event streams and connections refused at a cap. Thread-safe: the server's
// threads record into one instance. Route templates and statuses are finite sets, so are the
// series.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace aura::serve {

class FrontMetrics {
 public:
  // Upper bounds of the latency buckets, in seconds (+Inf is implied).
  static constexpr std::array<double, 13> kBuckets = {
      0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};

  void record(const std::string& route, int status, double seconds);
  void connection_opened() { ++open_connections_; }
  void connection_closed() { --open_connections_; }
  void stream_opened() { ++open_streams_; }
  void stream_closed() { --open_streams_; }
  // `reason`: "total" or "per_address".
  void connection_refused(const std::string& reason);
  // A full server ended one of a heavier client's (`what`: "connection" or "stream") for a
  // newcomer.
  void share_taken_back(const std::string& what);

  int64_t open_connections() const { return open_connections_.load(); }
  int64_t open_streams() const { return open_streams_.load(); }

  // The text exposition of every series (HELP and TYPE lines included).
  std::string render() const;

 private:
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};  // not cumulative here
    uint64_t count = 0;
    double sum = 0;
  };
  mutable std::mutex mu_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, uint64_t> refused_;
  std::map<std::string, uint64_t> taken_back_;
  std::atomic<int64_t> open_connections_{0};
  std::atomic<int64_t> open_streams_{0};
};

}  // namespace aura::serve
