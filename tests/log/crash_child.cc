// crash_child: the process the log crash test kills with SIGKILL. It appends to the event log at
// DB_DIR from several threads until killed and, after each append returns, writes one
// acknowledgement line "seq hash_hex\n" to stdout with write(2), so no acknowledgement waits in a
// user-space buffer: a line the parent reads is an event the log promised was durable.
//
// Usage: crash_child DB_DIR [--threads N] [--torn-line-after N]
//   --torn-line-after N: after N complete lines, write only the first half of the next one and
//   stop reporting (the appends it blocks go unacknowledged), so the parent can prove that a torn
//   line is not taken as an acknowledgement.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "tests/log/log_test_util.h"

namespace {

// Checkpoints every 50 events, so the crash rounds also cut between and inside checkpoint groups.
constexpr uint64_t kCheckpointEvery = 50;
constexpr int kDefaultThreads = 8;

[[noreturn]] void die(int code, const std::string& what) {
  std::fprintf(stderr, "crash_child: %s\n", what.c_str());
  std::_Exit(code);
}

void write_all(std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(STDOUT_FILENO, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) die(3, std::string("write stdout: ") + std::strerror(errno));
    bytes.remove_prefix(size_t(n));
  }
}

uint64_t parse_count(std::string_view s, const char* flag) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) {
    die(2, std::string(flag) + ": not a number: " + std::string(s));
  }
  return v;
}

// Serialises the acknowledgement lines of all appender threads.
class Reporter {
 public:
  explicit Reporter(uint64_t torn_after) : torn_after_(torn_after) {}

  void acknowledge(const aura::Appended& a) {
    std::string line = std::to_string(a.seq) + " " + aura::to_hex(a.hash) + "\n";
    std::lock_guard l(mu_);
    if (torn_after_ > 0 && lines_ == torn_after_) {
      write_all(std::string_view(line).substr(0, line.size() / 2));
      // Hold the lock until killed: the line stays torn and nothing more is reported.
      for (;;) ::pause();
    }
    // Two writes, so a kill can also land inside a line in an ordinary run.
    const size_t split = line.find(' ') + 1;
    write_all(std::string_view(line).substr(0, split));
    write_all(std::string_view(line).substr(split));
    ++lines_;
  }

 private:
  std::mutex mu_;
  const uint64_t torn_after_;
  uint64_t lines_ = 0;  // guarded by mu_
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) die(2, "usage: crash_child DB_DIR [--threads N] [--torn-line-after N]");
  const std::string dir = argv[1];
  int threads = kDefaultThreads;
  uint64_t torn_after = 0;
  for (int i = 2; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) die(2, std::string(flag) + ": missing value");
    if (flag == "--threads") {
      threads = int(parse_count(argv[++i], "--threads"));
    } else if (flag == "--torn-line-after") {
      torn_after = parse_count(argv[++i], "--torn-line-after");
    } else {
      die(2, "unknown flag " + std::string(flag));
    }
  }
  if (threads < 1) die(2, "--threads must be at least 1");

  std::unique_ptr<aura::EventLog> log;
  try {
    log = aura::testing::open_log(dir, kCheckpointEvery);
  } catch (const std::exception& e) {
    die(1, std::string("open: ") + e.what());
  }

  Reporter reporter(torn_after);
  std::atomic<uint64_t> next{1};
  std::vector<std::thread> appenders;
  for (int t = 0; t < threads; ++t) {
    appenders.emplace_back([&] {
      for (;;) {
        auto r = log->append(aura::testing::sample(next.fetch_add(1)));
        if (!r.ok()) die(1, r.status().message());
        reporter.acknowledge(*r);
      }
    });
  }
  for (auto& t : appenders) t.join();  // never: the parent kills the process
  return 0;
}
