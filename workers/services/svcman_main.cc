// aura-svcman: the minimal service manager that runs inside O2 worlds (docs/SERVICES.md).
//   aura-svcman run --units DIR --state DIR    supervise every DIR/*.unit in the foreground
//   aura-svcman ctl --state DIR CMD NAME       CMD: status | start | stop | restart | reload
// It honours each unit's user, group, supplementary groups (plus the user's /etc/group
// memberships), working directory and environment file; restarts by policy with a start limit;
// keeps each service's output and its own notes in STATE/NAME.log (bounded) and its state in
// STATE/NAME.status (JSON, replaced atomically). It never runs a service as root unless the unit
// names root: that is the fault a scenario may plant, and the status shows it.
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "engine/common/json_writer.h"
#include "workers/services/unit.h"

namespace fs = std::filesystem;
using namespace aura;
using namespace aura::services;

namespace {

constexpr size_t kMaxLogBytes = 1 << 20;
constexpr size_t kKeepLogBytes = 512 << 10;

int64_t now_ms() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1'000'000;
}

std::string read_file(const fs::path& p, size_t limit, std::string* error) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    *error = p.string() + ": " + std::strerror(errno);
    return {};
  }
  std::string s(limit + 1, '\0');
  in.read(s.data(), std::streamsize(s.size()));
  s.resize(size_t(in.gcount()));
  if (s.size() > limit) *error = p.string() + ": larger than " + std::to_string(limit) + " bytes";
  return s;
}

std::optional<uint32_t> numeric(const std::string& s) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

struct Identity {
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;
};

// Resolves the unit's identity from the world's /etc/passwd and /etc/group, as a service
// manager would at start time (so a membership removed since shows up at the next start).
bool resolve(const Unit& u, Identity& id, std::string& error) {
  std::string user_name;
  if (auto n = numeric(u.user)) {
    id.uid = *n;
    id.gid = *n;
  } else {
    passwd* pw = ::getpwnam(u.user.c_str());
    if (pw == nullptr) {
      error = "user " + u.user + " does not exist";
      return false;
    }
    id.uid = pw->pw_uid;
    id.gid = pw->pw_gid;
    user_name = u.user;
  }
  if (!u.group.empty()) {
    if (auto n = numeric(u.group)) {
      id.gid = *n;
    } else {
      group* gr = ::getgrnam(u.group.c_str());
      if (gr == nullptr) {
        error = "group " + u.group + " does not exist";
        return false;
      }
      id.gid = gr->gr_gid;
    }
  }
  id.groups = {id.gid};
  if (!user_name.empty()) {
    int n = 64;
    std::vector<gid_t> list(static_cast<size_t>(n));
    if (::getgrouplist(user_name.c_str(), id.gid, list.data(), &n) >= 0) {
      list.resize(size_t(n));
      for (gid_t g : list)
        if (std::find(id.groups.begin(), id.groups.end(), g) == id.groups.end())
          id.groups.push_back(g);
    }
  }
  for (const auto& g : u.supplementary_groups) {
    gid_t gid;
    if (auto n = numeric(g)) {
      gid = *n;
    } else {
      group* gr = ::getgrnam(g.c_str());
      if (gr == nullptr) {
        error = "supplementary group " + g + " does not exist";
        return false;
      }
      gid = gr->gr_gid;
    }
    if (std::find(id.groups.begin(), id.groups.end(), gid) == id.groups.end())
      id.groups.push_back(gid);
  }
  return true;
}

struct Service {
  Unit unit;
  pid_t pid = -1;
  int out_fd = -1;
  std::string state = "starting";  // running | restarting | failed | stopped
  uint32_t restarts = 0;
  std::deque<int64_t> recent_starts;
  int64_t next_start_ms = 0;  // when state is restarting/starting
  std::string last_exit;
  Identity id;
  bool restart_requested = false;
  bool stop_requested = false;

  bool refused() const { return unit.exec.empty(); }  // its unit file did not parse
};

class Manager {
 public:
  Manager(fs::path units, fs::path state) : units_(std::move(units)), state_(std::move(state)) {}

  int run() {
    std::error_code ec;
    fs::create_directories(state_, ec);
    for (const auto& e : fs::directory_iterator(units_, ec)) {
      const std::string file = e.path().filename();
      if (e.path().extension() != ".unit") continue;
      const std::string name = file.substr(0, file.size() - 5);
      std::string err;
      const std::string text = read_file(e.path(), kMaxUnitBytes, &err);
      Service s;
      auto unit = err.empty() ? parse_unit(name, text) : Result<Unit>(Status::invalid(err));
      if (!unit.ok()) {
        const std::string key = is_valid_unit_name(name) ? name : "invalid";
        Service& refused = services_[key];
        refused.unit.name = key;
        refused.state = "failed";
        note(refused, "refused: " + unit.status().message());
        write_status(refused);
        continue;
      }
      s.unit = std::move(unit).value();
      services_[s.unit.name] = std::move(s);
    }
    if (ec) {
      std::cerr << "aura-svcman: " << units_ << ": " << ec.message() << "\n";
      return 1;
    }
    if (!open_control()) return 1;
    sigset_t mask;
    sigemptyset(&mask);
    for (int sig : {SIGCHLD, SIGTERM, SIGINT}) sigaddset(&mask, sig);
    ::sigprocmask(SIG_BLOCK, &mask, nullptr);
    sigfd_ = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    ::signal(SIGPIPE, SIG_IGN);
    while (!stopping_ || any_running()) loop_once();
    return 0;
  }

 private:
  bool open_control() {
    const fs::path sock = state_ / "control.sock";
    ::unlink(sock.c_str());
    ctl_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    if (sock.string().size() >= sizeof a.sun_path) return false;
    std::strcpy(a.sun_path, sock.c_str());
    if (ctl_ < 0 || ::bind(ctl_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        ::chmod(sock.c_str(), 0600) != 0 || ::listen(ctl_, 8) != 0) {
      std::cerr << "aura-svcman: control socket " << sock << ": " << std::strerror(errno) << "\n";
      return false;
    }
    return true;
  }

  bool any_running() const {
    return std::any_of(services_.begin(), services_.end(),
                       [](const auto& kv) { return kv.second.pid > 0; });
  }

  void loop_once() {
    std::vector<pollfd> fds{{sigfd_, POLLIN, 0}, {ctl_, POLLIN, 0}};
    std::vector<Service*> outs;
    for (auto& [name, s] : services_) {
      if (s.out_fd >= 0) {
        fds.push_back({s.out_fd, POLLIN, 0});
        outs.push_back(&s);
      }
    }
    int64_t timeout = 1000;
    const int64_t now = now_ms();
    for (auto& [name, s] : services_) {
      if (!stopping_ && s.pid < 0 && (s.state == "starting" || s.state == "restarting")) {
        timeout = std::min(timeout, std::max<int64_t>(0, s.next_start_ms - now));
      }
    }
    ::poll(fds.data(), fds.size(), int(timeout));
    if (fds[0].revents & POLLIN) on_signals();
    if (fds[1].revents & POLLIN) on_control();
    for (size_t i = 0; i < outs.size(); ++i) {
      if (fds[i + 2].revents & (POLLIN | POLLHUP)) drain(*outs[i]);
    }
    const int64_t t = now_ms();
    for (auto& [name, s] : services_) {
      if (!stopping_ && s.pid < 0 && (s.state == "starting" || s.state == "restarting") &&
          s.next_start_ms <= t) {
        start(s);
      }
    }
  }

  void on_signals() {
    signalfd_siginfo si;
    while (::read(sigfd_, &si, sizeof si) == sizeof si) {
      if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) {
        stopping_ = true;
        for (auto& [name, s] : services_) {
          s.stop_requested = true;
          if (s.pid > 0) ::kill(s.pid, SIGTERM);
        }
      }
    }
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      for (auto& [name, s] : services_) {
        if (s.pid == pid) exited(s, status);
      }
    }
  }

  void exited(Service& s, int status) {
    if (s.out_fd >= 0) drain(s);
    s.pid = -1;
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    s.last_exit = WIFEXITED(status) ? "exit " + std::to_string(WEXITSTATUS(status))
                                    : "signal " + std::to_string(WTERMSIG(status));
    note(s, s.unit.name + " " + s.last_exit);
    if (s.restart_requested) {
      s.restart_requested = false;
      s.stop_requested = false;
      s.recent_starts.clear();
      s.state = "starting";
      s.next_start_ms = now_ms();
    } else if (s.stop_requested || stopping_) {
      s.state = "stopped";
    } else if (s.unit.restart == Restart::kAlways ||
               (s.unit.restart == Restart::kOnFailure && !clean)) {
      schedule_restart(s);
    } else {
      s.state = clean ? "stopped" : "failed";
    }
    write_status(s);
  }

  void schedule_restart(Service& s) {
    const int64_t now = now_ms();
    while (!s.recent_starts.empty() &&
           s.recent_starts.front() < now - int64_t(s.unit.start_limit_window_ms)) {
      s.recent_starts.pop_front();
    }
    if (s.recent_starts.size() > s.unit.start_limit) {
      s.state = "failed";
      note(s, s.unit.name + ": start limit hit (" + std::to_string(s.recent_starts.size()) +
                  " starts in " + std::to_string(s.unit.start_limit_window_ms) +
                  " ms); not restarting");
      return;
    }
    s.state = "restarting";
    s.next_start_ms = now + s.unit.restart_delay_ms;
    note(s, s.unit.name + ": restarting in " + std::to_string(s.unit.restart_delay_ms) + " ms");
  }

  // Starts the service; a failure before exec is a failed start, logged like a service manager
  // logs it, and handled by the restart policy.
  void start(Service& s) {
    s.recent_starts.push_back(now_ms());
    std::string error;
    Identity id;
    std::vector<std::string> env{"PATH=/usr/local/bin:/usr/bin:/bin"};
    if (!resolve(s.unit, id, error)) return failed_start(s, error);
    if (!s.unit.environment_file.empty()) {
      const std::string text = read_file(s.unit.environment_file, kMaxEnvFileBytes, &error);
      if (!error.empty()) return failed_start(s, "environment file " + error);
      auto parsed = parse_environment_file(text);
      if (!parsed.ok()) return failed_start(s, parsed.status().message());
      env.insert(env.end(), parsed->begin(), parsed->end());
    }
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) return failed_start(s, std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
      ::close(out[0]);
      ::close(out[1]);
      return failed_start(s, std::strerror(errno));
    }
    if (pid == 0) child(s.unit, id, env, out[1]);
    ::close(out[1]);
    s.pid = pid;
    s.out_fd = out[0];
    s.id = id;
    if (s.recent_starts.size() > 1) s.restarts++;
    s.state = "running";
    std::string groups;
    for (gid_t g : id.groups) groups += (groups.empty() ? "" : ",") + std::to_string(g);
    note(s, "started " + s.unit.name + " pid " + std::to_string(pid) + " as uid " +
                std::to_string(id.uid) + " gid " + std::to_string(id.gid) + " groups " + groups);
    write_status(s);
  }

  void failed_start(Service& s, const std::string& why) {
    note(s, s.unit.name + " failed to start: " + why);
    s.last_exit = "not started: " + why;
    if (s.unit.restart == Restart::kNo) {
      s.state = "failed";
    } else {
      schedule_restart(s);
    }
    write_status(s);
  }

  // In the child: says which step failed and why (the service's log gets it), then exits.
  [[noreturn]] static void die(const char* step, int code) {
    const std::string m = std::string("[svcman] ") + step + ": " + std::strerror(errno) + "\n";
    (void)!::write(2, m.data(), m.size());
    ::_exit(code);
  }

  [[noreturn]] static void child(const Unit& u, const Identity& id,
                                 const std::vector<std::string>& env, int out) {
    ::setsid();
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(out, 1);
    ::dup2(out, 2);
    if (::setgroups(id.groups.size(), id.groups.data()) != 0) die("setgroups", 216);
    if (::setresgid(id.gid, id.gid, id.gid) != 0) die("setgid", 216);
    if (::setresuid(id.uid, id.uid, id.uid) != 0) die("setuid", 217);
    if (::chdir(u.working_directory.c_str()) != 0) {
      die(("changing to the working directory " + u.working_directory).c_str(), 200);
    }
    std::vector<char*> argv, envp;
    for (const auto& a : u.exec) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    die(("exec " + u.exec[0]).c_str(), 203);
  }

  void drain(Service& s) {
    char buf[4096];
    while (true) {
      const ssize_t n = ::read(s.out_fd, buf, sizeof buf);
      if (n > 0) {
        append_log(s, std::string_view(buf, size_t(n)));
        if (n < ssize_t(sizeof buf)) return;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) {
        ::close(s.out_fd);
        s.out_fd = -1;
      }
      return;
    }
  }

  void note(Service& s, const std::string& line) { append_log(s, "[svcman] " + line + "\n"); }

  void append_log(Service& s, std::string_view bytes) {
    const fs::path log = state_ / (s.unit.name + ".log");
    std::error_code ec;
    const auto size = fs::file_size(log, ec);
    if (!ec && size + bytes.size() > kMaxLogBytes) {
      std::string err;
      std::string old = read_file(log, kMaxLogBytes * 2, &err);
      old = old.substr(old.size() > kKeepLogBytes ? old.size() - kKeepLogBytes : 0);
      std::ofstream(log, std::ios::binary | std::ios::trunc) << old;
    }
    std::ofstream(log, std::ios::binary | std::ios::app) << bytes;
  }

  std::string status_json(const Service& s) const {
    JsonArray groups;
    for (gid_t g : s.id.groups) groups.raw(std::to_string(g));
    JsonArray exec;
    for (const auto& a : s.unit.exec) exec.str(a);
    JsonWriter w;
    w.str("name", s.unit.name).str("state", s.state).num("pid", int64_t(s.pid));
    if (s.pid > 0) {
      w.num("uid", uint64_t(s.id.uid)).num("gid", uint64_t(s.id.gid)).raw("groups", groups.done());
    }
    return w.num("restarts", uint64_t(s.restarts))
        .str("last_exit", s.last_exit)
        .str("user", s.unit.user)
        .raw("exec", exec.done())
        .done();
  }

  void write_status(const Service& s) {
    const fs::path p = state_ / (s.unit.name + ".status");
    const fs::path tmp = state_ / (s.unit.name + ".status.tmp");
    std::ofstream(tmp, std::ios::binary | std::ios::trunc) << status_json(s) << "\n";
    std::error_code ec;
    fs::rename(tmp, p, ec);
  }

  void on_control() {
    const int c = ::accept4(ctl_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    char buf[256];
    const ssize_t n = ::recv(c, buf, sizeof buf, 0);
    std::string reply = "error: empty request";
    if (n > 0) reply = command(std::string(buf, size_t(n)));
    (void)::send(c, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::close(c);
  }

  std::string command(const std::string& req) {
    const size_t sp = req.find(' ');
    if (sp == std::string::npos) return "error: expected CMD NAME";
    const std::string cmd = req.substr(0, sp), name = req.substr(sp + 1);
    auto it = services_.find(name);
    if (it == services_.end()) return "error: no unit " + name;
    Service& s = it->second;
    if (cmd == "status") return status_json(s);
    if (s.refused()) return "error: unit " + name + " was refused";
    if (cmd == "restart" || cmd == "start") {
      // The unit file is read again, as a real manager does after a daemon-reload: an edited
      // unit (its user, groups, environment) takes effect at this start.
      std::string err;
      const std::string text = read_file(units_ / (name + ".unit"), kMaxUnitBytes, &err);
      auto unit = err.empty() ? parse_unit(name, text) : Result<Unit>(Status::invalid(err));
      if (!unit.ok()) {
        note(s, cmd + " refused: the unit no longer parses: " + unit.status().message());
        return "error: unit " + name + ": " + unit.status().message();
      }
      s.unit = std::move(unit).value();
      if (s.pid > 0) {
        if (cmd == "start") return "ok: already running";
        s.restart_requested = true;
        ::kill(s.pid, SIGTERM);
      } else {
        s.recent_starts.clear();
        s.stop_requested = false;
        s.state = "starting";
        s.next_start_ms = now_ms();
      }
      note(s, cmd + " requested");
      return "ok";
    }
    if (cmd == "stop") {
      s.stop_requested = true;
      if (s.pid > 0)
        ::kill(s.pid, SIGTERM);
      else
        s.state = "stopped";
      write_status(s);
      return "ok";
    }
    if (cmd == "reload") {
      if (s.pid <= 0) return "error: not running";
      ::kill(s.pid, SIGHUP);
      note(s, "reload requested");
      return "ok";
    }
    return "error: unknown command " + cmd;
  }

  fs::path units_, state_;
  std::map<std::string, Service> services_;
  int sigfd_ = -1, ctl_ = -1;
  bool stopping_ = false;
};

int ctl(const fs::path& state, const std::string& cmd, const std::string& name) {
  const int c = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  const std::string path = (state / "control.sock").string();
  if (path.size() >= sizeof a.sun_path) return 2;
  std::strcpy(a.sun_path, path.c_str());
  if (::connect(c, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    std::cerr << "aura-svcman ctl: " << path << ": " << std::strerror(errno) << "\n";
    return 1;
  }
  const std::string req = cmd + " " + name;
  (void)::send(c, req.data(), req.size(), MSG_NOSIGNAL);
  char buf[4096];
  const ssize_t n = ::recv(c, buf, sizeof buf, 0);
  ::close(c);
  if (n <= 0) return 1;
  const std::string reply(buf, size_t(n));
  std::cout << reply << "\n";
  return reply.rfind("error", 0) == 0 ? 1 : 0;
}

int usage() {
  std::cerr << "usage: aura-svcman run --units DIR --state DIR\n"
               "       aura-svcman ctl --state DIR status|start|stop|restart|reload NAME\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.empty() || a[0] == "--help") return usage();
  std::string units, state;
  std::vector<std::string> rest;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i] == "--units" && i + 1 < a.size())
      units = a[++i];
    else if (a[i] == "--state" && i + 1 < a.size())
      state = a[++i];
    else
      rest.push_back(a[i]);
  }
  if (a[0] == "run" && !units.empty() && !state.empty() && rest.empty()) {
    return Manager(units, state).run();
  }
  if (a[0] == "ctl" && !state.empty() && rest.size() == 2) return ctl(state, rest[0], rest[1]);
  return usage();
}
