// `aura bench serve`: the HTTP front's attempt-state reads against Debian's nginx serving a
// static JSON file of the same size, with the same client in the same run, and the time from a
// command that appends to the event's arrival on the attempt's event stream.
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "app/cli/bench_http.h"
#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/lab/scenario_registry.h"
#include "engine/common/json_writer.h"
#include "engine/events/event_types.h"

namespace aura::cli {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
namespace {

struct LoadResult {
  uint64_t requests = 0, failures = 0;
  double seconds = 0;
  double p50_ms = 0, p99_ms = 0;
};

LoadResult load(uint16_t port, const std::string& request, size_t connections, double seconds) {
  std::atomic<bool> stop{false};
  std::vector<std::vector<double>> lat(connections);
  std::vector<uint64_t> fails(connections, 0);
  std::vector<std::thread> threads;
  auto began = Clock::now();
  for (size_t i = 0; i < connections; ++i) {
    threads.emplace_back([&, i] {
      int fd = connect_loopback(port);
      while (!stop) {
        if (fd < 0) {
          fails[i]++;
          fd = connect_loopback(port);
          continue;
        }
        auto t = Clock::now();
        int st = http(fd, request, nullptr);
        if (st != 200) {
          fails[i]++;
          ::close(fd);
          fd = -1;
          continue;
        }
        lat[i].push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
      }
      if (fd >= 0) ::close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  LoadResult r;
  r.seconds = std::chrono::duration<double>(Clock::now() - began).count();
  std::vector<double> all;
  for (size_t i = 0; i < connections; ++i) {
    all.insert(all.end(), lat[i].begin(), lat[i].end());
    r.failures += fails[i];
  }
  r.requests = all.size();
  if (!all.empty()) {
    std::sort(all.begin(), all.end());
    r.p50_ms = all[all.size() / 2];
    r.p99_ms = all[std::min(all.size() - 1, all.size() * 99 / 100)];
  }
  return r;
}

void print(const char* who, const LoadResult& r) {
  char line[256];
  std::snprintf(line, sizeof line,
                "  %-34s %9.0f req/s   p50 %6.2f ms   p99 %6.2f ms   (%llu requests, %llu "
                "failed)\n",
                who, r.requests / r.seconds, r.p50_ms, r.p99_ms, (unsigned long long)r.requests,
                (unsigned long long)r.failures);
  std::cout << line;
}

int bench_serve(Invocation& inv) {
  auto conns = inv.get_u64("connections", 64);
  auto secs = inv.get_u64("seconds", 10);
  auto rounds = inv.get_u64("rounds", 3);
  if (!conns.ok() || !secs.ok() || !rounds.ok() || *conns < 1 || *conns > 512 || *secs < 1 ||
      *secs > 600 || *rounds < 1 || *rounds > 10) {
    return inv.fail(
        Status::invalid("--connections must be 1..512, --seconds 1..600 and --rounds 1..10"), 2);
  }
  if (::access("/usr/sbin/nginx", X_OK) != 0) {
    return inv.fail(Status::unavailable("the peer needs Debian's nginx (/usr/sbin/nginx)"));
  }
  char tmpl[] = "/tmp/aura-bench-serve-XXXXXX";
  if (!::mkdtemp(tmpl)) return inv.fail(Status::io("mkdtemp"));
  const fs::path t = tmpl;
  // What the run leaves: nothing when it succeeded; when it failed, the front's log alone (its
  // path is in the error), never the lab's keys or data.
  BenchLab lab("bench serve", t, false);
  const uint16_t peer_port = free_port();
  auto cleanup = [&](int code) {
    lab.stop_serve();
    if (fs::exists(t / "nginx.pid")) {
      std::ifstream p(t / "nginx.pid");
      pid_t n = 0;
      p >> n;
      if (n > 0 && ::kill(n, SIGQUIT) == 0) {
        // nginx writes into the folder until it has gone (10 s at most: then it is left).
        for (int i = 0; i < 100 && ::kill(n, 0) == 0; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    lab.finish(code == 0);
    return code;
  };
  // A copy of the bundled packages: set-up signs them in place.
  if (Status s = lab.start(inv.has("scenarios") ? fs::path(inv.get("scenarios"))
                                                : app::default_scenarios_dir());
      !s.is_ok()) {
    return cleanup(inv.fail(s));
  }
  const uint16_t port = lab.port();
  const std::string host = "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  LabClient client(port);
  HttpAnswer created = client.post("/api/v1/attempts", R"({"scenario":"t0"})");
  if (created.status != 201) {
    return cleanup(inv.fail(Status::unavailable("could not start a t0 attempt: " + created.body)));
  }
  const std::string id = member_of(created.body, "attempt"), cap = member_of(created.body, "token");
  const std::string auth = "Authorization: Bearer " + cap + "\r\n";
  const std::string get = "GET /api/v1/attempts/" + id + " HTTP/1.1\r\n" + host + auth + "\r\n";
  HttpAnswer state = client.get("/api/v1/attempts/" + id, cap);
  if (state.status != 200) {
    return cleanup(inv.fail(Status::unavailable("attempt state: " + state.body)));
  }
  const std::string body = state.body;
  const size_t size = body.size();

  // The peer: nginx serving a file of the same size, same client, same run.
  fs::create_directories(t / "www");
  std::ofstream(t / "www" / "state.json") << body;
  fs::permissions(t / "www", fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec |
                                 fs::perms::group_read | fs::perms::others_read);
  std::ofstream(t / "nginx.conf")
      << "daemon on; worker_processes 2; pid " << (t / "nginx.pid").string() << ";\n"
      << "error_log " << (t / "nginx.error.log").string() << ";\n"
      << "events { worker_connections 1024; }\n"
      << "http { access_log off; keepalive_requests 1000000; default_type application/json;\n"
      << "  client_body_temp_path " << t.string() << "/nb; proxy_temp_path " << t.string()
      << "/np; fastcgi_temp_path " << t.string() << "/nf; uwsgi_temp_path " << t.string()
      << "/nu; scgi_temp_path " << t.string() << "/ns;\n"
      << "  server { listen 127.0.0.1:" << peer_port << "; root " << (t / "www").string()
      << "; } }\n";
  pid_t ng = spawn({"/usr/sbin/nginx", "-c", (t / "nginx.conf").string(), "-p", t.string()}, t,
                   t / "nginx.start.log");
  ::waitpid(ng, nullptr, 0);
  const std::string peer_get = "GET /state.json HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

  std::cout << "attempt-state reads, " << *conns << " keep-alive connections, " << *secs
            << " s each, a " << size << "-byte JSON body, loopback:" << std::endl;
  // Rounds, each aura serve then nginx: the peer's own figure moves from run to run (by a
  // fifth here), so each round's ratio is printed and the median ratio is the result.
  (void)load(port, get, *conns, 1);  // warm-ups
  (void)load(peer_port, peer_get, *conns, 1);
  std::vector<LoadResult> fronts, peers;
  std::vector<double> ratios;
  for (uint64_t round = 1; round <= *rounds; ++round) {
    if (*rounds > 1) std::cout << " round " << round << " of " << *rounds << ":" << std::endl;
    fronts.push_back(load(port, get, *conns, double(*secs)));
    print("aura serve GET /api/v1/attempts/ID", fronts.back());
    peers.push_back(load(peer_port, peer_get, *conns, double(*secs)));
    print("nginx (static file, the peer)", peers.back());
    const LoadResult &f = fronts.back(), &p = peers.back();
    ratios.push_back(p.requests ? (f.requests / f.seconds) / (p.requests / p.seconds) : 0);
    std::printf("  ratio %.2f of the peer's throughput\n", ratios.back());
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  std::vector<double> front_rps, peer_rps;
  double worst_p99 = 0;
  for (const auto& f : fronts) {
    front_rps.push_back(f.requests / f.seconds);
    worst_p99 = std::max(worst_p99, f.p99_ms);
  }
  for (const auto& p : peers) peer_rps.push_back(p.requests / p.seconds);
  const double ratio = median(ratios);
  if (*rounds > 1) {
    std::printf(
        " median of %llu rounds: aura serve %.0f req/s, nginx %.0f req/s, ratio %.2f (rounds "
        "%.2f to %.2f); aura serve's p99 at most %.2f ms\n",
        (unsigned long long)*rounds, median(front_rps), median(peer_rps), ratio,
        *std::min_element(ratios.begin(), ratios.end()),
        *std::max_element(ratios.begin(), ratios.end()), worst_p99);
  }
  uint64_t front_failures = 0;
  for (const auto& f : fronts) front_failures += f.failures;

  // An event's way to the stream: a command that appends, timed to the event's arrival.
  int sse = connect_loopback(port);
  std::string req = "GET /api/v1/attempts/" + id + "/events HTTP/1.1\r\n" + host + auth + "\r\n";
  ::send(sse, req.data(), req.size(), MSG_NOSIGNAL);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  char buf[65536];
  while (::recv(sse, buf, sizeof buf, MSG_DONTWAIT) > 0) {
  }
  LabClient cmd(port);
  (void)cmd.get("/api/v1/health");  // its connection opened before the clock starts
  auto t0 = Clock::now();
  int st = cmd.post("/api/v1/attempts/" + id + "/predict",
                    R"({"hypothesis":"stale-override","expect":"a bench"})", cap)
               .status;
  auto t_reply = Clock::now();
  std::string got;
  double arrival_ms = -1;
  while (st == 200) {
    ssize_t n = ::recv(sse, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, size_t(n));
    if (got.find(events::kAttemptPredicted) != std::string::npos) {
      arrival_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      break;
    }
  }
  ::close(sse);
  const double reply_ms = std::chrono::duration<double, std::milli>(t_reply - t0).count();
  std::printf(
      "  predict: reply after %.2f ms; attempt.predicted on the event stream after %.2f ms "
      "(both from the request's send)\n",
      reply_ms, arrival_ms);
  inv.emit_json(JsonWriter()
                    .num("connections", *conns)
                    .num("seconds", *secs)
                    .num("body_bytes", uint64_t(size))
                    .num("rounds", *rounds)
                    .real("serve_rps", median(front_rps))
                    .real("serve_p99_ms_max", worst_p99)
                    .num("serve_failures", front_failures)
                    .real("nginx_rps", median(peer_rps))
                    .real("ratio", ratio)
                    .real("sse_arrival_ms", arrival_ms)
                    .done());
  return cleanup(0);
}

}  // namespace

void register_bench_serve_commands(CommandTable& r) {
  r.add({"bench serve",
         "",
         "HTTP attempt-state reads through aura serve against nginx, and event-stream latency",
         "Starts aura serve (and its daemon) on a fresh lab in a temporary folder and a free\n"
         "loopback port, starts a t0 attempt, then reads its state with N keep-alive connections\n"
         "for S seconds; the same client then reads a static file of the same size from Debian's\n"
         "nginx on loopback (the peer, same run), R rounds of the two. Prints requests/s and\n"
         "p50/p99 for both each round, the median ratio of the rounds, and the\n"
         "time from a predict command's send to its event on the attempt's event stream. Run it\n"
         "from the repository root (the bundled scenarios of --scenarios are copied).",
         {{"connections", "N", "keep-alive connections (1..512, default 64)"},
          {"seconds", "S", "seconds per measured run (1..600, default 10)"},
          {"rounds", "R", "rounds of aura serve then nginx (1..10, default 3)"},
          {"scenarios", "DIR", "the packages to set the lab up with (default: the bundled ones)"}},
         0,
         0,
         bench_serve});
}

}  // namespace aura::cli
