#include "tests/serve/daemon_double.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "app/rpc/frame.h"
#include "engine/common/json_writer.h"

namespace aura::testing {

DaemonDouble::DaemonDouble(std::filesystem::path socket) : socket_(std::move(socket)) {
  handler_ = &DaemonDouble::default_answer;
  std::error_code ec;
  std::filesystem::remove(socket_, ec);
  listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string p = socket_.string();
  if (listen_fd_ < 0 || p.size() >= sizeof addr.sun_path) throw std::runtime_error("socket");
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(listen_fd_, 256) != 0) {
    throw std::runtime_error("bind " + p + ": " + std::strerror(errno));
  }
  ::chmod(p.c_str(), 0666);
  acceptor_ = std::thread([this] { accept_loop(); });
}

DaemonDouble::~DaemonDouble() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
  }
  ::shutdown(listen_fd_, SHUT_RDWR);
  acceptor_.join();
  ::close(listen_fd_);
  for (auto& t : threads_) t.join();
  std::error_code ec;
  std::filesystem::remove(socket_, ec);
}

DoubleAnswer DaemonDouble::default_answer(const rpc::Request& r) {
  DoubleAnswer a;
  if (r.op == "health") {
    a.body = R"({"status":"ok","daemon":{"pid":1,"version":"double"},"log_head":0})";
  } else if (r.op == "metrics") {
    a.body = R"({"text":"aura_daemon_double 1\n","content_type":"text/plain"})";
  } else {
    a.body = JsonWriter().str("op", r.op).raw("args", r.args_json).done();
  }
  return a;
}

void DaemonDouble::set_handler(Handler h) {
  std::lock_guard lock(mu_);
  handler_ = std::move(h);
}

std::vector<rpc::Request> DaemonDouble::seen() const {
  std::lock_guard lock(mu_);
  return seen_;
}

std::optional<rpc::Request> DaemonDouble::last(const std::string& op) const {
  std::lock_guard lock(mu_);
  for (auto it = seen_.rbegin(); it != seen_.rend(); ++it) {
    if (it->op == op) return *it;
  }
  return std::nullopt;
}

void DaemonDouble::clear() {
  std::lock_guard lock(mu_);
  seen_.clear();
}

size_t DaemonDouble::connections() const {
  std::lock_guard lock(mu_);
  return connections_;
}

size_t DaemonDouble::max_open() const {
  std::lock_guard lock(mu_);
  return max_open_;
}

void DaemonDouble::accept_loop() {
  for (;;) {
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    std::lock_guard lock(mu_);
    if (fd < 0 || stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    ++connections_;
    open_fds_.push_back(fd);
    max_open_ = std::max(max_open_, open_fds_.size());
    threads_.emplace_back([this, fd] { serve(fd); });
  }
}

void DaemonDouble::serve(int fd) {
  using namespace std::chrono_literals;
  for (;;) {
    auto f = rpc::read_frame(fd, 120s, 30s);
    if (!f.ok() || !f->has_value()) break;
    std::string id_seen;
    auto req = rpc::parse_request((*f)->body, &id_seen);
    rpc::Reply reply;
    DoubleAnswer answer;
    if (!req.ok()) {
      reply.request_id = id_seen;
      reply.status = 400;
      reply.error = rpc::api_error(400, "malformed", req.status().message());
    } else {
      Handler h;
      {
        std::lock_guard lock(mu_);
        seen_.push_back(*req);
        h = handler_;
      }
      answer = h(*req);
      if (answer.delay.count() > 0) std::this_thread::sleep_for(answer.delay);
      if (answer.close) break;
      reply.request_id = req->request_id;
      reply.status = answer.status;
      if (answer.status >= 400) {
        reply.error = answer.error ? *answer.error : rpc::api_error(answer.status, "refused", "");
        reply.error->status = answer.status;
      } else {
        reply.body_json = answer.body;
      }
    }
    if (!rpc::write_frame(fd, rpc::Kind::kReply, reply.encode(), 5s).is_ok()) break;
    if (!req.ok()) break;
    const bool stream = req->op == "attempt.events" || req->op == "judge.events";
    if (!stream) continue;
    if (answer.status < 400) {
      for (const auto& e : answer.events) {
        auto kind = e.empty() ? rpc::Kind::kKeepAlive : rpc::Kind::kEvent;
        if (!rpc::write_frame(fd, kind, e, 5s).is_ok()) break;
      }
      if (answer.hold_open) {
        // Until the front closes its end.
        char b;
        while (::recv(fd, &b, 1, 0) > 0) {
        }
      }
    }
    break;
  }
  std::lock_guard lock(mu_);
  ::close(fd);
  std::erase(open_fds_, fd);
}

}  // namespace aura::testing
