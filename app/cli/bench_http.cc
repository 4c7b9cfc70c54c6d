// The benches' lab behind `aura serve` and their HTTP client (bench_http.h).
#include "app/cli/bench_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>
#include <utility>

#include "engine/json/json_reader.h"

namespace aura::cli {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// The front closes a keep-alive connection 10 s after its last answer (docs/SERVE.md,
// "Limits"): a client idle for longer connects afresh rather than race that close.
constexpr auto kIdleReconnect = std::chrono::seconds(5);
// How long a first use may take to set the lab up before the bench gives up.
constexpr int kHealthPolls = 1200;  // of 100 ms
constexpr auto kHealthPoll = std::chrono::milliseconds(100);

}  // namespace

int connect_loopback(uint16_t port, uint32_t source) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (source != 0) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl(source);
    if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int http(int fd, const std::string& request, std::string* body, bool* close) {
  size_t sent = 0;
  while (sent < request.size()) {
    ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return -1;
    sent += size_t(n);
  }
  std::string in;
  char buf[16384];
  size_t header_end = std::string::npos;
  while ((header_end = in.find("\r\n\r\n")) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    in.append(buf, size_t(n));
  }
  int status = std::atoi(in.c_str() + 9);
  std::string head = in.substr(0, header_end);
  for (char& c : head) c = char(std::tolower(static_cast<unsigned char>(c)));
  size_t cl = head.find("content-length:");
  size_t length = cl == std::string::npos ? 0 : std::strtoull(head.c_str() + cl + 15, nullptr, 10);
  while (in.size() < header_end + 4 + length) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return -1;
    in.append(buf, size_t(n));
  }
  if (body) *body = in.substr(header_end + 4, length);
  if (close) *close = head.find("\r\nconnection: close") != std::string::npos;
  return status;
}

pid_t spawn(const std::vector<std::string>& argv, const fs::path& cwd, const fs::path& log) {
  pid_t pid = ::fork();
  if (pid != 0) return pid;
  if (::chdir(cwd.c_str()) != 0) ::_exit(126);
  FILE* f = std::freopen(log.c_str(), "w", stderr);
  (void)f;
  if (!std::freopen("/dev/null", "w", stdout)) ::_exit(126);
  std::vector<char*> a;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  ::execv(a[0], a.data());
  ::_exit(127);
}

uint16_t free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

std::string member_of(const std::string& body, std::string_view name) {
  json::Reader r;
  auto o = r.parse_object(body);
  if (!o.ok()) return "";
  auto s = o->optional_string(name);
  return s.ok() && *s ? std::string(**s) : "";
}

// ---- LabClient ----

LabClient::LabClient(uint16_t port, uint32_t source)
    : port_(port),
      source_(source),
      host_("Host: 127.0.0.1:" + std::to_string(port) + "\r\n"),
      origin_("Origin: http://127.0.0.1:" + std::to_string(port) + "\r\n") {}

LabClient::~LabClient() {
  if (fd_ >= 0) ::close(fd_);
}

HttpAnswer LabClient::get(const std::string& path, const std::string& token) {
  std::string req = "GET " + path + " HTTP/1.1\r\n" + host_;
  if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
  return exchange(req + "\r\n", true);
}

HttpAnswer LabClient::post(const std::string& path, const std::string& json,
                           const std::string& token) {
  std::string req = "POST " + path + " HTTP/1.1\r\n" + host_ + origin_;
  if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
  req += "Content-Type: application/json\r\nContent-Length: " + std::to_string(json.size()) +
         "\r\n\r\n" + json;
  // A command is never sent twice: a transport failure is its answer.
  return exchange(req, false);
}

HttpAnswer LabClient::exchange(const std::string& request, bool retry) {
  HttpAnswer a;
  for (int attempt = 0; attempt < (retry ? 2 : 1); ++attempt) {
    if (fd_ >= 0 && Clock::now() - last_used_ > kIdleReconnect) {
      ::close(fd_);
      fd_ = -1;
    }
    const auto began = Clock::now();
    if (fd_ < 0) fd_ = connect_loopback(port_, source_);
    if (fd_ < 0) continue;
    bool close = false;
    a.status = http(fd_, request, &a.body, &close);
    a.ms = std::chrono::duration<double, std::milli>(Clock::now() - began).count();
    last_used_ = Clock::now();
    if (a.status < 0 || close) {
      ::close(fd_);
      fd_ = -1;
    }
    if (a.status >= 0) break;
  }
  return a;
}

// ---- BenchLab ----

BenchLab::BenchLab(std::string command, fs::path root, bool kept)
    : command_(std::move(command)), root_(std::move(root)), kept_(kept) {}

BenchLab::~BenchLab() {
  if (!finished_) finish(false);
}

Status BenchLab::start(const fs::path& scenarios) {
  std::error_code ec;
  // The front drops to its own user; nginx (bench serve's peer) runs as another: both pass
  // through the folder.
  fs::permissions(root_, fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec, ec);
  fs::copy(scenarios, root_ / "scenarios", fs::copy_options::recursive, ec);
  if (ec) return Status::io("copy the bundled scenarios: " + ec.message());
  port_ = free_port();
  std::cout << "starting aura serve on 127.0.0.1:" << port_ << " (a fresh lab in " << root_.string()
            << "; first use sets it up)" << std::endl;
  serve_ = spawn({fs::read_symlink("/proc/self/exe").string(), "serve", "--data",
                  (root_ / "data").string(), "--keys", (root_ / "keys").string(), "--scenarios",
                  (root_ / "scenarios").string(), "--port", std::to_string(port_)},
                 root_, root_ / "serve.log");
  if (serve_ < 0) {
    serve_ = 0;
    return Status::io("fork aura serve");
  }
  LabClient probe(port_);
  for (int i = 0; i < kHealthPolls; ++i) {
    if (probe.get("/api/v1/health").status == 200) return Status::ok();
    if (::waitpid(serve_, nullptr, WNOHANG) == serve_) {
      serve_ = 0;
      return Status::unavailable("aura serve exited; see " + (root_ / "serve.log").string());
    }
    std::this_thread::sleep_for(kHealthPoll);
  }
  return Status::unavailable("aura serve did not answer; see " + (root_ / "serve.log").string());
}

void BenchLab::stop_serve() {
  if (serve_ <= 0) return;
  ::kill(serve_, SIGTERM);
  ::waitpid(serve_, nullptr, 0);
  serve_ = 0;
}

void BenchLab::finish(bool ok) {
  finished_ = true;
  stop_serve();
  if (kept_) {
    std::cerr << "aura " << command_ << ": the lab is kept in " << root_.string() << "\n";
    return;
  }
  std::error_code ec;
  const bool keep_log = !ok && fs::exists(root_ / "serve.log", ec);
  for (const auto& e : fs::directory_iterator(root_, ec)) {
    if (!(keep_log && e.path().filename() == "serve.log")) fs::remove_all(e.path(), ec);
  }
  if (!keep_log) {
    fs::remove_all(root_, ec);
  } else {
    std::cerr << "aura " << command_ << ": the front's log is kept in "
              << (root_ / "serve.log").string() << "; nothing else of the lab is left\n";
  }
}

}  // namespace aura::cli
