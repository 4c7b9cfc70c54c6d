// World networks on the real kernel: node namespaces on a bridge in the world's own switch
// namespace. Proved structurally (no default route, no host-side address, route or veth) and by
// traffic: nodes reach each other; a marked packet sent inside a world is never seen by a
// capture on every host interface; a node cannot reach the host's loopback or another world.
// Nothing is left after 100 create/destroy cycles.
#include "workers/netns/world_network.h"

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "tests/support/temp_dir.h"
#include "workers/sandbox/leak_ledger.h"

using namespace aura;
using netns::WorldNetwork;
namespace fs = std::filesystem;

namespace {

constexpr uint16_t kPort = 47001;
// How long a test waits for a packet that must arrive: a hang guard (it arrives within
// milliseconds idle; never a speed bar), so the wait ends as soon as it is seen.
constexpr int kArrivesWithinMs = 30'000;
// How long a test watches for a packet that must never arrive: an observation window, not a
// deadline (what the assertion proves does not depend on the machine's speed).
constexpr int kWatchMs = 1000;
const std::vector<std::string> kNodes = {"lb", "web1", "web2", "web3"};

std::string random_tag() {
  static uint32_t n = 0;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", unsigned(::getpid()), ++n);
  return buf;
}

std::set<std::string> host_interfaces() {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator("/sys/class/net")) out.insert(e.path().filename());
  return out;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Joins `node`'s network namespace (in a child process only).
bool join(const WorldNetwork& w, const std::string& node) {
  const std::string path = "/run/netns/" + w.netns_name(node);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::setns(fd, CLONE_NEWNET) == 0;
  ::close(fd);
  return ok;
}

int udp_bound(const std::string& addr, uint16_t port) {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, addr.c_str(), &a.sin_addr);
  if (s < 0 || ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
  return s;
}

// Sends `payload` to addr:port from a fresh socket of the current namespace; true if sendto
// accepted it (delivery is for the receiver to say).
bool udp_send(const std::string& addr, uint16_t port, std::string_view payload) {
  const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, addr.c_str(), &a.sin_addr);
  const bool ok = ::sendto(s, payload.data(), payload.size(), 0, reinterpret_cast<sockaddr*>(&a),
                           sizeof a) == ssize_t(payload.size());
  ::close(s);
  return ok;
}

// True if `s` receives a datagram containing `marker` within `ms`.
bool udp_receives(int s, std::string_view marker, int ms) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
  while (std::chrono::steady_clock::now() < end) {
    pollfd p{s, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    char buf[2048];
    const ssize_t n = ::recv(s, buf, sizeof buf, 0);
    if (n > 0 && std::string_view(buf, size_t(n)).find(marker) != std::string_view::npos)
      return true;
  }
  return false;
}

// A capture of every frame on every interface of the host's namespace.
struct HostCapture {
  int fd = -1;
  HostCapture() { fd = ::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL)); }
  ~HostCapture() {
    if (fd >= 0) ::close(fd);
  }
  // True if any frame seen within `ms` contains `marker`.
  bool sees(std::string_view marker, int ms) const {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      char buf[65536];
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n > 0 && std::string_view(buf, size_t(n)).find(marker) != std::string_view::npos)
        return true;
    }
    return false;
  }
};

}  // namespace

TEST_CASE("world network: the host's namespace gets no veth, address or route") {
  const auto ifaces_before = host_interfaces();
  const std::string routes_before = slurp("/proc/net/route");
  const std::string addrs_before = slurp("/proc/net/fib_trie");
  auto w = WorldNetwork::create(random_tag(), kNodes);
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  CHECK(host_interfaces() == ifaces_before);
  CHECK(slurp("/proc/net/route") == routes_before);
  CHECK(slurp("/proc/net/fib_trie") == addrs_before);
  CHECK(std::none_of(ifaces_before.begin(), ifaces_before.end(),
                     [](const std::string& i) { return i.rfind("p", 0) == 0 && i.size() < 4; }));

  // Inside each node: only lo and eth0, one on-link route, no default route.
  for (const auto& node : kNodes) {
    CAPTURE(node);
    auto rc = w->run_in(node, [] {
      std::set<std::string> ifaces;
      for (const auto& e : fs::directory_iterator("/sys/class/net")) {
        ifaces.insert(e.path().filename());
      }
      // /sys/class/net is the mounting namespace's view; /proc/self/net is this task's.
      const std::string dev = slurp("/proc/self/net/dev");
      if (dev.find("eth0:") == std::string::npos || dev.find("lo:") == std::string::npos) return 2;
      size_t lines = 0;
      for (char c : dev) lines += c == '\n';
      if (lines != 4) return 3;  // two header lines, lo, eth0
      std::istringstream routes(slurp("/proc/self/net/route"));
      std::string line;
      std::getline(routes, line);  // header
      size_t count = 0;
      while (std::getline(routes, line)) {
        std::istringstream f(line);
        std::string iface, dest;
        f >> iface >> dest;
        if (dest == "00000000") return 4;  // a default route
        if (iface != "eth0") return 5;
        ++count;
      }
      if (count != 1) return 6;
      // Every port may be bound by the node's own (unprivileged) processes.
      return slurp("/proc/sys/net/ipv4/ip_unprivileged_port_start") == "0\n" ? 0 : 7;
    });
    REQUIRE(rc.ok());
    CHECK(*rc == 0);
  }
  REQUIRE(w->destroy().is_ok());
}

TEST_CASE("world network: nodes reach each other; a marked packet never reaches the host") {
  auto w = WorldNetwork::create(random_tag(), kNodes);
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  HostCapture capture;
  REQUIRE_MESSAGE(capture.fd >= 0, "AF_PACKET capture unavailable");

  // The capture works: a marked packet on the host's own loopback is seen.
  const std::string host_marker = "AURA-HOST-CONTROL-" + w->tag();
  REQUIRE(udp_send("127.0.0.1", kPort, host_marker));
  CHECK(capture.sees(host_marker, kArrivesWithinMs));

  // Inside the world: lb -> web2 arrives; the same marker goes to a world address nobody has
  // and to the node's own loopback. Nothing is sent to any address off this machine.
  const std::string marker = "AURA-WORLD-MARK-" + w->tag();
  const std::string web2 = w->address("web2");
  auto rc = w->run_in("lb", [&] {
    if (!join(*w, "web2")) return 10;
    const int rx = udp_bound(web2, kPort);
    if (rx < 0) return 11;
    if (!join(*w, "lb")) return 12;
    for (int i = 0; i < 5; ++i) {
      udp_send(web2, kPort, marker);
      udp_send("10.77.0.250", kPort, marker);
      udp_send("127.0.0.1", kPort, marker);
    }
    return udp_receives(rx, marker, kArrivesWithinMs) ? 0 : 13;
  });
  REQUIRE(rc.ok());
  CHECK(*rc == 0);
  CHECK_FALSE(capture.sees(marker, kWatchMs));
  REQUIRE(w->destroy().is_ok());
}

TEST_CASE("world network: a node reaches neither the host's loopback nor another world") {
  auto a = WorldNetwork::create(random_tag(), kNodes);
  auto b = WorldNetwork::create(random_tag(), kNodes);
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const int host_rx = udp_bound("127.0.0.1", kPort + 1);
  REQUIRE(host_rx >= 0);
  const std::string marker = "AURA-CROSS-" + a->tag();
  const std::string web1 = a->address("web1");  // the same address exists in world b
  // world b's web1 listens; world a's lb sends to that address and to the host's loopback.
  auto rc = b->run_in("web1", [&] {
    const int rx_b = udp_bound(web1, kPort);
    if (rx_b < 0) return 20;
    if (!join(*a, "web1")) return 21;
    const int rx_a = udp_bound(web1, kPort);
    if (rx_a < 0) return 22;
    if (!join(*a, "lb")) return 23;
    for (int i = 0; i < 5; ++i) {
      udp_send(web1, kPort, marker);
      udp_send("127.0.0.1", kPort + 1, marker);
    }
    if (!udp_receives(rx_a, marker, kArrivesWithinMs)) return 24;  // its own world's web1 got it
    if (udp_receives(rx_b, marker, kWatchMs)) return 25;           // the other world's never did
    return 0;
  });
  REQUIRE(rc.ok());
  CHECK(*rc == 0);
  CHECK_FALSE(udp_receives(host_rx, marker, kWatchMs));
  ::close(host_rx);
}

TEST_CASE("world network: refuses bad names, and nothing is left after 100 cycles") {
  CHECK(WorldNetwork::create("xyz", kNodes).status().code() == ErrorCode::kInvalidArgument);
  CHECK(WorldNetwork::create(random_tag(), {"Web1"}).status().code() ==
        ErrorCode::kInvalidArgument);
  CHECK(WorldNetwork::create(random_tag(), {"a", "a"}).status().code() ==
        ErrorCode::kInvalidArgument);

  const auto ifaces_before = host_interfaces();
  std::vector<std::string> registered;
  for (int i = 0; i < 100; ++i) {
    auto w = WorldNetwork::create(random_tag(), {"lb", "web1", "web2"});
    REQUIRE_MESSAGE(w.ok(), w.status().message());
    for (const auto& n : w->registered_names()) {
      CHECK(fs::exists("/run/netns/" + n));
      registered.push_back(n);
    }
    REQUIRE(w->destroy().is_ok());
  }
  CHECK(registered.size() == 400);
  for (const auto& n : registered) CHECK_FALSE(fs::exists("/run/netns/" + n));
  CHECK(host_interfaces() == ifaces_before);
}

TEST_CASE("world network: the names a killed supervisor left are reaped from the ledger") {
  aura::testing::TempDir state;
  const std::string tag = random_tag();
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t dying = ::fork();
  REQUIRE(dying >= 0);
  if (dying == 0) {
    aura::sandbox::LeakLedger ledger(state.path());
    auto w = WorldNetwork::create(tag, {"lb", "web1"}, &ledger);
    (void)!::write(ready[1], w.ok() ? "y" : "n", 1);
    ::pause();  // killed while the world exists: nothing is destroyed
    ::_exit(0);
  }
  ::close(ready[1]);
  char c = 0;
  REQUIRE(::read(ready[0], &c, 1) == 1);
  REQUIRE(c == 'y');
  REQUIRE(::kill(dying, SIGKILL) == 0);
  ::waitpid(dying, nullptr, 0);
  const std::vector<std::string> names = {"aura-" + tag + "-sw", "aura-" + tag + "-n-lb",
                                          "aura-" + tag + "-n-web1"};
  for (const auto& n : names) CHECK(fs::exists("/run/netns/" + n));

  auto report = aura::sandbox::reap(state.path());
  REQUIRE(report.ok());
  CHECK(report->failures.empty());
  CHECK(report->runs_reaped == 1);
  CHECK(report->paths_removed == 3);
  for (const auto& n : names) CHECK_FALSE(fs::exists("/run/netns/" + n));
  CHECK(netns::netns_names_with_prefix("aura-" + tag).empty());
}
