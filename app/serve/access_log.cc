#include "app/serve/access_log.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "engine/common/json_writer.h"

namespace aura::serve {

std::string utc_timestamp_ms() {
  auto now = std::chrono::system_clock::now();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count();
  std::time_t secs = std::time_t(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[40];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
  return buf;
}

AccessLog::AccessLog(std::ostream* out)
    : out_(out), batch_([this](std::string_view lines) {
        std::lock_guard lock(mu_);
        out_->write(lines.data(), std::streamsize(lines.size()));
        out_->flush();
      }) {}

void AccessLog::write(const AccessRecord& r) {
  if (out_ == nullptr) return;
  std::string line = JsonWriter()
                         .str("ts", utc_timestamp_ms())
                         .str("request_id", r.request_id)
                         .str("method", r.method.substr(0, 16))
                         .str("route", r.route)
                         .num("status", r.status)
                         .real("ms", r.ms)
                         .num("bytes", r.bytes)
                         .done();
  batch_.add(line);
}

void AccessLog::note(std::string_view event, std::string_view detail) {
  if (out_ == nullptr) return;
  std::string line =
      JsonWriter().str("ts", utc_timestamp_ms()).str("event", event).str("detail", detail).done();
  line += '\n';
  batch_.flush();
  std::lock_guard lock(mu_);
  *out_ << line << std::flush;
}

}  // namespace aura::serve
