// A test double of the engine daemon, for the front's tests: a real Unix socket speaking the
// daemon protocol's frames (app/rpc), recording every request it reads and answering each with
// a canned reply (and, for a stream, canned event frames). It knows no lab: it is there to
// isolate the front. The real daemon's integration tests live with app/daemon.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/rpc/message.h"

namespace aura::testing {

struct DoubleAnswer {
  int status = 200;
  std::string body = "{}";             // when status < 400
  std::optional<rpc::ApiError> error;  // when status >= 400
  // For a stream op: event frame bodies sent after the reply, in order; an empty string sends
  // a keep-alive frame instead. Then the double closes the stream (or waits for the peer's
  // close when hold_open).
  std::vector<std::string> events;
  bool hold_open = false;
  // Do not answer at all before this long has passed (a slow daemon).
  std::chrono::milliseconds delay{0};
  // Close the connection instead of answering (a daemon that went away mid-call).
  bool close = false;
};

class DaemonDouble {
 public:
  using Handler = std::function<DoubleAnswer(const rpc::Request&)>;

  // Listens on `socket` (mode 0666, so a dropped front can reach it) at once.
  explicit DaemonDouble(std::filesystem::path socket);
  ~DaemonDouble();
  DaemonDouble(const DaemonDouble&) = delete;
  DaemonDouble& operator=(const DaemonDouble&) = delete;

  // Replaces the answers. The default: health answers {"status":"ok",...}, metrics
  // {"text":"aura_daemon_double 1\n"}, any other op {"op":OP,"args":ARGS} (its own args).
  void set_handler(Handler h);
  static DoubleAnswer default_answer(const rpc::Request& r);

  // Every request read, in order.
  std::vector<rpc::Request> seen() const;
  // The last request of `op` (nullopt when none).
  std::optional<rpc::Request> last(const std::string& op) const;
  void clear();
  // Connections accepted so far, and the most open at once.
  size_t connections() const;
  size_t max_open() const;

  const std::filesystem::path& socket() const { return socket_; }

 private:
  void accept_loop();
  void serve(int fd);

  std::filesystem::path socket_;
  int listen_fd_ = -1;
  mutable std::mutex mu_;
  Handler handler_;
  std::vector<rpc::Request> seen_;
  std::vector<int> open_fds_;
  size_t connections_ = 0;
  size_t max_open_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace aura::testing
