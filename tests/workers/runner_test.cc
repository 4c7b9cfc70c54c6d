// aura-runner run for real as a host process (as root): each call on a real file tree under a
// temporary folder, its end of a real SOCK_SEQPACKET pair served by the real writer on a real
// log, the appended runner.evidence event and its blob checked. The runner gets its own /etc
// (a private mount namespace with a test folder bound over /etc), so names come from a known
// passwd and group and the group edits never touch the host's.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "engine/blob/evidence_ref.h"
#include "engine/events/event_types.h"
#include "engine/writer/evidence_writer.h"
#include "tests/support/log_lab.h"

using namespace aura;
namespace fs = std::filesystem;

namespace {

constexpr int kWriterFd = 20;  // not 10, where dash keeps a script it runs
// Hang guard for one run's writer connection (never a speed bar): the slowest run waits out a
// 2 s tool deadline, the others end within a second idle.
constexpr auto kRunHangGuard = std::chrono::seconds(120);

constexpr std::string_view kPasswd =
    "root:x:0:0:root:/root:/bin/bash\n"
    "www-data:x:33:33:www-data:/var/www:/usr/sbin/nologin\n"
    "bob:x:1001:1001::/home/bob:/usr/sbin/nologin\n"
    "alice:x:1000:1000:Alice:/home/alice:/bin/sh\n"
    "# a comment\n"
    "broken line\n";
constexpr std::string_view kGroup =
    "root:x:0:\n"
    "www-data:x:33:alice\n"
    "staff:x:50:alice,bob\n"
    "alice:x:1000:\n"
    "bob:x:1001:\n";

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& p, std::string_view text, mode_t mode = 0644, uid_t uid = 0,
         gid_t gid = 0) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
  REQUIRE(::chmod(p.c_str(), mode) == 0);
  REQUIRE(::chown(p.c_str(), uid, gid) == 0);
}

struct stat lstat_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st;
}

std::string read_fd(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  return out;
}

struct RunOptions {
  std::string kind = "probe.output";
  bool own_etc = true;                // bind the lab's etc folder over /etc
  std::vector<std::string> env;       // added to the runner's environment
  std::vector<std::string> drop_env;  // writer variables left out
  bool writer_closed = false;         // the supervisor's end closed before the run
  std::optional<std::string> token;   // instead of the issued one
};

struct RunResult {
  int exit_code = -1;
  std::string out, err;  // the runner's stdout and stderr
  writer::ConnectionReport report;
  std::vector<std::string> payloads;  // runner.evidence events appended for the run
  std::string blob;                   // the evidence blob, when there is one
  bool truncated = false;
  std::chrono::milliseconds took{0};

  std::vector<std::string> lines() const {
    std::vector<std::string> v;
    std::stringstream s(blob);
    for (std::string l; std::getline(s, l);) v.push_back(l);
    return v;
  }
};

struct RunnerLab : aura::testing::LogLab {
  writer::RunTokens tokens;
  int runs = 0;

  RunnerLab() {
    fs::create_directories(etc());
    fs::create_directories(tree());
    put(etc() / "passwd", kPasswd);
    put(etc() / "group", kGroup);
  }
  fs::path etc() const { return dir / "etc"; }
  fs::path tree() const { return dir / "tree"; }
  fs::path journal() const { return dir / "journal"; }

  RunResult run(const std::string& op_json, const RunOptions& o = {}) {
    const char* bin = std::getenv("AURA_RUNNER_BIN");
    REQUIRE_MESSAGE(bin != nullptr, "AURA_RUNNER_BIN is not set (run through meson)");
    writer::RunBinding binding;
    char id[17];
    std::snprintf(id, sizeof id, "%016x", ++runs);
    binding.run_id = id;
    binding.attempt = "0123456789abcdef";
    binding.world = "primary";
    binding.kinds = {"probe.output", "action.output"};
    auto issued = tokens.issue(binding.run_id);
    REQUIRE(issued.ok());

    std::vector<std::string> env = {
        "AURA_WRITER_FD=" + std::to_string(kWriterFd),
        "AURA_WRITER_TOKEN=" + o.token.value_or(*issued), "AURA_EVIDENCE_KIND=" + o.kind,
        "AURA_JOURNAL_DIR=" + journal().string(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
    std::erase_if(env, [&](const std::string& e) {
      for (const auto& d : o.drop_env)
        if (e.rfind(d + "=", 0) == 0) return true;
      return false;
    });
    env.insert(env.end(), o.env.begin(), o.env.end());
    std::vector<char*> envp,
        argv = {const_cast<char*>(bin), const_cast<char*>(op_json.c_str()), nullptr};
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    const std::string etc_dir = etc().string();

    // meson may start the test with stdin closed: keep 0..2 taken, so no pipe or socket of the
    // harness lands on a stdio number (the runner would then inherit it as its stdin).
    for (int fd = ::open("/dev/null", O_RDWR | O_CLOEXEC); fd >= 0;
         fd = ::open("/dev/null", O_RDWR | O_CLOEXEC)) {
      if (fd > 2) {
        ::close(fd);
        break;
      }
      ::fcntl(fd, F_SETFD, 0);
    }
    int sv[2], out[2], err[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err, O_CLOEXEC) == 0);
    if (o.writer_closed) {
      ::close(sv[0]);
      sv[0] = -1;
    }
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      if (o.own_etc && (::unshare(CLONE_NEWNS) != 0 ||
                        ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0 ||
                        ::mount(etc_dir.c_str(), "/etc", nullptr, MS_BIND, nullptr) != 0)) {
        ::_exit(120);
      }
      // stdio first (a pipe end may sit at kWriterFd), then the writer; dup2 onto itself would
      // keep close-on-exec, so that is cleared instead.
      if (::dup2(out[1], 1) < 0 || ::dup2(err[1], 2) < 0) ::_exit(121);
      if (sv[1] == kWriterFd ? ::fcntl(sv[1], F_SETFD, 0) != 0 : ::dup2(sv[1], kWriterFd) < 0)
        ::_exit(121);
      ::execve(bin, argv.data(), envp.data());
      ::_exit(122);
    }
    ::close(sv[1]);
    ::close(out[1]);
    ::close(err[1]);
    RunResult r;
    if (sv[0] >= 0) {
      auto served = writer::serve_connection(sv[0], binding, tokens, *log, *blobs,
                                             std::chrono::steady_clock::now() + kRunHangGuard);
      ::close(sv[0]);
      REQUIRE_MESSAGE(served.ok(), served.status().message());
      r.report = *served;
    }
    r.out = read_fd(out[0]);
    r.err = read_fd(err[0]);
    ::close(out[0]);
    ::close(err[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    r.took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    REQUIRE_MESSAGE(WIFEXITED(status), "the runner died of a signal");
    r.exit_code = WEXITSTATUS(status);
    REQUIRE_MESSAGE(r.exit_code < 120, "the test's child failed before exec: " << r.exit_code);
    tokens.end(binding.run_id);

    REQUIRE(log->read_stream(binding.stream(), 1,
                             [&](const EventView& e) {
                               if (e.type == events::kRunnerEvidence &&
                                   e.payload.find("\"run\":\"" + binding.run_id + "\"") !=
                                       std::string::npos)
                                 r.payloads.emplace_back(e.payload);
                               return true;
                             })
                .is_ok());
    if (r.payloads.size() == 1) {
      const std::string& p = r.payloads.front();
      CHECK(p.find("\"kind\":\"" + o.kind + "\"") != std::string::npos);
      CHECK(p.find("\"stream\":\"stdout\"") != std::string::npos);
      r.truncated = p.find("\"truncated\":true") != std::string::npos;
      auto refs = extract_refs(p);
      REQUIRE(refs.ok());
      REQUIRE(refs->size() == 1);
      auto blob = blobs->get((*refs)[0].sha256);
      REQUIRE(blob.ok());
      r.blob = *blob;
    }
    return r;
  }

  // One call that ends with `exit_code` (0 or 1) and sends one evidence frame, nothing on stdout.
  RunResult expect(int exit_code, const std::string& op_json, const RunOptions& o) {
    RunResult r = run(op_json, o);
    INFO("op: " << op_json << "\nstderr: " << r.err << "\nblob: " << r.blob);
    CHECK(r.exit_code == exit_code);
    CHECK(r.out.empty());
    CHECK_FALSE(r.report.rejected);
    CHECK(r.report.frames == 2);
    REQUIRE(r.payloads.size() == 1);
    return r;
  }
  RunResult ok(const std::string& op_json, const RunOptions& o = {}) {
    return expect(0, op_json, o);
  }
  // The world's state fails the call: the evidence (one error line) is still sent.
  RunResult world_fails(const std::string& op_json, const RunOptions& o = {}) {
    return expect(1, op_json, o);
  }
  // The op refused its target before reading anything: exit 5, the one "refused:" line sent.
  RunResult refused(const std::string& op_json, const RunOptions& o = {}) {
    return expect(5, op_json, o);
  }
};

std::string call(std::string_view op, std::string_view args, size_t max_output = 1 << 20) {
  return "{\"op\":\"" + std::string(op) + "\",\"args\":" + std::string(args) +
         ",\"max_output\":" + std::to_string(max_output) + "}";
}

std::string path_arg(const fs::path& p) { return "{\"path\":\"" + p.string() + "\"}"; }

// Prefixes one a line, as a JSON string's contents.
std::string within_json(const std::string& lines) {
  std::string out;
  for (char c : lines) out += c == '\n' ? std::string("\\n") : std::string(1, c);
  return out;
}

RunOptions action() {
  RunOptions o;
  o.kind = "action.output";
  return o;
}

std::vector<std::string> journal_files(const fs::path& dir) {
  std::vector<std::string> v;
  if (!fs::exists(dir)) return v;
  for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
  std::sort(v.begin(), v.end());
  return v;
}

// A TCP listener on 127.0.0.1 at a free port; `*port` is set to it.
int tcp_listener(uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&in), sizeof in) == 0);
  REQUIRE(::listen(fd, 4) == 0);
  socklen_t len = sizeof in;
  REQUIRE(::getsockname(fd, reinterpret_cast<sockaddr*>(&in), &len) == 0);
  *port = ntohs(in.sin_port);
  return fd;
}

// A Unix stream socket bound at `path`, listening when `listen` says so.
int unix_socket(const fs::path& path, bool listen) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un un{};
  un.sun_family = AF_UNIX;
  std::strncpy(un.sun_path, path.c_str(), sizeof un.sun_path - 1);
  REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&un), sizeof un) == 0);
  if (listen) REQUIRE(::listen(fd, 4) == 0);
  return fd;
}

}  // namespace

TEST_CASE("runner: file.read sends the file's bytes as one probe.output evidence frame") {
  RunnerLab lab;
  put(lab.tree() / "a.conf", "listen 80;\nroot /srv;\n");
  const auto r = lab.ok(call("file.read", path_arg(lab.tree() / "a.conf")));
  CHECK(r.blob == "listen 80;\nroot /srv;\n");
  CHECK_FALSE(r.truncated);
  CHECK(r.report.accepted == 1);
}

TEST_CASE("runner: output over max_output is cut and flagged; a large output goes as a memfd") {
  RunnerLab lab;
  put(lab.tree() / "small", "0123456789abcdef");
  auto r = lab.ok(call("file.read", path_arg(lab.tree() / "small"), 10));
  CHECK(r.blob == "0123456789");
  CHECK(r.truncated);
  r = lab.ok(call("file.read", path_arg(lab.tree() / "small"), 16));
  CHECK(r.blob == "0123456789abcdef");
  CHECK_FALSE(r.truncated);

  // Larger than a frame: the writer only takes that as a sealed memfd.
  std::string big(200000, 'x');
  for (size_t i = 0; i < big.size(); i += 97) big[i] = char('a' + i % 26);
  put(lab.tree() / "big", big);
  r = lab.ok(call("file.read", path_arg(lab.tree() / "big"), 16 << 20));
  CHECK(r.blob == big);
  CHECK_FALSE(r.truncated);
  r = lab.ok(call("file.read", path_arg(lab.tree() / "big"), 150000));
  CHECK(r.blob == big.substr(0, 150000));
  CHECK(r.truncated);
}

TEST_CASE("runner: file.read refuses a FIFO without blocking, and a device, and a folder") {
  RunnerLab lab;
  const fs::path fifo = lab.tree() / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0644) == 0);
  // Each is refused by the runner's own check before anything is read: exit 5 (so the lab
  // charges nothing), one line saying why.
  auto r = lab.refused(call("file.read", path_arg(fifo)));
  CHECK(r.blob == "refused: read " + fifo.string() + " : not a regular file (fifo)\n");
  // A read that opened the FIFO would wait for a writer that never comes. The run takes well
  // under a second idle; 20 s is a hang guard, not a bar, and below the 180 s tool deadline.
  CHECK(r.took < std::chrono::seconds(20));
  r = lab.refused(call("file.read", "{\"path\":\"/dev/zero\"}"));
  CHECK(r.blob == "refused: read /dev/zero : not a regular file (char)\n");
  r = lab.refused(call("file.read", path_arg(lab.tree())));
  CHECK(r.blob == "refused: read " + lab.tree().string() + " : not a regular file (dir)\n");
  r = lab.refused(call("file.read", path_arg(lab.tree() / "missing")));
  CHECK(r.blob ==
        "refused: read " + (lab.tree() / "missing").string() + " : No such file or directory\n");
  r = lab.refused(call("dir.list", path_arg(fifo)));
  CHECK(r.blob == "refused: list " + fifo.string() + " : not a folder\n");
}

TEST_CASE("runner: file.read and dir.list refuse a symlink that leads out of the call's bounds") {
  RunnerLab lab;
  const fs::path t = lab.tree();
  fs::create_directories(t / "allowed" / "sub");
  fs::create_directories(t / "secret");
  put(t / "secret" / "key", "do not read\n");
  put(t / "allowed" / "sub" / "page", "hello\n");
  fs::create_symlink(t / "secret" / "key", t / "allowed" / "key");
  fs::create_symlink(t / "secret", t / "allowed" / "dir");
  fs::create_symlink("sub/page", t / "allowed" / "page");
  const std::string within = (t / "allowed").string() + "/\n";
  const auto bounded = [&](const fs::path& p, const std::string& without = "") {
    std::string args =
        "{\"path\":\"" + p.string() + "\",\"within\":\"" + within_json(within) + "\"";
    if (!without.empty()) args += ",\"without\":\"" + within_json(without) + "\"";
    return args + "}";
  };
  // Out of bounds through a symlink: refused, nothing of the secret is sent.
  auto r = lab.refused(call("file.read", bounded(t / "allowed" / "key")));
  CHECK(r.blob == "refused: read " + (t / "allowed" / "key").string() + " : it resolves to " +
                      (t / "secret" / "key").string() + ", outside " + (t / "allowed").string() +
                      "/\n");
  r = lab.refused(call("dir.list", bounded(t / "allowed" / "dir")));
  CHECK(r.blob.find("it resolves to " + (t / "secret").string() + ", outside") !=
        std::string::npos);
  // Within bounds, a symlink is followed as before.
  r = lab.ok(call("file.read", bounded(t / "allowed" / "page")));
  CHECK(r.blob == "hello\n");
  // An excluded prefix wins over an allowed one.
  r = lab.refused(
      call("file.read", bounded(t / "allowed" / "page", (t / "allowed" / "sub").string() + "/\n")));
  CHECK(r.blob.find(", under " + (t / "allowed" / "sub").string() +
                    "/, which this call may not read") != std::string::npos);
}

TEST_CASE("runner: file.stat, dir.list and path.namei name owners from the node's /etc") {
  RunnerLab lab;
  const fs::path t = lab.tree();
  fs::create_directories(t / "site");
  REQUIRE(::chmod((t / "site").c_str(), 02775) == 0);
  REQUIRE(::chown((t / "site").c_str(), 1000, 33) == 0);
  put(t / "site" / "index.html", "hello\n", 0640, 1001, 50);
  put(t / "site" / "b.txt", "", 0600, 4242, 4343);
  fs::create_symlink("index.html", t / "site" / "link");
  REQUIRE(::mkfifo((t / "site" / "pipe").c_str(), 0620) == 0);
  REQUIRE(::chmod((t / "site" / "pipe").c_str(), 0620) == 0);  // past the umask

  auto r = lab.ok(call("file.stat", path_arg(t / "site" / "index.html")));
  CHECK(r.blob == "file 0640 bob staff 6 " + (t / "site" / "index.html").string() + "\n");
  r = lab.ok(call("file.stat", path_arg(t / "site" / "link")));
  // New entries in the setgid folder take its group.
  CHECK(r.blob ==
        "symlink 0777 root www-data 10 " + (t / "site" / "link").string() + " -> index.html\n");

  r = lab.ok(call("dir.list", path_arg(t / "site")));
  CHECK(r.blob ==
        "file 0600 4242 4343 0 b.txt\n"
        "file 0640 bob staff 6 index.html\n"
        "symlink 0777 root www-data 10 link -> index.html\n"
        "fifo 0620 root www-data 0 pipe\n");

  r = lab.ok(call("path.namei", path_arg(t / "site" / "index.html")));
  const auto lines = r.lines();
  REQUIRE(lines.size() == size_t(std::distance(t.begin(), t.end())) + 2);
  CHECK(lines.front() == "dir 0755 root root /");
  CHECK(lines[lines.size() - 2] == "dir 2775 alice www-data site");
  CHECK(lines.back() == "file 0640 bob staff index.html");
}

TEST_CASE("runner: path.namei stops with an error line at the first missing component") {
  RunnerLab lab;
  const fs::path missing = lab.tree() / "nope";
  const auto r = lab.world_fails(call("path.namei", path_arg(missing / "deeper" / "file")));
  const auto lines = r.lines();
  REQUIRE(lines.size() >= 2);
  CHECK(lines[lines.size() - 2].rfind("dir 0755 root root ", 0) == 0);
  CHECK(lines.back() == "error: " + missing.string() + " : No such file or directory");
}

TEST_CASE("runner: user.id, user.list and group.list read the node's /etc/passwd and /etc/group") {
  RunnerLab lab;
  auto r = lab.ok(call("user.id", R"({"user":"alice"})"));
  CHECK(r.blob == "uid=1000(alice) gid=1000(alice) groups=1000(alice),33(www-data),50(staff)\n");
  r = lab.ok(call("user.id", R"({"user":"1001"})"));
  CHECK(r.blob == "uid=1001(bob) gid=1001(bob) groups=1001(bob),50(staff)\n");
  r = lab.world_fails(call("user.id", R"({"user":"mallory"})"));
  CHECK(r.blob == "error: user.id mallory : no such user\n");

  r = lab.ok(call("user.list", "{}"));
  CHECK(r.blob ==
        "root 0 0 /root /bin/bash\n"
        "www-data 33 33 /var/www /usr/sbin/nologin\n"
        "alice 1000 1000 /home/alice /bin/sh\n"
        "bob 1001 1001 /home/bob /usr/sbin/nologin\n");
  r = lab.ok(call("group.list", "{}"));
  CHECK(r.blob ==
        "root 0 -\n"
        "www-data 33 alice\n"
        "staff 50 alice,bob\n"
        "alice 1000 -\n"
        "bob 1001 -\n");
}

TEST_CASE("runner: net.listening lists TCP listeners and listening Unix sockets, sorted") {
  RunnerLab lab;
  uint16_t port = 0;
  const int tcp = tcp_listener(&port);
  socklen_t len = 0;
  const int tcp6 = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in6 in6{};
  in6.sin6_family = AF_INET6;
  in6.sin6_addr = in6addr_loopback;
  const bool have_v6 = tcp6 >= 0 &&
                       ::bind(tcp6, reinterpret_cast<sockaddr*>(&in6), sizeof in6) == 0 &&
                       ::listen(tcp6, 4) == 0;
  len = sizeof in6;
  if (have_v6) REQUIRE(::getsockname(tcp6, reinterpret_cast<sockaddr*>(&in6), &len) == 0);
  const fs::path sock = lab.tree() / "app.sock";
  const int ux = unix_socket(sock, true);
  const fs::path idle = lab.tree() / "idle.sock";  // bound, not listening: not listed
  const int ux2 = unix_socket(idle, false);

  const auto r = lab.ok(call("net.listening", "{}"));
  const auto lines = r.lines();
  CHECK(std::is_sorted(lines.begin(), lines.end()));
  CHECK(std::adjacent_find(lines.begin(), lines.end()) == lines.end());
  const auto has = [&](const std::string& l) {
    return std::find(lines.begin(), lines.end(), l) != lines.end();
  };
  CHECK(has("tcp 127.0.0.1:" + std::to_string(port)));
  if (have_v6) CHECK(has("tcp [::1]:" + std::to_string(ntohs(in6.sin6_port))));
  CHECK(has("unix " + sock.string()));
  CHECK_FALSE(has("unix " + idle.string()));
  for (int fd : {tcp, tcp6, ux, ux2})
    if (fd >= 0) ::close(fd);
}

TEST_CASE("runner: proc.list lists every process sorted by pid, the runner itself included") {
  RunnerLab lab;
  const auto r = lab.ok(call("proc.list", "{}"));
  const auto lines = r.lines();
  REQUIRE(lines.size() >= 2);
  std::vector<long> pids;
  bool self = false;
  for (const auto& l : lines) {
    pids.push_back(std::stol(l));
    // The runner sees itself: root (from the lab's passwd), comm and its argv, bounded.
    if (l.find(" root root aura-runner ") != std::string::npos &&
        l.find(std::string(std::getenv("AURA_RUNNER_BIN")) + " {\"op\":\"proc.list\"") !=
            std::string::npos)
      self = true;
    CHECK(l.size() < 1200);  // args bounded to 256 bytes (escaping may grow them)
  }
  CHECK(self);
  CHECK(std::is_sorted(pids.begin(), pids.end()));
  CHECK(pids.front() == 1);
}

namespace {

// Serves one HTTP connection on `listener`: records the request, answers `response`.
std::thread serve_once(int listener, std::string response, std::string* request) {
  return std::thread([=] {
    const int c = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    char buf[4096];
    while (request->find("\r\n\r\n") == std::string::npos) {
      const ssize_t n = ::read(c, buf, sizeof buf);
      if (n <= 0) break;
      request->append(buf, size_t(n));
    }
    (void)!::write(c, response.data(), response.size());
    ::close(c);
  });
}

}  // namespace

TEST_CASE("runner: http.get over TCP and a Unix socket returns the raw response") {
  RunnerLab lab;
  const std::string response = "HTTP/1.0 200 OK\r\nContent-Length: 5\r\nX-Test: yes\r\n\r\nhello";
  uint16_t port_number = 0;
  const int tcp = tcp_listener(&port_number);
  const std::string port = std::to_string(port_number);

  std::string request;
  std::thread server = serve_once(tcp, response, &request);
  auto r = lab.ok(call("http.get", "{\"url\":\"http://127.0.0.1:" + port + "/status?x=1\"}"));
  server.join();
  CHECK(r.blob == response);
  CHECK(request ==
        "GET /status?x=1 HTTP/1.0\r\nHost: 127.0.0.1:" + port + "\r\nConnection: close\r\n\r\n");

  // Capped like any output.
  request.clear();
  server = serve_once(tcp, response, &request);
  r = lab.ok(call("http.get", "{\"url\":\"http://127.0.0.1:" + port + "/\"}", 15));
  server.join();
  CHECK(r.blob == "HTTP/1.0 200 OK");
  CHECK(r.truncated);

  const fs::path sock = lab.tree() / "app.sock";
  const int ux = unix_socket(sock, true);
  request.clear();
  server = serve_once(ux, response, &request);
  r = lab.ok(call("http.get", "{\"unix\":\"" + sock.string() + "\",\"path\":\"/health\"}"));
  server.join();
  CHECK(r.blob == response);
  CHECK(request == "GET /health HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n");

  // A listener that never answers: the 3 s deadline, then one error line.
  r = lab.world_fails(call("http.get", "{\"url\":\"http://127.0.0.1:" + port + "/\"}"));
  CHECK(r.blob == "error: http.get http://127.0.0.1:" + port +
                      "/ : timed out after 3 s (0 bytes of the response received)\n");
  CHECK(r.took >= std::chrono::milliseconds(2900));
  // Cut at 3 s, not left open: 20 s is a hang guard (3 s plus a runner's start on a machine half
  // as fast and busy), not a bar, and below the 180 s tool deadline.
  CHECK(r.took < std::chrono::seconds(20));
  ::close(tcp);

  // Nothing listening.
  r = lab.world_fails(call(
      "http.get", "{\"unix\":\"" + (lab.tree() / "none.sock").string() + "\",\"path\":\"/\"}"));
  CHECK(r.blob.find(": connect: No such file or directory\n") != std::string::npos);
  ::close(ux);
}

TEST_CASE(
    "runner: file.write replaces atomically, keeps owner and mode, and never follows a "
    "symlink") {
  RunnerLab lab;
  const fs::path t = lab.tree();
  put(t / "app.conf", "old\n", 0640, 1001, 33);
  const ino_t old_ino = lstat_of(t / "app.conf").st_ino;
  auto r = lab.ok(call("file.write", "{\"path\":\"" + (t / "app.conf").string() +
                                         "\",\"content\":\"new text\\n\"}"),
                  action());
  CHECK(r.blob == "wrote 9 bytes to " + (t / "app.conf").string() + " mode 0640\n");
  CHECK(slurp(t / "app.conf") == "new text\n");
  auto st = lstat_of(t / "app.conf");
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(st.st_uid == 1001);
  CHECK(st.st_gid == 33);
  CHECK(st.st_ino != old_ino);  // a new file renamed into place

  r = lab.ok(
      call("file.write", "{\"path\":\"" + (t / "new.conf").string() + "\",\"content\":\"x\"}"),
      action());
  CHECK((lstat_of(t / "new.conf").st_mode & 07777) == 0644);
  r = lab.ok(call("file.write", "{\"path\":\"" + (t / "app.conf").string() +
                                    "\",\"content\":\"y\",\"mode\":\"0600\"}"),
             action());
  CHECK((lstat_of(t / "app.conf").st_mode & 07777) == 0600);
  CHECK(lstat_of(t / "app.conf").st_uid == 1001);

  // A symlink final component is refused and its target untouched.
  put(t / "target", "secret\n", 0600);
  fs::create_symlink(t / "target", t / "link");
  r = lab.world_fails(
      call("file.write", "{\"path\":\"" + (t / "link").string() + "\",\"content\":\"pwned\"}"),
      action());
  CHECK(r.blob == "error: write " + (t / "link").string() +
                      " : is a symlink (the final component is never followed)\n");
  CHECK(slurp(t / "target") == "secret\n");
  CHECK(fs::is_symlink(t / "link"));
  // So is a folder, and a FIFO (without blocking).
  r = lab.world_fails(call("file.write", "{\"path\":\"" + t.string() + "\",\"content\":\"x\"}"),
                      action());
  CHECK(r.blob.find("not a regular file (dir)") != std::string::npos);
  REQUIRE(::mkfifo((t / "fifo").c_str(), 0644) == 0);
  r = lab.world_fails(
      call("file.write", "{\"path\":\"" + (t / "fifo").string() + "\",\"content\":\"x\"}"),
      action());
  CHECK(r.blob.find("not a regular file (fifo)") != std::string::npos);
  // No temporary file is left behind.
  for (const auto& e : fs::directory_iterator(t))
    CHECK(e.path().filename().string().rfind(".aura-tmp-", 0) == std::string::npos);
}

TEST_CASE("runner: file.replace requires the old text exactly once") {
  RunnerLab lab;
  const fs::path f = lab.tree() / "nginx.conf";
  put(f, "listen 8080;\nlisten 8080;\nroot /srv;\n");
  auto r = lab.world_fails(
      call("file.replace", "{\"path\":\"" + f.string() + "\",\"old\":\"8080\",\"new\":\"80\"}"),
      action());
  CHECK(r.blob == "error: replace " + f.string() +
                      " : the old text occurs 2 times; it must occur exactly once\n");
  r = lab.world_fails(
      call("file.replace", "{\"path\":\"" + f.string() + "\",\"old\":\"9090\",\"new\":\"80\"}"),
      action());
  CHECK(r.blob.find("occurs 0 times") != std::string::npos);
  CHECK(slurp(f) == "listen 8080;\nlisten 8080;\nroot /srv;\n");
  r = lab.ok(call("file.replace", "{\"path\":\"" + f.string() +
                                      "\",\"old\":\"root /srv;\",\"new\":\"root /var/www;\"}"),
             action());
  CHECK(r.blob == "replaced 1 occurrence in " + f.string() + "\n");
  CHECK(slurp(f) == "listen 8080;\nlisten 8080;\nroot /var/www;\n");
  // Overlapping occurrences count: "aa" occurs twice in "aaa".
  put(f, "aaa");
  r = lab.world_fails(
      call("file.replace", "{\"path\":\"" + f.string() + "\",\"old\":\"aa\",\"new\":\"b\"}"),
      action());
  CHECK(r.blob.find("occurs 2 times") != std::string::npos);
}

TEST_CASE("runner: file.chmod never follows a symlink; file.chown changes the link itself") {
  RunnerLab lab;
  const fs::path t = lab.tree();
  put(t / "key", "k", 0600);
  fs::create_symlink(t / "key", t / "link");
  auto r = lab.world_fails(
      call("file.chmod", "{\"path\":\"" + (t / "link").string() + "\",\"mode\":\"0666\"}"),
      action());
  CHECK(r.blob == "error: chmod " + (t / "link").string() +
                      " : is a symlink (the final component is never followed)\n");
  CHECK((lstat_of(t / "key").st_mode & 07777) == 0600);
  r = lab.ok(call("file.chmod", "{\"path\":\"" + (t / "key").string() + "\",\"mode\":\"2750\"}"),
             action());
  CHECK(r.blob == "mode " + (t / "key").string() + " 2750\n");
  CHECK((lstat_of(t / "key").st_mode & 07777) == 02750);
  fs::create_directories(t / "d");
  r = lab.ok(call("file.chmod", "{\"path\":\"" + (t / "d").string() + "\",\"mode\":\"700\"}"),
             action());
  CHECK((lstat_of(t / "d").st_mode & 07777) == 0700);

  r = lab.ok(call("file.chown", "{\"path\":\"" + (t / "key").string() +
                                    "\",\"user\":\"alice\",\"group\":\"www-data\"}"),
             action());
  CHECK(r.blob == "owner " + (t / "key").string() + " alice:www-data\n");
  CHECK(lstat_of(t / "key").st_uid == 1000);
  CHECK(lstat_of(t / "key").st_gid == 33);
  r = lab.ok(call("file.chown", "{\"path\":\"" + (t / "key").string() + "\",\"group\":\"4242\"}"),
             action());
  CHECK(r.blob == "owner " + (t / "key").string() + " alice:4242\n");
  r = lab.ok(call("file.chown", "{\"path\":\"" + (t / "link").string() + "\",\"user\":\"bob\"}"),
             action());
  CHECK(lstat_of(t / "link").st_uid == 1001);
  CHECK(lstat_of(t / "key").st_uid == 1000);  // the target is not changed
  r = lab.world_fails(
      call("file.chown", "{\"path\":\"" + (t / "key").string() + "\",\"user\":\"mallory\"}"),
      action());
  CHECK(r.blob == "error: chown " + (t / "key").string() + " : no such user mallory\n");
}

TEST_CASE("runner: group.add_member and group.remove_member edit /etc/group, other lines kept") {
  RunnerLab lab;
  auto r = lab.ok(call("group.add_member", R"({"group":"www-data","user":"bob"})"), action());
  CHECK(r.blob == "added bob to www-data\n");
  CHECK(slurp(lab.etc() / "group") ==
        "root:x:0:\nwww-data:x:33:alice,bob\nstaff:x:50:alice,bob\nalice:x:1000:\nbob:x:1001:\n");
  r = lab.ok(call("group.remove_member", R"({"group":"staff","user":"alice"})"), action());
  CHECK(r.blob == "removed alice from staff\n");
  r = lab.ok(call("group.add_member", R"({"group":"root","user":"alice"})"), action());
  CHECK(slurp(lab.etc() / "group") ==
        "root:x:0:alice\nwww-data:x:33:alice,bob\nstaff:x:50:bob\nalice:x:1000:\nbob:x:1001:\n");

  r = lab.world_fails(call("group.add_member", R"({"group":"staff","user":"bob"})"), action());
  CHECK(r.blob == "error: group.add_member staff bob : bob is already a member of staff\n");
  r = lab.world_fails(call("group.remove_member", R"({"group":"staff","user":"alice"})"), action());
  CHECK(r.blob == "error: group.remove_member staff alice : alice is not a member of staff\n");
  r = lab.world_fails(call("group.add_member", R"({"group":"wheel","user":"bob"})"), action());
  CHECK(r.blob == "error: group.add_member wheel bob : no such group\n");
  r = lab.world_fails(call("group.add_member", R"({"group":"staff","user":"mallory"})"), action());
  CHECK(r.blob == "error: group.add_member staff mallory : no such user\n");
  // The refused edits changed nothing; user.id sees the edits.
  CHECK(slurp(lab.etc() / "group") ==
        "root:x:0:alice\nwww-data:x:33:alice,bob\nstaff:x:50:bob\nalice:x:1000:\nbob:x:1001:\n");
  r = lab.ok(call("user.id", R"({"user":"alice"})"));
  CHECK(r.blob == "uid=1000(alice) gid=1000(alice) groups=1000(alice),0(root),33(www-data)\n");
}

TEST_CASE("runner: an action journals the prior state, fsynced, before it changes anything") {
  RunnerLab lab;
  const fs::path f = lab.tree() / "app.conf";
  put(f, "before\n", 0640, 1000, 33);
  lab.ok(call("file.write", "{\"path\":\"" + f.string() + "\",\"content\":\"after\\n\"}"),
         action());
  CHECK(journal_files(lab.journal()) == std::vector<std::string>{"000001.data", "000001.json"});
  CHECK((lstat_of(lab.journal()).st_mode & 07777) == 0700);
  CHECK(slurp(lab.journal() / "000001.json") ==
        "{\"v\":1,\"path\":\"" + f.string() +
            "\",\"existed\":true,\"mode\":\"0640\",\"uid\":1000,\"gid\":33,\"type\":\"file\","
            "\"bytes\":7}");
  CHECK(slurp(lab.journal() / "000001.data") == "before\n");
  lab.ok(call("file.write",
              "{\"path\":\"" + (lab.tree() / "fresh").string() + "\",\"content\":\"x\"}"),
         action());
  CHECK(slurp(lab.journal() / "000002.json") ==
        "{\"v\":1,\"path\":\"" + (lab.tree() / "fresh").string() +
            "\",\"existed\":false,\"mode\":\"0000\",\"uid\":0,\"gid\":0,\"type\":\"file\"}");
  // Probes journal nothing.
  lab.ok(call("file.read", path_arg(f)));
  CHECK(journal_files(lab.journal()).size() == 3);

  // A journal folder that is a symlink is never followed: the action does not go ahead.
  RunnerLab other;
  const fs::path real = other.dir / "elsewhere";
  fs::create_directories(real);
  fs::create_symlink(real, other.journal());
  put(other.tree() / "x", "keep\n");
  const auto r = other.world_fails(
      call("file.write", "{\"path\":\"" + (other.tree() / "x").string() + "\",\"content\":\"y\"}"),
      action());
  CHECK(r.blob ==
        "error: journal " + other.journal().string() + " : is a symlink (never followed)\n");
  CHECK(slurp(other.tree() / "x") == "keep\n");
  CHECK(fs::is_empty(real));
}

TEST_CASE(
    "runner: journal.undo restores content, mode and owner newest first, removes created "
    "files, then the journal is empty") {
  RunnerLab lab;
  const fs::path t = lab.tree();
  put(t / "a.conf", "one\n", 0640, 1000, 33);
  put(t / "b.conf", "two\n", 0644, 0, 0);
  fs::create_directories(t / "d");
  REQUIRE(::chmod((t / "d").c_str(), 0755) == 0);
  fs::create_hard_link(t / "b.conf",
                       t / "b.link");  // stays the same file only if restored in place
  const std::string a = (t / "a.conf").string(), b = (t / "b.conf").string();
  lab.ok(call("file.write", "{\"path\":\"" + a + "\",\"content\":\"1\",\"mode\":\"0666\"}"),
         action());
  lab.ok(call("file.replace", "{\"path\":\"" + a + "\",\"old\":\"1\",\"new\":\"2\"}"), action());
  lab.ok(call("file.chmod", "{\"path\":\"" + b + "\",\"mode\":\"4755\"}"), action());
  lab.ok(call("file.chown", "{\"path\":\"" + b + "\",\"user\":\"bob\",\"group\":\"staff\"}"),
         action());
  lab.ok(call("file.chmod", "{\"path\":\"" + (t / "d").string() + "\",\"mode\":\"0700\"}"),
         action());
  lab.ok(call("file.write", "{\"path\":\"" + (t / "new.conf").string() + "\",\"content\":\"n\"}"),
         action());
  lab.ok(call("group.add_member", R"({"group":"staff","user":"www-data"})"), action());
  CHECK(slurp(t / "a.conf") == "2");
  CHECK(journal_files(lab.journal()).size() == 7 + 5);  // and five regular files' bytes

  auto r = lab.ok(call("journal.undo", "{}"), action());
  CHECK(r.lines() == std::vector<std::string>{
                         "restored file /etc/group mode 0644 owner 0:0",
                         "removed " + (t / "new.conf").string(),
                         "restored dir " + (t / "d").string() + " mode 0755 owner 0:0",
                         "restored file " + b + " mode 4755 owner 0:0",
                         "restored file " + b + " mode 0644 owner 0:0",
                         "restored file " + a + " mode 0666 owner 1000:33",
                         "restored file " + a + " mode 0640 owner 1000:33",
                     });
  CHECK(slurp(t / "a.conf") == "one\n");
  auto st = lstat_of(t / "a.conf");
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(st.st_uid == 1000);
  CHECK(st.st_gid == 33);
  st = lstat_of(t / "b.conf");
  CHECK((st.st_mode & 07777) == 0644);
  CHECK(st.st_uid == 0);
  CHECK(st.st_gid == 0);
  CHECK(st.st_nlink == 2);  // only metadata changed: restored in place, hard link kept
  CHECK((lstat_of(t / "d").st_mode & 07777) == 0755);
  CHECK_FALSE(fs::exists(t / "new.conf"));
  CHECK(slurp(lab.etc() / "group") == kGroup);
  CHECK(journal_files(lab.journal()).empty());

  r = lab.ok(call("journal.undo", "{}"), action());
  CHECK(r.blob.empty());
}

TEST_CASE("runner: a malformed call exits 2 on stderr and sends no evidence") {
  RunnerLab lab;
  const std::string p = (lab.tree() / "x").string();
  put(lab.tree() / "x", "x");
  struct Case {
    std::string json, kind = "probe.output", stderr_part;
  };
  const std::vector<Case> cases = {
      {"not json", "probe.output", "not a JSON object"},
      {"[1,2]", "probe.output", "not a JSON object"},
      {call("file.delete", path_arg(p)), "probe.output", "unknown op \"file.delete\""},
      {call("file.read", "{\"path\":\"" + p + "\",\"follow\":true}"), "probe.output",
       "unknown member \"follow\""},
      {call("file.read", "{}"), "probe.output", "args.path: missing"},
      {call("file.read", "{\"path\":7}"), "probe.output", "args.path: not a string"},
      {call("file.read", "{\"path\":\"relative/x\"}"), "probe.output", "absolute path"},
      {call("file.read", path_arg(p), 0), "probe.output", "max_output"},
      {call("file.read", path_arg(p), (16 << 20) + 1), "probe.output", "max_output"},
      {"{\"op\":\"file.read\",\"args\":{\"path\":\"" + p + "\"}}", "probe.output", "max_output"},
      {"{\"op\":\"file.read\",\"args\":{},\"max_output\":1,\"extra\":1}", "probe.output",
       "unknown member \"extra\""},
      {"{\"op\":\"file.read\",\"op\":\"file.read\",\"args\":{},\"max_output\":1}", "probe.output",
       "duplicate member"},
      {call("service.log", "{\"name\":\"web\",\"lines\":0}"), "probe.output", "args.lines"},
      {call("service.log", "{\"name\":\"web\",\"lines\":\"5\"}"), "probe.output", "not an integer"},
      {call("service.status", "{\"name\":\"../etc/passwd\"}"), "probe.output", "args.name"},
      {call("http.get", "{\"url\":\"http://example.com/\"}"), "probe.output", "IPv4 literal"},
      {call("http.get", "{\"url\":\"http://127.0.0.1:80/a b\"}"), "probe.output", "visible"},
      {call("file.chmod", "{\"path\":\"" + p + "\",\"mode\":\"0999\"}"), "action.output", "octal"},
      {call("file.chmod", "{\"path\":\"" + p + "\",\"mode\":\"17777\"}"), "action.output", "octal"},
      {call("file.write", "{\"path\":\"/\",\"content\":\"x\"}"), "action.output",
       "no final component"},
      {call("file.chown", path_arg(p)), "action.output", "give user, group or both"},
      {call("file.write", "{\"path\":\"" + p + "\",\"content\":\"x\"}"), "probe.output",
       "an action, not allowed under probe.output"},
      {call("file.read", path_arg(p)), "action.output", "a probe, not allowed"},
      {"{\"op\":\"file.read\",\"args\":{\"path\":\"" + std::string(70000, 'a') +
           "\"},\"max_output\":1}",
       "probe.output", "larger than 64 KiB"},
  };
  for (const Case& c : cases) {
    RunOptions o;
    o.kind = c.kind;
    const RunResult r = lab.run(c.json, o);
    INFO("case: " << c.json.substr(0, 200) << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find(c.stderr_part) != std::string::npos);
    CHECK(r.payloads.empty());
    CHECK_FALSE(r.report.rejected);
  }
  CHECK(slurp(lab.tree() / "x") == "x");
  CHECK(journal_files(lab.journal()).empty());
}

TEST_CASE("runner: without a writer it exits 3, performs nothing and writes nothing to stdout") {
  RunnerLab lab;
  const fs::path f = lab.tree() / "f";
  const std::string write =
      call("file.write", "{\"path\":\"" + f.string() + "\",\"content\":\"x\"}");
  struct Case {
    std::string name;
    RunOptions o;
  };
  std::vector<Case> cases;
  for (const char* var : {"AURA_WRITER_FD", "AURA_WRITER_TOKEN", "AURA_EVIDENCE_KIND"}) {
    Case c{std::string("no ") + var, action()};
    c.o.drop_env = {var};
    cases.push_back(c);
  }
  {
    Case c{"an fd that is not open", action()};
    c.o.drop_env = {"AURA_WRITER_FD"};
    c.o.env = {"AURA_WRITER_FD=55"};
    cases.push_back(c);
    c = {"an fd that is not a SEQPACKET socket", action()};
    c.o.drop_env = {"AURA_WRITER_FD"};
    c.o.env = {"AURA_WRITER_FD=2"};
    cases.push_back(c);
    c = {"a token that is not 64 hex", action()};
    c.o.token = "ABC";
    cases.push_back(c);
    c = {"a kind not probe.output or action.output", action()};
    c.o.kind = "runner.note";
    cases.push_back(c);
    c = {"the writer's end already closed", action()};
    c.o.writer_closed = true;
    cases.push_back(c);
  }
  for (const Case& c : cases) {
    const RunResult r = lab.run(write, c.o);
    INFO("case: " << c.name << "\nstderr: " << r.err);
    CHECK(r.exit_code == 3);
    CHECK(r.out.empty());
    CHECK_FALSE(r.err.empty());
    CHECK(r.payloads.empty());
    CHECK_FALSE(fs::exists(f));
  }
}

TEST_CASE("runner: nginx.test reports nginx's output and a last exit line") {
  if (!fs::exists("/usr/sbin/nginx")) {
    MESSAGE("skipped: /usr/sbin/nginx is not installed");
    return;
  }
  RunnerLab lab;
  RunOptions o;
  o.own_etc = false;  // nginx reads the host's /etc/nginx/nginx.conf
  const RunResult r = lab.run(call("nginx.test", "{}"), o);
  INFO("blob: " << r.blob);
  REQUIRE(r.payloads.size() == 1);
  const auto lines = r.lines();
  REQUIRE_FALSE(lines.empty());
  CHECK(lines.back().rfind("exit ", 0) == 0);
  CHECK(r.exit_code == (lines.back() == "exit 0" ? 0 : 1));
  CHECK(r.blob.find("nginx") != std::string::npos);
}

TEST_CASE(
    "runner: service ops read the manager's state and run aura-svcman ctl, reporting its "
    "exit; the tool never gets the writer") {
  RunnerLab lab;
  const fs::path state = lab.dir / "svcman";
  fs::create_directories(state);
  put(state / "web.status", "{\"state\":\"running\"}\n");
  put(state / "web.log", "l1\nl2\nl3\nl4\nl5\n");
  const fs::path tool = lab.dir / "fake-svcman";
  put(tool,
      "#!/bin/sh\n"
      "echo \"args: $*\"\n"
      "echo to-stderr >&2\n"
      "echo \"token=${AURA_WRITER_TOKEN:-none}\"\n"
      "if [ -e /proc/$$/fd/20 ]; then echo writer-fd-leaked; else echo no-writer-fd; fi\n"
      "exit 3\n",
      0755);
  RunOptions o;
  o.env = {"AURA_SVCMAN_STATE=" + state.string(), "AURA_SVCMAN_BIN=" + tool.string()};
  auto r = lab.ok(call("service.status", R"({"name":"web"})"), o);
  CHECK(r.blob == "{\"state\":\"running\"}\n");
  r = lab.ok(call("service.log", R"({"name":"web","lines":2})"), o);
  CHECK(r.blob == "l4\nl5\n");
  r = lab.ok(call("service.log", R"({"name":"web"})"), o);
  CHECK(r.blob == "l1\nl2\nl3\nl4\nl5\n");
  r = lab.world_fails(call("service.status", R"({"name":"db"})"), o);
  CHECK(r.blob ==
        "error: read " + (state / "db.status").string() + " : No such file or directory\n");
  // A log larger than the cap: only its tail is read, the partial first line dropped.
  r = lab.ok(call("service.log", R"({"name":"web","lines":5})", 7), o);
  CHECK(r.blob == "l4\nl5\n");
  CHECK(r.truncated);

  RunOptions a = o;
  a.kind = "action.output";
  r = lab.world_fails(call("service.restart", R"({"name":"web"})"), a);
  CHECK(r.blob == "args: ctl --state " + state.string() +
                      " restart web\nto-stderr\ntoken=none\nno-writer-fd\nexit 3\n");
  put(tool, "#!/bin/sh\necho reloaded \"$5\"\n", 0755);
  r = lab.ok(call("service.reload", R"({"name":"web"})"), a);
  CHECK(r.blob == "reloaded web\nexit 0\n");
  // The exit line survives a cap that cuts the output.
  put(tool, "#!/bin/sh\nhead -c 5000 /dev/zero | tr '\\0' z\nexit 0\n", 0755);
  r = lab.ok(call("service.reload", R"({"name":"web"})", 100), a);
  CHECK(r.blob == std::string(92, 'z') + "\nexit 0\n");
  CHECK(r.truncated);
  // A tool that cannot be executed.
  a.env = {"AURA_SVCMAN_STATE=" + state.string(),
           "AURA_SVCMAN_BIN=" + (lab.dir / "missing").string()};
  r = lab.world_fails(call("service.restart", R"({"name":"web"})"), a);
  CHECK(r.blob ==
        "error: exec " + (lab.dir / "missing").string() + " : No such file or directory\n");
}

// The deadline is the product's 180 s (tool.h); its starter may only shorten it, here to 2 s so
// the test does not wait three minutes.
TEST_CASE("runner: a tool still running at its deadline is killed, and the output says so") {
  RunnerLab lab;
  const fs::path tool = lab.dir / "slow-svcman";
  put(tool, "#!/bin/sh\necho started\nsleep 600\necho never\n", 0755);
  RunOptions a;
  a.kind = "action.output";
  a.env = {"AURA_SVCMAN_STATE=" + lab.dir.path().string(), "AURA_SVCMAN_BIN=" + tool.string(),
           "AURA_TOOL_DEADLINE_S=2"};
  const RunResult r = lab.world_fails(call("service.restart", R"({"name":"web"})"), a);
  CHECK(r.blob == "started\nkilled: still running after 2 s\nexit signal 9\n");
  CHECK(r.took >= std::chrono::seconds(2));
  // Killed at its deadline, not left to its 600 s sleep (the run's hang guard would end it).
  CHECK(r.took < kRunHangGuard);

  // A deadline past the product's, or not a number, is refused before anything runs.
  for (const char* bad :
       {"AURA_TOOL_DEADLINE_S=181", "AURA_TOOL_DEADLINE_S=0", "AURA_TOOL_DEADLINE_S=2x"}) {
    INFO(bad);
    RunOptions b = a;
    b.env.back() = bad;
    const RunResult refused = lab.run(call("service.restart", R"({"name":"web"})"), b);
    CHECK(refused.exit_code == 2);
    CHECK(refused.err.find("AURA_TOOL_DEADLINE_S") != std::string::npos);
    CHECK(refused.blob.empty());
  }
}

TEST_CASE("runner: vars.set and vars.unset edit one key of an Ansible vars file, journaled") {
  RunnerLab lab;
  const fs::path vars = lab.tree() / "ansible" / "host_vars" / "web2.yml";
  fs::create_directories(vars.parent_path());
  const std::string before = "---\n# web2\napp_root: /old\nlimits:\n  a: 1\nport: 80 # http\n";
  put(vars, before, 0640);
  auto args = [&](const std::string& more) {
    return "{\"path\":\"" + vars.string() + "\"," + more + "}";
  };
  auto r = lab.ok(call("vars.unset", args("\"key\":\"app_root\"")), action());
  CHECK(r.blob == "removed app_root from " + vars.string() + " (was /old)\n");
  CHECK(slurp(vars) == "---\n# web2\nlimits:\n  a: 1\nport: 80 # http\n");
  CHECK((lstat_of(vars).st_mode & 07777) == 0640);
  r = lab.world_fails(call("vars.unset", args("\"key\":\"app_root\"")), action());
  CHECK(r.blob.find("no top-level \"app_root:\" line") != std::string::npos);
  // A set replaces the key's line and the lines under it, or appends; other bytes stay.
  r = lab.ok(call("vars.set", args("\"key\":\"port\",\"value\":\"8080\"")), action());
  CHECK(r.blob == "set port: 8080 in " + vars.string() + " (was 80)\n");
  lab.ok(call("vars.set", args("\"key\":\"limits\",\"value\":\"none\"")), action());
  lab.ok(call("vars.set", args("\"key\":\"app_root\",\"value\":\"/srv/site/current\"")), action());
  CHECK(slurp(vars) == "---\n# web2\nlimits: none\nport: 8080\napp_root: /srv/site/current\n");
  // Refused, the file unchanged: a connection variable, a value that is not a plain scalar, a
  // bad key, a file that is not a vars file, a missing one.
  const std::string now = slurp(vars);
  for (const std::string& bad :
       {args("\"key\":\"ansible_host\",\"value\":\"10.0.0.1\""),
        args("\"key\":\"app_root\",\"value\":\"/a b\""), args("\"key\":\"x-y\",\"value\":\"1\""),
        "{\"path\":\"" + (lab.tree() / "ansible" / "site.yml").string() +
            "\",\"key\":\"hosts\",\"value\":\"all\"}",
        "{\"path\":\"" + (vars.parent_path() / "web9.yml").string() +
            "\",\"key\":\"a\",\"value\":\"1\"}"}) {
    INFO(bad);
    r = lab.world_fails(call("vars.set", bad), action());
    CHECK(r.blob.rfind("error: ", 0) == 0);
  }
  CHECK(slurp(vars) == now);
  CHECK_FALSE(fs::exists(vars.parent_path() / "web9.yml"));
  // Every change was journaled: one undo restores the file as it was.
  lab.ok(call("journal.undo", "{}"), action());
  CHECK(slurp(vars) == before);
}

TEST_CASE(
    "runner: ansible.check reports a pending change without making it; ansible.run makes it") {
  if (!fs::exists("/usr/bin/ansible-playbook")) {
    MESSAGE("skipped: ansible is not installed");
    return;
  }
  RunnerLab lab;
  const fs::path project = lab.tree() / "project";
  const fs::path target = lab.tree() / "rendered.txt";
  fs::create_directories(project / "group_vars");
  put(project / "ansible.cfg",
      "[defaults]\ninventory = inventory.ini\ngathering = explicit\n"
      "local_tmp = " +
          (lab.dir / "ansible-tmp").string() + "\nremote_tmp = " +
          (lab.dir / "ansible-tmp").string() + "\nretry_files_enabled = False\n");
  put(project / "inventory.ini",
      "[local]\nlocalhost ansible_connection=local "
      "ansible_python_interpreter=/usr/bin/python3\n");
  put(project / "group_vars" / "local.yml", "---\nmessage: hello\n");
  put(project / "site.yml",
      "- hosts: local\n  tasks:\n    - ansible.builtin.copy:\n"
      "        content: \"{{ message }}\\n\"\n        dest: " +
          target.string() + "\n");
  RunOptions o = action();
  o.own_etc = false;
  o.env = {"AURA_ANSIBLE_PROJECT=" + project.string()};
  RunOptions probe = o;
  probe.kind = "probe.output";
  auto r = lab.ok(call("ansible.check", "{}"), probe);
  CHECK(r.blob.find("changed: [localhost]") != std::string::npos);
  CHECK(r.blob.find("+hello") != std::string::npos);  // the diff
  CHECK(r.lines().back() == "exit 0");
  CHECK_FALSE(fs::exists(target));
  r = lab.ok(call("ansible.run", "{}"), o);
  CHECK(r.blob.find("changed=1") != std::string::npos);
  CHECK(slurp(target) == "hello\n");
  r = lab.ok(call("ansible.run", "{}"), o);
  CHECK(r.blob.find("changed=0") != std::string::npos);
  // A broken playbook is the world's failure: exit 1 with ansible's own words.
  put(project / "site.yml", "- hosts: local\n  tasks: [\n");
  r = lab.world_fails(call("ansible.run", "{}"), o);
  CHECK(r.lines().back() != "exit 0");
}
