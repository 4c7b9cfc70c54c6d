// The daemon's insides, shared by its server (daemon.cc) and its operations (ops.cc).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <semaphore>
#include <set>
#include <string>
#include <thread>

#include "app/daemon/daemon.h"
#include "app/daemon/gate_pool.h"
#include "app/daemon/judge_queue.h"
#include "app/daemon/live_attempts.h"
#include "app/daemon/metrics.h"
#include "app/lab/access.h"
#include "app/lab/session.h"
#include "app/rpc/message.h"
#include "engine/common/line_batcher.h"
#include "engine/json/json_reader.h"
#include "projections/lab/lab_projections.h"

namespace aura::daemon {

// The last chain verification the daemon ran (at start and on operator.verify).
struct LastVerify {
  std::string at;  // RFC 3339, UTC
  bool ok = false;
  uint64_t events = 0;
  std::string detail;
};

struct Daemon::Impl {
  Options opt;
  LogLine log;
  std::string started_at;
  std::unique_ptr<app::Session> session;
  std::unique_ptr<app::AttemptCache> attempts;  // learners' reads: access and state, folded once
  std::unique_ptr<attempt::AttemptEngine> judge_engine;
  std::unique_ptr<JudgeQueue> judge;
  std::unique_ptr<GatePool> gates;     // learners' transfer gates (gate_pool.h)
  std::unique_ptr<LiveAttempts> live;  // learners' live attempts, bounded (live_attempts.h)
  // Ends live attempts idle past the limit, every 30 s until the daemon goes.
  std::thread expiry;
  std::mutex expiry_mu;
  std::condition_variable expiry_cv;
  bool expiry_stop = false;
  void expire_idle();
  Metrics metrics;

  std::mutex proj_mu;  // the projections' one SQLite connection
  std::unique_ptr<lab::LabProjections> projections;

  std::mutex verify_mu;
  LastVerify last_verify;
  // Receipts verified by replay at once (each reads the log): the rest wait their turn, so a
  // flood holds the memory of two.
  std::counting_semaphore<64> replay_slots{2};

  // Bytes of large requests (over 64 KiB) being parsed and handled now (each is copied several
  // times on the way), and released since memory was last handed back to the system. A large
  // request waits for room; a small one is neither held back nor counted.
  std::mutex request_mu;
  std::condition_variable request_cv;
  size_t requests_held = 0;
  size_t released_since_trim = 0;
  void hold_request(size_t bytes);
  void release_request(size_t bytes);
  // Hands freed memory back when no request is under way and some was released since.
  void trim_if_idle();

  // The server.
  int listen_fd = -1;
  std::optional<uid_t> front_uid;
  std::atomic<bool> stopping{false};
  std::mutex conn_mu;
  std::condition_variable conn_cv;
  std::set<int> connections;

  // One request, answered (stream ops are not handled here).
  rpc::Reply handle(const rpc::Request& r);
  // Stream ops: the reply, then events until the peer leaves or the daemon stops.
  void stream(int fd, const rpc::Request& r);
  static bool is_stream_op(std::string_view op);

  void connection(int fd, bool peer_is_root);
  void verify_chain();
  // The log as it stands now, read-only and still while appends go on: what verification and
  // receipt replay read.
  Result<std::unique_ptr<EventLog>> still_view() const;
  // The projections caught up with the log, under proj_mu (held by the caller).
  Status catch_up_locked();
  // A line of another kind than a request's: written at once, after the waiting request lines.
  void log_line(const std::string& json) {
    if (!log) return;
    if (requests_log) requests_log->flush();
    log(json);
  }
  // A request's line: written in a batch (within 200 ms), like the front's request log.
  std::unique_ptr<LineBatcher> requests_log;
};

// Reads an op's args strictly (their object), naming "args" in paths.
struct Args {
  explicit Args(json::Limits limits) : reader(std::move(limits)) {}
  json::Reader reader;
  json::Object obj;
  static Result<std::unique_ptr<Args>> parse(const std::string& args_json);
};

std::string now_rfc3339();

}  // namespace aura::daemon
