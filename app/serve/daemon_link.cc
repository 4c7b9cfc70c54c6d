#include "app/serve/daemon_link.h"

#include <sys/socket.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/error.hpp>

namespace aura::serve {

using boost::system::error_code;
using Clock = std::chrono::steady_clock;
namespace beast = boost::beast;

struct DaemonConnection {
  explicit DaemonConnection(asio::any_io_executor ex) : stream(ex) {}
  // Beast's stream gives each read and write one deadline (its own timer, no extra coroutine).
  beast::basic_stream<asio::local::stream_protocol> stream;
  rpc::FrameBuffer frames;        // bytes read and not yet taken as a frame
  std::unique_ptr<char[]> chunk;  // what one read takes (not zeroed: the read fills it)
  Clock::time_point last_used = Clock::now();
  bool reused = false;
};

namespace {

constexpr auto kNothrow = asio::as_tuple(asio::use_awaitable);
constexpr size_t kReadChunk = 64 * 1024;

Status transport(std::string_view what, const error_code& ec) {
  if (ec == beast::error::timeout)
    return Status::unavailable("daemon " + std::string(what) + ": timed out");
  return Status::unavailable("daemon " + std::string(what) + ": " + ec.message());
}

// Reads more bytes into c.frames (at most one chunk) by `deadline`.
asio::awaitable<error_code> read_more(DaemonConnection& c, Clock::time_point deadline) {
  if (!c.chunk) c.chunk = std::make_unique_for_overwrite<char[]>(kReadChunk);
  c.stream.expires_at(deadline);
  auto [ec, n] =
      co_await c.stream.async_read_some(asio::buffer(c.chunk.get(), kReadChunk), kNothrow);
  c.frames.append(c.chunk.get(), n);
  co_return ec;
}

// One frame: its first byte within `idle`, the rest within 30 s of it (the protocol's rule).
// nullopt: the daemon closed before a frame began. `*began` says whether any byte arrived.
asio::awaitable<Result<std::optional<rpc::Frame>>> read_frame(DaemonConnection& c,
                                                              std::chrono::milliseconds idle,
                                                              bool* began) {
  if (began) *began = !c.frames.empty();
  if (c.frames.empty()) {
    error_code ec = co_await read_more(c, Clock::now() + idle);
    if (ec == asio::error::eof && c.frames.empty()) co_return std::optional<rpc::Frame>();
    if (ec) co_return transport("read", ec);
  }
  if (began) *began = true;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  for (;;) {
    auto f = c.frames.take();
    if (!f.ok()) co_return Status::corruption(f.status().message());
    if (f->has_value()) co_return f;
    if (error_code ec = co_await read_more(c, deadline)) co_return transport("read", ec);
  }
}

}  // namespace

// ---- the pipelined connection ----

// A quick call waiting on the pipe for its reply.
struct PipeCall {
  explicit PipeCall(asio::any_io_executor ex) : wake(ex) {}
  std::string request_id;
  asio::steady_timer wake;  // expires at the call's deadline; cancelled when its answer is in
  std::optional<Result<rpc::Reply>> result;
};

// Requests are written as they come (those queued while a write is under way go together in
// the next), and the daemon's replies are read in the order of `waiting`. Lives while the link
// or one of its two coroutines holds it.
struct Pipe {
  std::unique_ptr<DaemonConnection> conn;  // null while connecting
  std::string out;                         // framed requests not written yet
  std::string sending;                     // those being written
  bool connecting = false, writing = false, reading = false, dead = false;
  bool final = false;  // ended so that its calls are not asked again (a timeout, no daemon)
  std::deque<std::shared_ptr<PipeCall>> waiting;  // sent or queued, in order
  Clock::time_point last_used = Clock::now();
};

namespace {

// Ends the pipe: every call on it gets `why`; the next quick call connects a new one.
void end_pipe(Pipe& p, const Status& why) {
  if (p.dead) return;
  p.dead = true;
  error_code ignored;
  if (p.conn) p.conn->stream.socket().close(ignored);
  for (auto& c : p.waiting) {
    c->result = why;
    c->wake.cancel();
  }
  p.waiting.clear();
}

asio::awaitable<void> pipe_writer(std::shared_ptr<Pipe> p) {
  while (!p->dead && !p->out.empty()) {
    p->sending.swap(p->out);
    p->out.clear();
    auto [ec, n] =
        co_await asio::async_write(p->conn->stream.socket(), asio::buffer(p->sending), kNothrow);
    if (ec) end_pipe(*p, transport("write", ec));
  }
  p->writing = false;
}

asio::awaitable<void> pipe_reader(std::shared_ptr<Pipe> p) {
  DaemonConnection& c = *p->conn;
  if (!c.chunk) c.chunk = std::make_unique_for_overwrite<char[]>(kReadChunk);
  while (!p->dead && !p->waiting.empty()) {
    auto f = c.frames.take();
    if (!f.ok()) {
      end_pipe(*p, Status::corruption(f.status().message()));
      break;
    }
    if (!f->has_value()) {
      // No deadline here: each call has its own, and one that passes ends the pipe.
      auto [ec, n] = co_await c.stream.socket().async_read_some(
          asio::buffer(c.chunk.get(), kReadChunk), kNothrow);
      c.frames.append(c.chunk.get(), n);
      if (ec == asio::error::eof) {
        end_pipe(*p, Status::unavailable("the daemon closed the connection"));
      } else if (ec) {
        end_pipe(*p, transport("read", ec));
      }
      continue;
    }
    Status bad;
    std::optional<rpc::Reply> reply;
    if ((*f)->kind != rpc::Kind::kReply) {
      bad = Status::corruption("daemon protocol: expected a reply, got a " +
                               std::string(rpc::kind_name((*f)->kind)));
    } else if (auto r = rpc::parse_reply((*f)->body); !r.ok()) {
      bad = Status::corruption(r.status().message());
    } else if (r->request_id != p->waiting.front()->request_id) {
      bad = Status::corruption("daemon protocol: the reply answers request " +
                               r->request_id.substr(0, 16) + ", not " +
                               p->waiting.front()->request_id);
    } else {
      reply = std::move(r).value();
    }
    if (!reply) {
      end_pipe(*p, bad);
      break;
    }
    auto call = std::move(p->waiting.front());
    p->waiting.pop_front();
    call->result = std::move(*reply);
    call->wake.cancel();
  }
  p->reading = false;
}

}  // namespace

// ---- DaemonStream ----

DaemonStream::DaemonStream(std::unique_ptr<DaemonConnection> c, std::atomic<size_t>* slots)
    : conn_(std::move(c)), slots_(slots) {}

DaemonStream::~DaemonStream() {
  close();
  if (slots_) --*slots_;
}

void DaemonStream::close() {
  if (!conn_) return;
  error_code ignored;
  conn_->stream.socket().close(ignored);
}

asio::awaitable<Result<std::optional<rpc::Frame>>> DaemonStream::next(
    std::chrono::milliseconds timeout) {
  if (!conn_ || !conn_->stream.socket().is_open()) co_return std::optional<rpc::Frame>();
  auto f = co_await read_frame(*conn_, timeout, nullptr);
  if (!f.ok()) {
    close();
    co_return f;
  }
  if (!f->has_value()) co_return f;
  if ((*f)->kind != rpc::Kind::kEvent && (*f)->kind != rpc::Kind::kKeepAlive) {
    close();
    co_return Status::corruption("daemon protocol: expected a stream event, got a " +
                                 std::string(rpc::kind_name((*f)->kind)));
  }
  co_return f;
}

// ---- DaemonLink ----

DaemonLink::DaemonLink(asio::any_io_executor ex, DaemonLinkOptions options,
                       std::atomic<size_t>* streams)
    : ex_(ex),
      options_(std::move(options)),
      call_slots_(ex, options_.max_calls),
      streams_(streams ? streams : &own_streams_) {}

DaemonLink::~DaemonLink() = default;

asio::awaitable<Result<std::unique_ptr<DaemonConnection>>> DaemonLink::connect() {
  auto c = std::make_unique<DaemonConnection>(ex_);
  const std::string path =
      (options_.socket_label.empty() ? options_.socket : options_.socket_label).string();
  auto [ec] = co_await c->stream.socket().async_connect(
      asio::local::stream_protocol::endpoint(options_.socket.string()), kNothrow);
  if (ec) co_return Status::unavailable("no daemon at " + path + ": " + ec.message());
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(c->stream.socket().native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 ||
      cred.uid != options_.daemon_uid) {
    co_return Status::failed_precondition("the process at " + path +
                                          " is not the lab's daemon (its uid is " +
                                          std::to_string(cred.uid) + ")");
  }
  co_return std::move(c);
}

std::unique_ptr<DaemonConnection> DaemonLink::take_idle() {
  std::lock_guard lock(mu_);
  while (!idle_.empty()) {
    auto c = std::move(idle_.back());
    idle_.pop_back();
    if (Clock::now() - c->last_used < options_.idle_reuse && c->stream.socket().is_open()) {
      c->reused = true;
      return c;
    }
  }
  return nullptr;
}

void DaemonLink::give_back(std::unique_ptr<DaemonConnection> c) {
  c->last_used = Clock::now();
  std::lock_guard lock(mu_);
  if (idle_.size() < options_.max_idle) idle_.push_back(std::move(c));
}

asio::awaitable<Result<rpc::Reply>> DaemonLink::exchange(DaemonConnection& c,
                                                         const rpc::Request& request,
                                                         std::chrono::milliseconds timeout,
                                                         bool* retry) {
  *retry = false;
  auto bytes = rpc::encode_frame(rpc::Kind::kRequest, request.encode());
  if (!bytes.ok()) co_return bytes.status();
  c.stream.expires_after(std::chrono::seconds(30));
  auto [ec, written] = co_await asio::async_write(c.stream, asio::buffer(*bytes), kNothrow);
  if (ec) {
    *retry = c.reused;
    co_return transport("write", ec);
  }
  bool began = false;
  auto f = co_await read_frame(c, timeout, &began);
  if (!f.ok() || !f->has_value()) {
    // A reused connection the daemon had closed while idle ends before any reply byte.
    *retry = c.reused && !began;
    co_return f.ok() ? Status::unavailable("the daemon closed the connection") : f.status();
  }
  if ((*f)->kind != rpc::Kind::kReply) {
    co_return Status::corruption("daemon protocol: expected a reply, got a " +
                                 std::string(rpc::kind_name((*f)->kind)));
  }
  auto r = rpc::parse_reply((*f)->body);
  if (!r.ok()) co_return Status::corruption(r.status().message());
  if (r->request_id != request.request_id) {
    co_return Status::corruption("daemon protocol: the reply answers request " +
                                 r->request_id.substr(0, 16) + ", not " + request.request_id);
  }
  co_return r;
}

asio::awaitable<void> DaemonLink::connect_pipe(std::shared_ptr<Pipe> p) {
  auto c = co_await connect();
  p->connecting = false;
  if (!c.ok()) {
    p->final = true;  // going alone would meet the same refusal
    end_pipe(*p, c.status());
    co_return;
  }
  if (p->dead) co_return;  // every call on it timed out meanwhile
  p->conn = std::move(c).value();
  start_pipe(p);
}

void DaemonLink::start_pipe(const std::shared_ptr<Pipe>& p) {
  if (p->connecting || p->dead || p->waiting.empty()) return;
  // The flags are set here: a spawned coroutine starts only after its spawner yields.
  if (!p->writing) {
    p->writing = true;
    asio::co_spawn(ex_, pipe_writer(p), asio::detached);
  }
  if (!p->reading) {
    p->reading = true;
    asio::co_spawn(ex_, pipe_reader(p), asio::detached);
  }
}

asio::awaitable<std::optional<Result<rpc::Reply>>> DaemonLink::call_pipelined(
    const rpc::Request& request, std::chrono::milliseconds timeout) {
  using Out = std::optional<Result<rpc::Reply>>;
  if (pipe_ && !pipe_->dead && !pipe_->connecting && pipe_->waiting.empty() &&
      Clock::now() - pipe_->last_used >= options_.idle_reuse) {
    // Idle long enough that the daemon may be closing it: a fresh one instead.
    end_pipe(*pipe_, Status::unavailable("idle"));
  }
  if (pipe_ && pipe_->dead) pipe_.reset();
  if (!pipe_) {
    // Calls that come while it connects queue on it and are written once it is there.
    pipe_ = std::make_shared<Pipe>();
    pipe_->connecting = true;
    asio::co_spawn(ex_, connect_pipe(pipe_), asio::detached);
  }
  std::shared_ptr<Pipe> p = pipe_;
  if (p->waiting.size() >= options_.max_pipelined) co_return Out();
  auto bytes = rpc::encode_frame(rpc::Kind::kRequest, request.encode());
  if (!bytes.ok()) co_return Out(bytes.status());
  auto call = std::make_shared<PipeCall>(ex_);
  call->request_id = request.request_id;
  call->wake.expires_after(timeout);
  p->out += *bytes;
  p->waiting.push_back(call);
  p->last_used = Clock::now();
  start_pipe(p);
  (void)co_await call->wake.async_wait(kNothrow);
  if (!call->result) {
    // Past its deadline: the daemon is not answering quick calls, and each behind it waits on
    // the same reply. All of them end, and the next call starts a new connection.
    p->final = true;
    end_pipe(*p, Status::unavailable("daemon read: timed out"));
  }
  // A quick operation only reads: one whose pipe failed on the way (the daemon had closed it,
  // or broke the protocol) goes once more, alone. One the daemon left unanswered, or that
  // could not connect, does not.
  if (call->result->ok() || p->final) co_return std::move(call->result);
  co_return Out();
}

asio::awaitable<Result<rpc::Reply>> DaemonLink::call(rpc::Request request,
                                                     std::chrono::milliseconds timeout) {
  if (rpc::is_quick_op(request.op)) {
    if (auto r = co_await call_pipelined(request, timeout)) co_return std::move(*r);
  }
  co_return co_await call_alone(request, timeout);
}

asio::awaitable<Result<rpc::Reply>> DaemonLink::call_alone(const rpc::Request& request,
                                                           std::chrono::milliseconds timeout) {
  // A call slot; given back however this ends.
  co_await call_slots_.async_send(error_code{}, asio::use_awaitable);
  struct Release {
    decltype(call_slots_)& ch;
    ~Release() {
      ch.try_receive([](error_code) {});
    }
  } release{call_slots_};

  for (int round = 0; round < 2; ++round) {
    std::unique_ptr<DaemonConnection> c = round == 0 ? take_idle() : nullptr;
    if (!c) {
      auto fresh = co_await connect();
      if (!fresh.ok()) co_return fresh.status();
      c = std::move(fresh).value();
    }
    bool retry = false;
    auto r = co_await exchange(*c, request, timeout, &retry);
    if (r.ok()) {
      give_back(std::move(c));
      co_return r;
    }
    if (!retry) co_return r;
  }
  co_return Status::unavailable("the daemon closed the connection");
}

asio::awaitable<Result<DaemonLink::Opened>> DaemonLink::open_stream(
    rpc::Request request, std::chrono::milliseconds timeout) {
  if (++*streams_ > options_.max_streams) {
    --*streams_;
    co_return Status::busy("every event stream slot (" + std::to_string(options_.max_streams) +
                           ") is in use");
  }
  // The slot is the stream's from here; the DaemonStream gives it back.
  auto slot_guard = std::unique_ptr<std::atomic<size_t>, void (*)(std::atomic<size_t>*)>(
      streams_, [](std::atomic<size_t>* s) { --*s; });
  auto c = co_await connect();
  if (!c.ok()) co_return c.status();
  bool retry = false;
  auto r = co_await exchange(**c, request, timeout, &retry);
  if (!r.ok()) co_return r.status();
  Opened o;
  o.reply = std::move(r).value();
  if (!o.reply.error && o.reply.status < 300) {
    slot_guard.release();
    o.stream = std::make_unique<DaemonStream>(std::move(c).value(), streams_);
  }
  co_return o;
}

}  // namespace aura::serve
