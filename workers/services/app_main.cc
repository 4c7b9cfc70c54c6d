// aura-app: the small service of the O2 worlds (docs/SERVICES.md). It reads a config that holds
// a secret (so the config must stay unreadable to others), appends to a state file, and serves
// HTTP/1.0 on a Unix socket that the world's nginx proxies to. Every failure is one clear line
// on stderr (the service manager keeps it in the service's log) and a non-zero exit.
//   aura-app --config PATH
// Config lines: socket=/abs/path  state_dir=/abs/path  greeting=TEXT  secret=TEXT
//               socket_mode=0660 (octal, optional)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>

namespace {

volatile sig_atomic_t g_reload = 0;
volatile sig_atomic_t g_stop = 0;

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "aura-app: " << what << std::endl;
  std::exit(1);
}

// The target of a request's first line ("GET /x HTTP/1.0" gives "/x"), at most 128 bytes of
// printable ASCII (anything else becomes '?'): what the state record says was asked, so a check
// can tell its own request's record from any other.
std::string request_target(std::string_view request) {
  const size_t sp = request.find(' ');
  if (sp == std::string_view::npos) return "-";
  std::string_view rest = request.substr(sp + 1);
  rest = rest.substr(0, std::min(rest.find_first_of(" \r\n"), size_t(128)));
  std::string out(rest);
  for (char& c : out)
    if (c < 0x21 || c > 0x7e) c = '?';
  return out.empty() ? "-" : out;
}

std::map<std::string, std::string> read_config(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read config " + path + ": " + std::strerror(errno));
  std::map<std::string, std::string> c;
  std::string line;
  int n = 0;
  while (std::getline(in, line) && ++n <= 256) {
    if (line.empty() || line[0] == '#') continue;
    const size_t eq = line.find('=');
    if (eq == std::string::npos) fail("config line " + std::to_string(n) + ": not key=value");
    c[line.substr(0, eq)] = line.substr(eq + 1);
  }
  for (const char* k : {"socket", "state_dir", "greeting", "secret"}) {
    if (c[k].empty()) fail(std::string("config has no ") + k + "=");
  }
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || std::string(argv[1]) != "--config") {
    std::cerr << "usage: aura-app --config PATH\n";
    return 2;
  }
  const std::string config_path = argv[2];
  auto config = read_config(config_path);
  struct sigaction sa {};
  sa.sa_handler = [](int sig) {
    if (sig == SIGHUP)
      g_reload = 1;
    else
      g_stop = 1;
  };
  sigaction(SIGHUP, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const std::string state_file = config["state_dir"] + "/state";
  {
    std::ofstream st(state_file, std::ios::app);
    if (!st) fail("cannot write state " + state_file + ": " + std::strerror(errno));
    st << "started pid " << getpid() << " uid " << getuid() << "\n";
  }
  const std::string sock_path = config["socket"];
  ::unlink(sock_path.c_str());
  const int ls = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (sock_path.size() >= sizeof a.sun_path) fail("socket path too long");
  std::strcpy(a.sun_path, sock_path.c_str());
  if (::bind(ls, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    fail("cannot bind " + sock_path + ": " + std::strerror(errno));
  }
  const mode_t mode =
      config.count("socket_mode") ? mode_t(std::stoul(config["socket_mode"], nullptr, 8)) : 0660;
  if (::chmod(sock_path.c_str(), mode & 0777) != 0 || ::listen(ls, 16) != 0) {
    fail("cannot listen on " + sock_path + ": " + std::strerror(errno));
  }
  std::cerr << "aura-app: serving on " << sock_path << " as uid " << getuid() << std::endl;

  uint64_t served = 0;
  while (!g_stop) {
    if (g_reload) {
      g_reload = 0;
      config = read_config(config_path);
      std::cerr << "aura-app: config reloaded" << std::endl;
    }
    pollfd p{ls, POLLIN, 0};
    if (::poll(&p, 1, 500) <= 0) continue;
    const int c = ::accept4(ls, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) continue;
    char buf[4096];
    pollfd cp{c, POLLIN, 0};
    ssize_t n = ::poll(&cp, 1, 2000) > 0 ? ::recv(c, buf, sizeof buf, 0) : 0;
    if (n > 0) {
      ++served;
      std::ostringstream body;
      body << config["greeting"] << " (served by uid " << getuid() << ", request " << served
           << ")\n";
      std::ostringstream resp;
      resp << "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " << body.str().size()
           << "\r\nConnection: close\r\n\r\n"
           << body.str();
      const std::string r = resp.str();
      // The request is recorded before it is answered: once the answer arrives its record has
      // landed (the state.declared check reads the state file right after, without waiting).
      {
        std::ofstream st(state_file, std::ios::app);
        if (!st) {
          std::cerr << "aura-app: cannot write state " << state_file << ": " << std::strerror(errno)
                    << std::endl;
        } else {
          st << "served " << served << " " << request_target(std::string_view(buf, size_t(n)))
             << "\n";
        }
      }
      (void)::send(c, r.data(), r.size(), MSG_NOSIGNAL);
    }
    ::close(c);
  }
  ::unlink(sock_path.c_str());
  std::cerr << "aura-app: stopped" << std::endl;
  return 0;
}
