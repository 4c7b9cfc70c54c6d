#include "app/daemon/daemon.h"

#include <grp.h>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "app/daemon/daemon_impl.h"
#include "app/lab/front_user.h"
#include "app/lab/scenario_registry.h"
#include "app/rpc/client.h"
#include "app/rpc/frame.h"
#include "engine/common/json_writer.h"
#include "engine/common/memory.h"
#include "engine/log/log_verifier.h"

namespace aura::daemon {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

constexpr auto kIdle = 120s;                        // between requests
constexpr auto kWholeFrame = 30s;                   // once a frame has begun
constexpr size_t kMaxBatch = 64;                    // replies written together at most
constexpr size_t kMaxBatchBytes = size_t(1) << 20;  // and their bytes, before a write
// The gate pool (gate_pool.h): one gate per core, as many as the memory available holds at
// kGateBytes each (an O1 gate builds up to four four-node worlds at once: an estimate, O1's
// worlds not yet measured; an O2 gate's one-node worlds measure about 10 MiB each, a t0 world
// no process: docs/PERFORMANCE.md, "Many learners"); 64 waiting, 2 per client.
constexpr uint64_t kGateBytes = uint64_t(2) << 30;
constexpr size_t kGateQueueLimit = 64;
constexpr size_t kGatesPerLearner = 2;
// Live attempts (live_attempts.h): a bound on a live world's memory and open files (an O2 world
// measures about 10 MiB of PSS idle; the bound leaves room for what a learner's actions start),
// so the machine's memory and the daemon's file limit hold every one the limit admits; idle
// ones are ended after kLiveIdle.
constexpr uint64_t kLiveWorldBytes = uint64_t(256) << 20;
constexpr uint64_t kLiveWorldFiles = 16;
constexpr size_t kLivePerClient = 3;
constexpr auto kLiveIdle = std::chrono::minutes(30);
constexpr auto kExpiryEvery = std::chrono::seconds(30);
// Request bytes released after which the daemon hands freed memory back to the system; the
// bytes of large requests (over kSmallRequestBytes) parsed and handled at once.
constexpr size_t kTrimAfterBytes = size_t(16) << 20;
constexpr size_t kSmallRequestBytes = size_t(64) << 10;
constexpr size_t kRequestBytesBudget = size_t(8) << 20;

// The daemon holds a descriptor or more per live world and per connection: its soft limit is
// raised to the hard one. Returns the limit in force.
// The CPU priority of work (commands that build, probe or change worlds; gates): below the
// reads'.
constexpr int kWorkNice = 10;

uint64_t raise_open_files_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 1024;
  if (r.rlim_cur < r.rlim_max) {
    rlimit want = r;
    want.rlim_cur = r.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &want) == 0) r = want;
  }
  return r.rlim_cur == RLIM_INFINITY ? uint64_t(1) << 20 : uint64_t(r.rlim_cur);
}

std::string errno_text(std::string_view what) {
  return std::string(what) + ": " + std::strerror(errno);
}

}  // namespace

std::string now_rfc3339() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

fs::path default_socket(const fs::path& data) {
  return fs::absolute(data).lexically_normal().parent_path() / "run" / "daemon.sock";
}

Result<std::unique_ptr<Args>> Args::parse(const std::string& args_json) {
  json::Limits l;
  l.max_bytes = rpc::kMaxRequestBytes;
  auto a = std::make_unique<Args>(l);
  auto o = a->reader.parse_object(args_json);
  if (!o.ok()) return o.status();
  a->obj = std::move(o).value();
  return a;
}

Daemon::Daemon(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Daemon::~Daemon() {
  stop();
  {
    std::lock_guard lock(impl_->expiry_mu);
    impl_->expiry_stop = true;
  }
  impl_->expiry_cv.notify_all();
  if (impl_->expiry.joinable()) impl_->expiry.join();
  if (impl_->judge) impl_->judge->stop();
  // Gates waiting are dropped (their attempts stay in transfer_gate: run the gate again); the
  // running ones end first.
  if (impl_->gates) impl_->gates->stop();
  if (impl_->listen_fd >= 0) {
    ::close(impl_->listen_fd);
    std::error_code ec;
    fs::remove(impl_->opt.socket, ec);
  }
}

Result<std::unique_ptr<Daemon>> Daemon::open(const Options& options, LogLine log) {
  auto impl = std::make_unique<Impl>();
  impl->opt = options;
  impl->log = std::move(log);
  if (impl->log) {
    // The sink takes whole lines; the daemon's log callback takes one text without its '\n'.
    impl->requests_log = std::make_unique<LineBatcher>([&l = impl->log](std::string_view lines) {
      l(std::string(lines.substr(0, lines.size() - 1)));
    });
  }
  impl->started_at = now_rfc3339();
  Impl& d = *impl;
  AURA_RETURN_IF_ERROR(app::check_folders(d.opt.folders));

  // Another daemon already serving this socket is not replaced; a stale socket file is.
  if (fs::exists(d.opt.socket)) {
    if (rpc::Client::connect(d.opt.socket).ok()) {
      return Status::busy("a daemon already serves " + d.opt.socket.string());
    }
  }
  if (app::is_first_use(d.opt.folders)) {
    d.log_line(JsonWriter().str("event", "setup").str("data", d.opt.folders.data.string()).done());
    auto dirs = app::setup_package_dirs(d.opt.folders, d.opt.scenarios);
    if (!dirs.ok()) return dirs.status().with_context("bundled scenarios");
    auto report = app::setup(d.opt.folders, *dirs, [&](const std::string& line) {
      d.log_line(JsonWriter().str("event", "setup").str("line", line).done());
    });
    if (!report.ok()) return report.status().with_context("setting the lab up");
  }
  auto session = app::open_session(
      d.opt.folders, {.build_digest = app::lab_build_digest(), .persist_live_worlds = false});
  if (!session.ok()) return session.status();
  d.session = std::move(session).value();
  d.judge_engine = d.session->new_engine();
  d.gates = std::make_unique<GatePool>(GatePool::workers_for_machine(kGateBytes), kGateQueueLimit,
                                       kGatesPerLearner);
  d.attempts = std::make_unique<app::AttemptCache>(*d.session->writer.log);
  const uint64_t open_files = raise_open_files_limit();
  LiveLimits live;
  live.per_client = kLivePerClient;
  live.total = LiveAttempts::total_for_machine(kLiveWorldBytes, open_files, kLiveWorldFiles);
  live.idle = std::chrono::duration_cast<std::chrono::seconds>(kLiveIdle);
  if (d.opt.live_idle.count() > 0) live.idle = d.opt.live_idle;
  d.live = std::make_unique<LiveAttempts>(live);
  d.log_line(JsonWriter()
                 .str("event", "limits")
                 .num("open_files", int64_t(open_files))
                 .num("live_attempts", int64_t(live.total))
                 .num("live_attempts_per_client", int64_t(live.per_client))
                 .num("live_idle_s", int64_t(live.idle.count()))
                 .num("gate_workers", int64_t(d.gates->workers()))
                 .done());
  auto proj = lab::LabProjections::open(*d.session->writer.log,
                                        lab::LabProjections::file_in(d.opt.folders.data));
  if (!proj.ok()) return proj.status().with_context("projections");
  d.projections = std::move(proj).value();
  {
    std::lock_guard lock(d.proj_mu);
    AURA_RETURN_IF_ERROR(d.catch_up_locked());
  }
  d.judge = std::make_unique<JudgeQueue>(
      [&d](const app::JudgeRequest& req, const app::JudgeProgress& progress) {
        auto started = std::chrono::steady_clock::now();
        app::JudgeProgress p = progress;
        auto case_done = progress.case_done;
        p.case_done = [&d, case_done](const app::JudgeCaseRun& c) {
          d.metrics.gate(c.gate_seconds);
          if (case_done) case_done(c);
        };
        auto r = app::judge(*d.judge_engine, req, p);
        d.log_line(JsonWriter()
                       .str("event", "judge")
                       .str("scenario", req.scenario)
                       .boolean("ok", r.ok())
                       .real("seconds", std::chrono::duration<double>(
                                            std::chrono::steady_clock::now() - started)
                                            .count())
                       .done());
        return r;
      },
      d.opt.judge_queue_limit, d.opt.receipts_dir);

  // The front's uid: the only non-root peer served (its user made when missing).
  if (Status s = app::ensure_front_user(d.opt.front_user); !s.is_ok()) {
    d.log_line(JsonWriter().str("event", "warning").str("what", s.message()).done());
  }
  if (const passwd* pw = ::getpwnam(d.opt.front_user.c_str())) {
    d.front_uid = pw->pw_uid;
  } else {
    d.log_line(JsonWriter()
                   .str("event", "warning")
                   .str("what", "no user " + d.opt.front_user + ": only root peers are served")
                   .done());
  }

  // The socket: its folder 0750 root:<front's group>, the socket 0660.
  fs::path dir = d.opt.socket.parent_path();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Status::io("create " + dir.string() + ": " + ec.message());
  gid_t gid = 0;
  if (d.front_uid) {
    if (const passwd* pw = ::getpwuid(*d.front_uid)) gid = pw->pw_gid;
  }
  if (::chown(dir.c_str(), 0, gid) != 0 || ::chmod(dir.c_str(), 0750) != 0) {
    return Status::io(errno_text("socket folder " + dir.string()));
  }
  fs::remove(d.opt.socket, ec);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string path = d.opt.socket.string();
  if (path.size() >= sizeof addr.sun_path) return Status::invalid("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  d.listen_fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (d.listen_fd < 0) return Status::io(errno_text("socket"));
  mode_t old = ::umask(0117);
  int b = ::bind(d.listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::umask(old);
  if (b != 0) return Status::io(errno_text("bind " + path));
  if (::chown(path.c_str(), 0, gid) != 0 || ::chmod(path.c_str(), 0660) != 0) {
    return Status::io(errno_text("socket " + path));
  }
  if (::listen(d.listen_fd, 256) != 0) return Status::io(errno_text("listen"));
  d.verify_chain();
  d.expiry = std::thread([&d] { d.expire_idle(); });
  d.log_line(JsonWriter()
                 .str("event", "listening")
                 .str("socket", path)
                 .num("pid", int64_t(::getpid()))
                 .num("log_head", d.session->writer.log->head().seq)
                 .done());
  return std::unique_ptr<Daemon>(new Daemon(std::move(impl)));
}

void Daemon::stop() {
  if (impl_->stopping.exchange(true)) return;
  if (impl_->listen_fd >= 0) ::shutdown(impl_->listen_fd, SHUT_RDWR);
  std::lock_guard lock(impl_->conn_mu);
  for (int fd : impl_->connections) ::shutdown(fd, SHUT_RDWR);
}

Status Daemon::serve() {
  Impl& d = *impl_;
  while (!d.stopping) {
    int fd = ::accept4(d.listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (d.stopping) break;
      if (errno == EMFILE || errno == ENFILE) {
        std::this_thread::sleep_for(100ms);
        continue;
      }
      return Status::io(errno_text("accept"));
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
        !(cred.uid == 0 || (d.front_uid && cred.uid == *d.front_uid))) {
      d.log_line(JsonWriter()
                     .str("event", "refused")
                     .str("why", "peer uid not served")
                     .num("uid", int64_t(cred.uid))
                     .done());
      ::close(fd);
      continue;
    }
    {
      std::lock_guard lock(d.conn_mu);
      if (d.connections.size() >= d.opt.max_connections || d.stopping) {
        ::close(fd);
        continue;
      }
      d.connections.insert(fd);
    }
    std::thread([&d, fd, root = cred.uid == 0] {
      d.connection(fd, root);
      std::lock_guard lock(d.conn_mu);
      d.connections.erase(fd);
      ::close(fd);
      d.conn_cv.notify_all();
    }).detach();
  }
  // Wait for the connections to end (each was shut down by stop()).
  std::unique_lock lock(d.conn_mu);
  d.conn_cv.wait(lock, [&] { return d.connections.empty(); });
  return Status::ok();
}

void Daemon::Impl::hold_request(size_t bytes) {
  if (bytes <= kSmallRequestBytes) return;  // a read, a command: never held back, not counted
  std::unique_lock lock(request_mu);
  request_cv.wait(lock, [&] {
    return requests_held == 0 || requests_held + bytes <= kRequestBytesBudget || stopping;
  });
  requests_held += bytes;
}

void Daemon::Impl::release_request(size_t bytes) {
  if (bytes <= kSmallRequestBytes) return;
  bool trim = false;
  {
    std::lock_guard lock(request_mu);
    requests_held -= bytes;
    released_since_trim += bytes;
    // The last request of a burst: glibc keeps what it freed in its arenas unless asked, so a
    // flood of large requests would leave the daemon at its peak.
    if (requests_held == 0 && released_since_trim >= kTrimAfterBytes) {
      released_since_trim = 0;
      trim = true;
    }
  }
  request_cv.notify_all();
  if (trim) release_free_memory();
}

void Daemon::Impl::trim_if_idle() {
  {
    std::lock_guard lock(request_mu);
    if (requests_held != 0 || released_since_trim == 0) return;
    released_since_trim = 0;
  }
  release_free_memory();
}

void Daemon::Impl::expire_idle() {
  std::unique_lock lock(expiry_mu);
  const auto every =
      std::min<std::chrono::steady_clock::duration>(kExpiryEvery, live->limits().idle);
  while (!expiry_cv.wait_for(lock, every, [&] { return expiry_stop; })) {
    lock.unlock();
    attempt::AttemptEngine& e = *session->engine;
    for (const std::string& id : live->expired(e.held_attempts(), SteadyClock::now())) {
      const int64_t secs = live->limits().idle.count();
      Status s = e.expire(
          id, "ended by the lab: no command for " +
                  (secs % 60 == 0 ? std::to_string(secs / 60) + " minutes"
                                  : std::to_string(secs) + " seconds") +
                  ", so its world was freed for other learners; start a new attempt to go on");
      log_line(JsonWriter()
                   .str("event", "expired")
                   .str("attempt", id)
                   .boolean("ok", s.is_ok())
                   .str("detail", s.is_ok() ? "" : s.message())
                   .done());
    }
    trim_if_idle();
    lock.lock();
  }
}

void Daemon::Impl::connection(int fd, bool peer_is_root) {
  rpc::FrameReader frames(fd);
  // Replies not written yet. A client may send requests without waiting for their replies
  // (pipelining); those already there are answered in order and their replies written together.
  std::string out;
  size_t queued = 0;
  // False when the reply cannot be framed: the connection then ends, as no reply would take
  // its place in the order the client counts on.
  auto queue = [&](const std::string& body) {
    auto bytes = rpc::encode_frame(rpc::Kind::kReply, body);
    if (!bytes.ok()) return false;
    out += *bytes;
    ++queued;
    return true;
  };
  auto flush = [&] {
    bool ok = out.empty() || rpc::write_frames(fd, out, kWholeFrame).is_ok();
    out.clear();
    queued = 0;
    return ok;
  };
  while (!stopping) {
    if (!out.empty() && (queued >= kMaxBatch || out.size() >= kMaxBatchBytes || !frames.ready())) {
      if (!flush()) return;
    }
    auto f = frames.next(kIdle, kWholeFrame);
    if (!f.ok() && f.status().code() == ErrorCode::kInvalidArgument) {
      // A header read whole and refused (magic, version, kind, a length over its cap): a 400
      // saying why, then the connection ends (what follows cannot be framed).
      rpc::Reply bad;
      bad.request_id = std::string(16, '0');
      bad.status = 400;
      bad.error = rpc::api_error(400, "malformed", f.status().message());
      (void)queue(bad.encode());
      (void)flush();
      return;
    }
    if (!f.ok() || !f->has_value()) {
      (void)flush();
      return;
    }
    const rpc::Frame& frame = **f;
    std::string seen_id;
    rpc::Reply reply;
    if (frame.kind != rpc::Kind::kRequest) {
      reply.status = 400;
      reply.error = rpc::api_error(400, "malformed", "daemon protocol: expected a request frame");
      (void)queue(reply.encode());
      (void)flush();
      return;
    }
    // Held from here until its reply is queued (a stream: until it begins).
    struct Held {
      Impl& d;
      size_t n;
      void release() {
        if (n) d.release_request(n);
        n = 0;
      }
      ~Held() { release(); }
    } held{*this, frame.body.size()};
    hold_request(held.n);
    auto req = rpc::parse_request(frame.body, &seen_id);
    if (!req.ok()) {
      reply.request_id = seen_id.empty() ? std::string(16, '0') : seen_id;
      reply.error = rpc::api_error(400, "malformed", req.status().message());
      reply.status = 400;
      if (!queue(reply.encode())) break;
      continue;
    }
    req->peer_is_root = peer_is_root;
    if (is_stream_op(req->op)) {
      held.release();
      if (!flush()) return;
      stream(fd, *req);
      return;  // a stream ends its connection
    }
    auto started = std::chrono::steady_clock::now();
    // Work (world builds, probes, actions, checks) runs at a lower CPU priority than the
    // quick reads, which then never wait behind it for a core; the processes it starts
    // inherit it.
    const bool quick = rpc::is_quick_op(req->op);
    if (!quick) set_thread_nice(kWorkNice);
    reply = handle(*req);
    if (!quick) set_thread_nice(0);
    reply.request_id = req->request_id;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    metrics.request(req->op, reply.status, secs);
    JsonWriter line;
    line.str("event", "request")
        .str("request_id", req->request_id)
        .str("op", req->op)
        .num("status", reply.status)
        .real("ms", secs * 1000);
    if (reply.error) line.str("error", reply.error->code);
    if (requests_log) requests_log->add(line.done());
    auto encoded = reply.encode();
    if (encoded.size() > rpc::kMaxReplyBytes) {
      rpc::Reply big;
      big.request_id = req->request_id;
      big.status = 500;
      big.error = rpc::api_error(500, "internal", "the answer is over the reply cap");
      encoded = big.encode();
    }
    if (!queue(encoded)) break;
  }
  (void)flush();
}

Status Daemon::Impl::catch_up_locked() {
  auto r = projections->catch_up_all();
  return r.ok() ? Status::ok() : r.status();
}

Result<std::unique_ptr<EventLog>> Daemon::Impl::still_view() const {
  // A read-only open is a point-in-time view: RocksDB reads what was written when it opened and
  // nothing after, so a check over it never sees half of an append going on meanwhile (the
  // writer's own handle would show a tree node past the head it read a moment before).
  return app::open_reader(opt.folders.data);
}

void Daemon::Impl::verify_chain() {
  VerifyOptions o;
  o.keys = {session->writer.keys->lab_verifier()};
  o.blobs = session->writer.blobs.get();
  o.threads = 1;
  LastVerify v;
  v.at = now_rfc3339();
  auto view = still_view();
  if (!view.ok()) {
    v.detail = "the log could not be opened to verify: " + view.status().message();
    log_line(JsonWriter().str("event", "verify_failed").str("detail", v.detail).done());
    std::lock_guard lock(verify_mu);
    last_verify = v;
    return;
  }
  VerifyReport r = verify_log(**view, o);
  v.ok = r.ok();
  v.events = r.events_checked;
  v.detail = r.ok()
                 ? "the chain, the Merkle tree, the checkpoints and the blobs hold"
                 : "seq " + std::to_string(r.problems.front().seq) + ": " + r.problems.front().what;
  if (!v.ok) {
    log_line(JsonWriter().str("event", "verify_failed").str("detail", v.detail).done());
  }
  std::lock_guard lock(verify_mu);
  last_verify = v;
}

}  // namespace aura::daemon
