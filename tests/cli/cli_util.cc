#include "tests/cli/cli_util.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace aura::testing {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

struct Pipe {
  int read_fd = -1;
  int write_fd = -1;
};

Pipe make_pipe() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  return {fds[0], fds[1]};
}

// Spawns the binary with stdin from /dev/null, stdout to `out`, stderr to `err`.
pid_t spawn(const std::vector<std::string>& args, const fs::path& cwd, int out, int err) {
  const std::string bin = aura_bin().string();
  std::vector<std::string> argv_strings = {bin};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, err, 2);
  if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, bin.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("posix_spawn " + bin + ": " + std::strerror(rc));
  return pid;
}

void set_status(CliResult& r, int status) {
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    r.signaled = true;
    r.exit_code = 128 + WTERMSIG(status);
  }
}

}  // namespace

std::string CliResult::last_line() const {
  auto all = lines();
  return all.empty() ? std::string() : all.back();
}

std::vector<std::string> CliResult::lines() const {
  std::vector<std::string> out_lines;
  std::istringstream in(out);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out_lines.push_back(line);
  }
  return out_lines;
}

std::string CliResult::describe() const {
  auto clip = [](const std::string& s) {
    return s.size() > 2000 ? s.substr(0, 1000) + "\n…\n" + s.substr(s.size() - 1000) : s;
  };
  return "exit=" + std::to_string(exit_code) + (signaled ? " (signal)" : "") +
         (timed_out ? " (timed out)" : "") + "\n--- stdout ---\n" + clip(out) +
         "\n--- stderr ---\n" + clip(err);
}

fs::path aura_bin() {
  const char* bin = std::getenv("AURA_BIN");
  if (bin == nullptr || *bin == '\0') {
    throw std::runtime_error("AURA_BIN is not set; run through 'meson test cli'");
  }
  return bin;
}

CliResult run_aura(const std::vector<std::string>& args, const CliOptions& options) {
  Pipe out = make_pipe(), err = make_pipe();
  const pid_t pid = spawn(args, options.cwd, out.write_fd, err.write_fd);
  ::close(out.write_fd);
  ::close(err.write_fd);

  CliResult r;
  const auto deadline = Clock::now() + options.timeout;
  pollfd fds[2] = {{out.read_fd, POLLIN, 0}, {err.read_fd, POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) {
      r.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (::poll(fds, 2, int(std::min<int64_t>(left, 1000))) < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, size_t(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  set_status(r, status);
  return r;
}

CliProcess::CliProcess(const std::vector<std::string>& args, Output read) {
  Pipe pipe = make_pipe();
  const int devnull = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  pid_ = read == Output::kStdout ? spawn(args, {}, pipe.write_fd, devnull)
                                 : spawn(args, {}, devnull, pipe.write_fd);
  ::close(devnull);
  ::close(pipe.write_fd);
  fd_ = pipe.read_fd;
}

CliProcess::~CliProcess() {
  kill_now();
  if (fd_ >= 0) ::close(fd_);
}

void CliProcess::kill_now() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

std::optional<std::string> CliProcess::next_line(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    if (auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || fd_ < 0) return std::nullopt;
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, int(left)) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fd_, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd_);
      fd_ = -1;
      return std::nullopt;
    }
    buffer_.append(buf, size_t(n));
  }
}

bool CliProcess::wait_for(std::string_view text, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    auto line =
        next_line(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    if (!line) return false;
    if (line->find(text) != std::string::npos) return true;
  }
  return false;
}

Json::Json(std::string_view text) : parser_(std::make_unique<simdjson::dom::parser>()) {
  simdjson::dom::element e;
  ok_ = !parser_->parse(std::string(text)).get(e) && e.is_object();
  if (ok_) root_ = e;
}

bool Json::has(std::string_view key) const {
  simdjson::dom::element e;
  return ok_ && !root_[key].get(e);
}

bool Json::is_null(std::string_view key) const {
  simdjson::dom::element e;
  return ok_ && !root_[key].get(e) && e.is_null();
}

std::optional<bool> Json::boolean(std::string_view key) const {
  bool v = false;
  if (!ok_ || root_[key].get(v)) return std::nullopt;
  return v;
}

std::optional<uint64_t> Json::u64(std::string_view key) const {
  uint64_t v = 0;
  if (!ok_ || root_[key].get(v)) return std::nullopt;
  return v;
}

std::optional<double> Json::number(std::string_view key) const {
  simdjson::dom::element e;
  if (!ok_ || root_[key].get(e) || !e.is_number()) return std::nullopt;
  double v = 0;
  if (e.get(v)) return std::nullopt;
  return v;
}

std::optional<std::string> Json::str(std::string_view key) const {
  std::string_view v;
  if (!ok_ || root_[key].get(v)) return std::nullopt;
  return std::string(v);
}

Lab::Lab(Keys keys) {
  if (keys == Keys::kInit) {
    CliResult r = run_aura({"keys", "init", "--keys", this->keys().string()});
    REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  }
}

CliResult Lab::aura(std::vector<std::string> args, const CliOptions& options) const {
  args.insert(args.end(), {"--data", data().string(), "--keys", keys().string()});
  return run_aura(args, options);
}

CliResult Lab::ok(std::vector<std::string> args, const CliOptions& options) const {
  CliResult r = aura(std::move(args), options);
  REQUIRE_MESSAGE((r.exit_code == 0 && !r.timed_out), r.describe());
  return r;
}

uint64_t Lab::append(const std::string& stream, const std::string& type,
                     const std::string& payload) const {
  CliResult r =
      aura({"log", "append", "--stream", stream, "--type", type, "--payload", payload, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json j(r.last_line());
  REQUIRE_MESSAGE(j.u64("seq").has_value(), r.describe());
  return *j.u64("seq");
}

Json Lab::head() const {
  CliResult r = aura({"log", "head", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json j(r.last_line());
  REQUIRE_MESSAGE(j.ok(), r.describe());
  return j;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << p);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, std::string_view bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  out.close();
  REQUIRE_MESSAGE(out.good(), "cannot write " << p);
}

std::vector<fs::path> files_with_suffix(const fs::path& dir, std::string_view suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

size_t count_in_file(const fs::path& p, std::string_view needle) {
  const std::string bytes = read_file(p);
  size_t n = 0;
  for (size_t at = bytes.find(needle); at != std::string::npos; at = bytes.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

std::vector<std::string> tree(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    out.push_back(fs::relative(e.path(), dir).string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::set<fs::path> entries_starting(const fs::path& dir, std::string_view prefix) {
  std::set<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().starts_with(prefix)) out.insert(e.path());
  return out;
}

fs::path file_holding(const fs::path& dir, std::string_view suffix, std::string_view needle) {
  std::vector<fs::path> holders;
  size_t total = 0;
  for (const auto& f : files_with_suffix(dir, suffix)) {
    const size_t n = count_in_file(f, needle);
    if (n > 0) holders.push_back(f);
    total += n;
  }
  REQUIRE_MESSAGE(total == 1,
                  "'" << needle << "' occurs " << total << " times in " << dir << "/*" << suffix);
  return holders.front();
}

fs::path flip_byte_in(const fs::path& dir, std::string_view suffix, std::string_view needle,
                      size_t offset) {
  REQUIRE(offset < needle.size());
  const fs::path file = file_holding(dir, suffix, needle);
  std::string bytes = read_file(file);
  const size_t at = bytes.find(needle) + offset;
  bytes[at] = char(bytes[at] ^ 0x01);
  write_file(file, bytes);
  return file;
}

std::string flip_hex_digit(std::string hex) {
  REQUIRE(!hex.empty());
  hex[0] = hex[0] == '0' ? '1' : '0';
  return hex;
}

std::string replace_once(const std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, "'" << from << "' not found");
  REQUIRE_MESSAGE(text.find(from, at + 1) == std::string::npos, "'" << from << "' twice");
  return text.substr(0, at) + to + text.substr(at + from.size());
}

}  // namespace aura::testing
