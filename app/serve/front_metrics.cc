#include "app/serve/front_metrics.h"

#include <cstdio>

namespace aura::serve {
namespace {

// A label value in the exposition format: backslash, quote and newline escaped.
std::string label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

}  // namespace

void FrontMetrics::record(const std::string& route, int status, double seconds) {
  std::lock_guard lock(mu_);
  ++requests_[{route, status}];
  Histogram& h = latency_[route];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++h.buckets[i];
      break;
    }
  }
  ++h.count;
  h.sum += seconds;
}

void FrontMetrics::connection_refused(const std::string& reason) {
  std::lock_guard lock(mu_);
  ++refused_[reason];
}

void FrontMetrics::share_taken_back(const std::string& what) {
  std::lock_guard lock(mu_);
  ++taken_back_[what];
}

std::string FrontMetrics::render() const {
  std::string o;
  std::lock_guard lock(mu_);
  o += "# HELP aura_front_requests_total HTTP requests answered, by route template and status.\n";
  o += "# TYPE aura_front_requests_total counter\n";
  for (const auto& [key, n] : requests_) {
    o += "aura_front_requests_total{route=\"" + label(key.first) + "\",status=\"" +
         std::to_string(key.second) + "\"} " + std::to_string(n) + "\n";
  }
  o += "# HELP aura_front_request_duration_seconds Time from a request's headers to its "
       "response written, by route template.\n";
  o += "# TYPE aura_front_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    const std::string r = label(route);
    uint64_t cumulative = 0;
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.buckets[i];
      o += "aura_front_request_duration_seconds_bucket{route=\"" + r + "\",le=\"" +
           number(kBuckets[i]) + "\"} " + std::to_string(cumulative) + "\n";
    }
    o += "aura_front_request_duration_seconds_bucket{route=\"" + r + "\",le=\"+Inf\"} " +
         std::to_string(h.count) + "\n";
    o += "aura_front_request_duration_seconds_sum{route=\"" + r + "\"} " + number(h.sum) + "\n";
    o += "aura_front_request_duration_seconds_count{route=\"" + r + "\"} " +
         std::to_string(h.count) + "\n";
  }
  o += "# HELP aura_front_open_connections Client connections open now.\n";
  o += "# TYPE aura_front_open_connections gauge\n";
  o += "aura_front_open_connections " + std::to_string(open_connections_.load()) + "\n";
  o += "# HELP aura_front_sse_streams Server-sent event streams open now.\n";
  o += "# TYPE aura_front_sse_streams gauge\n";
  o += "aura_front_sse_streams " + std::to_string(open_streams_.load()) + "\n";
  o += "# HELP aura_front_connections_refused_total Connections closed at a cap, by which.\n";
  o += "# TYPE aura_front_connections_refused_total counter\n";
  for (const char* reason : {"total", "per_address"}) {
    auto it = refused_.find(reason);
    o += std::string("aura_front_connections_refused_total{reason=\"") + reason + "\"} " +
         std::to_string(it == refused_.end() ? 0 : it->second) + "\n";
  }
  o += "# HELP aura_front_shares_taken_back_total Idle connections and streams a full server "
       "ended for a newcomer, from the client holding most.\n";
  o += "# TYPE aura_front_shares_taken_back_total counter\n";
  for (const char* what : {"connection", "stream"}) {
    auto it = taken_back_.find(what);
    o += std::string("aura_front_shares_taken_back_total{what=\"") + what + "\"} " +
         std::to_string(it == taken_back_.end() ? 0 : it->second) + "\n";
  }
  return o;
}

}  // namespace aura::serve
