// The daemon's event streams (docs/formats/daemon-protocol.md, "Streams"): an attempt's events as
// its learner sees them, and a judge run's progress, from a log seq on, with a keep-alive every
// 15 s. A stream ends when the peer leaves, the daemon stops, the attempt's token is
// replaced, or the judge run has ended and everything it wrote was sent.
#include <poll.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>

#include "app/daemon/daemon_impl.h"
#include "app/lab/access.h"
#include "app/lab/views.h"
#include "app/rpc/frame.h"
#include "engine/attempt/attempt_state.h"
#include "engine/common/json_writer.h"

namespace aura::daemon {
using namespace std::chrono_literals;

namespace {

constexpr auto kKeepAlive = 15s;
constexpr auto kWrite = 30s;

// True when the peer closed its side (or sent something: a stream takes no requests).
bool peer_gone(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0;
}

bool send_reply(int fd, const rpc::Request& r, int status, const std::string& body,
                const std::optional<rpc::ApiError>& error) {
  rpc::Reply reply;
  reply.request_id = r.request_id;
  reply.status = status;
  reply.body_json = body;
  reply.error = error;
  return rpc::write_frame(fd, rpc::Kind::kReply, reply.encode(), kWrite).is_ok();
}

bool send_event(int fd, const std::string& body) {
  if (body.size() > rpc::kMaxEventBytes) return true;  // never sent whole: skipped
  return rpc::write_frame(fd, rpc::Kind::kEvent, body, kWrite).is_ok();
}

}  // namespace

void Daemon::Impl::stream(int fd, const rpc::Request& r) {
  auto args = Args::parse(r.args_json);
  if (!args.ok()) {
    send_reply(fd, r, 400, "", rpc::api_error_from(args.status()));
    return;
  }
  const json::Object& a = (*args)->obj;
  auto after = a.optional_u64("after_seq");
  if (!after.ok()) {
    send_reply(fd, r, 400, "", rpc::api_error_from(after.status()));
    return;
  }
  // A seq is below 2^63 (the log's own bound); anything larger would wrap at last + 1 and
  // replay the stream from its start.
  if (after->value_or(0) > uint64_t(INT64_MAX)) {
    send_reply(
        fd, r, 400, "",
        rpc::api_error(400, "malformed",
                       "args.after_seq: beyond any event seq (at most 9223372036854775807)"));
    return;
  }
  uint64_t last = after->value_or(0);
  EventLog& log = *session->writer.log;

  if (r.op == "attempt.events") {
    auto id = a.required_string("attempt", 16);
    if (!id.ok() || !attempt::is_valid_attempt_id(*id)) {
      send_reply(fd, r, 400, "",
                 rpc::api_error(400, "malformed", "args.attempt: not an attempt id"));
      return;
    }
    const std::string attempt(*id);
    if (Status s = a.done(); !s.is_ok()) {
      send_reply(fd, r, 400, "", rpc::api_error_from(s));
      return;
    }
    auto allowed = [&]() -> Status {
      if (r.auth != rpc::AuthKind::kToken) return Status::failed_precondition("none");
      return app::check_access(log, attempt, r.secret);
    };
    if (Status s = allowed(); !s.is_ok()) {
      bool none = s.message() == "none";
      send_reply(fd, r, none ? 401 : 403, "",
                 none ? rpc::api_error(401, "unauthorized", "this attempt needs its token")
                      : rpc::api_error(403, "forbidden",
                                       "the token presented does not open this attempt"));
      return;
    }
    if (!send_reply(fd, r, 200, JsonWriter().num("from_seq", last).done(), std::nullopt)) return;
    auto quiet_since = std::chrono::steady_clock::now();
    while (!stopping && !peer_gone(fd)) {
      std::vector<std::string> out;
      Status s = log.read_stream(attempt::stream_of(attempt), last + 1, [&](const EventView& e) {
        last = e.seq;
        if (auto v = app::learner_event_json(e)) out.push_back(std::move(*v));
        return out.size() < 256;
      });
      if (!s.is_ok()) return;
      for (const auto& body : out) {
        if (!send_event(fd, body)) return;
      }
      if (!out.empty()) quiet_since = std::chrono::steady_clock::now();
      if (out.size() >= 256) continue;
      // A replaced token ends the stream it opened.
      if (!allowed().is_ok()) return;
      log.wait_for(log.head().seq + 1, 1s);
      if (std::chrono::steady_clock::now() - quiet_since >= kKeepAlive) {
        if (!rpc::write_frame(fd, rpc::Kind::kKeepAlive, "", kWrite).is_ok()) return;
        quiet_since = std::chrono::steady_clock::now();
      }
    }
    return;
  }

  // judge.events
  auto run = a.required_string("run", 16);
  if (!run.ok() || !rpc::is_hex(*run, 16)) {
    send_reply(fd, r, 400, "", rpc::api_error(400, "malformed", "args.run: not a run id"));
    return;
  }
  const std::string run_id(*run);
  if (Status s = a.done(); !s.is_ok()) {
    send_reply(fd, r, 400, "", rpc::api_error_from(s));
    return;
  }
  if (!judge->record(run_id)) {
    send_reply(fd, r, 404, "", rpc::api_error(404, "not_found", "no judge run " + run_id));
    return;
  }
  if (!send_reply(fd, r, 200, JsonWriter().num("from_seq", last).done(), std::nullopt)) return;
  uint64_t version = 0;
  auto quiet_since = std::chrono::steady_clock::now();
  while (!stopping && !peer_gone(fd)) {
    auto rec = judge->record(run_id);
    if (!rec) return;
    // The log's events of the run's attempts after `last`, in seq order.
    std::map<uint64_t, std::string> out;
    for (const auto& attempt : rec->attempts) {
      Status s = log.read_stream(attempt::stream_of(attempt), last + 1, [&](const EventView& e) {
        if (auto v = app::judge_event_json(e)) out.emplace(e.seq, std::move(*v));
        return true;
      });
      if (!s.is_ok()) return;
    }
    for (const auto& [seq, body] : out) {
      if (!send_event(fd, body)) return;
      last = seq;
    }
    if (rec->version != version) {
      version = rec->version;
      auto j = judge->run_json(run_id);
      // The run's state as of the last log event sent: its seq is the resume point (an SSE id),
      // so a client resuming from it gets the state again and only the events after it.
      if (j &&
          !send_event(
              fd, JsonWriter().num("seq", last).str("type", "judge.run").raw("data", *j).done())) {
        return;
      }
    }
    if (!out.empty()) quiet_since = std::chrono::steady_clock::now();
    if ((rec->state == "done" || rec->state == "failed") && out.empty()) return;
    judge->wait_change(run_id, version, 1s);
    if (std::chrono::steady_clock::now() - quiet_since >= kKeepAlive) {
      if (!rpc::write_frame(fd, rpc::Kind::kKeepAlive, "", kWrite).is_ok()) return;
      quiet_since = std::chrono::steady_clock::now();
    }
  }
}

}  // namespace aura::daemon
