// The front's request log: one JSON object per line on a stream (stderr in `aura serve`), one
// line per request. It holds what is needed to follow a request into the daemon's log and
// nothing secret: never a header value, a token or a cookie. Request lines are written in
// batches (within 200 ms, engine/common/line_batcher.h); a note is written at once, after
// them. Thread-safe.
#pragma once

#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>

#include "engine/common/line_batcher.h"

namespace aura::serve {

struct AccessRecord {
  std::string request_id;  // also the daemon request's request_id and X-Request-Id
  std::string method;      // cut to 16 bytes
  std::string route;       // the route template, never the path (it may name an attempt)
  int status = 0;
  double ms = 0;
  uint64_t bytes = 0;  // response body bytes (for a stream: every event written)
};

class AccessLog {
 public:
  explicit AccessLog(std::ostream* out);
  void write(const AccessRecord& r);
  // Writes the waiting request lines now.
  void flush() { batch_.flush(); }
  // A line for something that is not a request (a refused connection, a daemon failure):
  // {"ts", "event", "detail"}. `detail` must hold no secret.
  void note(std::string_view event, std::string_view detail);

 private:
  std::mutex mu_;
  std::ostream* out_;
  LineBatcher batch_;
};

// "2024-05-01T12:00:00.123Z"
std::string utc_timestamp_ms();

}  // namespace aura::serve
