// The front's way to the engine daemon: an asynchronous client of the daemon socket
// (docs/formats/daemon-protocol.md) on Asio, with the frames of app/rpc. Calls never block a
// server thread (an attempt's start builds a world for minutes; an event stream stays open for
// hours), a bounded number run at once (the daemon serves 128 connections) and idle
// connections are kept for reuse. Each of the server's event loops has its own (a loop is one
// thread): its connections are used only from that loop's coroutines.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <chrono>
#include <deque>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "app/rpc/frame.h"
#include "app/rpc/message.h"
#include "engine/common/status.h"

namespace aura::serve {

namespace asio = boost::asio;

// One connection to the daemon (a socket and when it was last used).
struct DaemonConnection;
// The link's pipelined connection (quick operations' requests written without waiting).
struct Pipe;

// An open event stream: the daemon's frames after its first reply. Holds a stream slot until
// destroyed.
class DaemonStream {
 public:
  DaemonStream(std::unique_ptr<DaemonConnection> c, std::atomic<size_t>* slots);
  ~DaemonStream();
  DaemonStream(const DaemonStream&) = delete;
  DaemonStream& operator=(const DaemonStream&) = delete;

  // The next frame (an event or a keep-alive); nullopt when the daemon ended the stream. An
  // error (a bad frame, silence past `timeout`) ends the stream too.
  asio::awaitable<Result<std::optional<rpc::Frame>>> next(std::chrono::milliseconds timeout);
  // Ends the stream now (the client went away).
  void close();

 private:
  std::unique_ptr<DaemonConnection> conn_;
  std::atomic<size_t>* slots_;
};

struct DaemonLinkOptions {
  std::filesystem::path socket;
  uid_t daemon_uid = 0;  // the peer must be this uid (root; a test's double runs as the test)
  size_t max_calls = 64;
  size_t max_streams = 48;
  size_t max_idle = 16;
  std::chrono::milliseconds idle_reuse{60'000};
  // Quick operations (rpc::is_quick_op) waiting on the pipelined connection at most; past it
  // a call takes a connection of its own.
  size_t max_pipelined = 256;
  std::filesystem::path socket_label;  // how messages name the socket (empty: socket)
};

class DaemonLink {
 public:
  // `streams` counts the open event streams of every link of the server (max_streams is their
  // sum's cap); null: this link counts its own.
  DaemonLink(asio::any_io_executor ex, DaemonLinkOptions options,
             std::atomic<size_t>* streams = nullptr);
  ~DaemonLink();

  // One request and its reply. A quick operation (rpc::is_quick_op) goes on the link's
  // pipelined connection: its request is written at once, behind the others' and often in the
  // same write, and the daemon answers them in order (docs/formats/daemon-protocol.md). Any
  // other waits for a call slot and has a connection to itself. kUnavailable when no daemon
  // answers (nothing listens, it closed, it timed out); kCorruption for a reply that breaks the
  // protocol. An error reply is a Reply with error set. Called from the link's executor only.
  asio::awaitable<Result<rpc::Reply>> call(rpc::Request request, std::chrono::milliseconds timeout);

  struct Opened {
    rpc::Reply reply;                      // the daemon's first answer
    std::unique_ptr<DaemonStream> stream;  // null when the reply is an error
  };
  // A stream operation (attempt.events, judge.events). kBusy when every stream slot is taken.
  asio::awaitable<Result<Opened>> open_stream(rpc::Request request,
                                              std::chrono::milliseconds timeout);

  asio::any_io_executor executor() const { return ex_; }

 private:
  asio::awaitable<Result<std::unique_ptr<DaemonConnection>>> connect();
  // One exchange on `c`. `*retry` is set when the request never reached the daemon on a reused
  // connection (it had closed it while idle).
  asio::awaitable<Result<rpc::Reply>> exchange(DaemonConnection& c, const rpc::Request& request,
                                               std::chrono::milliseconds timeout, bool* retry);
  std::unique_ptr<DaemonConnection> take_idle();
  void give_back(std::unique_ptr<DaemonConnection> c);
  // A call on a connection of its own (a call slot held throughout).
  asio::awaitable<Result<rpc::Reply>> call_alone(const rpc::Request& request,
                                                 std::chrono::milliseconds timeout);
  // A quick operation's call on the pipelined connection; nullopt when it should go alone
  // instead (the pipe is full, or it failed on the way).
  asio::awaitable<std::optional<Result<rpc::Reply>>> call_pipelined(
      const rpc::Request& request, std::chrono::milliseconds timeout);

  asio::any_io_executor ex_;
  DaemonLinkOptions options_;
  // A counting semaphore: a call puts a token in (waits while it is full) and takes it out.
  asio::experimental::concurrent_channel<void(boost::system::error_code)> call_slots_;
  std::atomic<size_t> own_streams_{0};
  std::atomic<size_t>* streams_;
  std::mutex mu_;
  std::vector<std::unique_ptr<DaemonConnection>> idle_;
  // Connects `p` and starts its writer and reader; ends it with the error when that fails.
  asio::awaitable<void> connect_pipe(std::shared_ptr<Pipe> p);
  // Starts p's writer and reader where they are not running and it has calls.
  void start_pipe(const std::shared_ptr<Pipe>& p);
  std::shared_ptr<Pipe> pipe_;  // touched on the link's executor only
};

}  // namespace aura::serve
