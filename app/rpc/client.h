// A blocking client of the engine daemon's socket: the CLI's way to a running daemon, and the
// front's (each of its worker threads holds its own connections). Checks the daemon is root
// (SO_PEERCRED) before anything is sent.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "app/rpc/frame.h"
#include "app/rpc/message.h"
#include "engine/common/status.h"

namespace aura::rpc {

class Client {
 public:
  // Connects to `socket_path`; kUnavailable naming the path when nothing listens there.
  static Result<Client> connect(const std::filesystem::path& socket_path);
  Client(Client&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Client& operator=(Client&& o) noexcept;
  ~Client();

  // One request and its reply. `timeout` bounds the wait for the reply (a judge enqueue is
  // quick; an attempt's start builds a world: minutes). A transport failure leaves the client
  // unusable (broken() is true); an error reply is a Reply with error set.
  Result<Reply> call(const Request& request, std::chrono::milliseconds timeout);

  // After a stream op's reply: the next event frame (kEvent or kKeepAlive); nullopt when the
  // daemon closed the stream.
  Result<std::optional<Frame>> next_frame(std::chrono::milliseconds timeout);

  bool broken() const { return fd_ < 0; }
  int fd() const { return fd_; }

 private:
  explicit Client(int fd) : fd_(fd) {}
  void close();
  int fd_ = -1;
};

}  // namespace aura::rpc
