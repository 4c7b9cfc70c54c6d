// `aura bench learners`: many scripted learners through the HTTP API at once, as many clients
// (each from a loopback address of its own). A read and a probe are timed on an idle lab, then
// while N learners walk t0 attempts end to end and K learners' O2 gates run on the daemon's gate
// pool; also commands and gates per unit of time, where the gate queue starts, and the memory a
// live world takes, by kind, measured on the machine.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "app/cli/bench_http.h"
#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/cli/world_memory.h"
#include "app/lab/scenario_registry.h"
#include "engine/common/json_writer.h"
#include "engine/json/json_reader.h"
#include "engine/scenario/manifest.h"

namespace aura::cli {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

// The samplers' pace: one read of an attempt's state every 5 ms and one probe every 20 ms (less
// when an answer takes longer), so what they measure is the lab's answer, not their own load.
constexpr auto kReadEvery = 5ms;
constexpr auto kProbeEvery = 20ms;
// A learner waiting for its gate reads its attempt's state this often; a gate's start and end
// are known to this precision.
constexpr auto kVerdictPoll = 100ms;
// Hang guard for one gate's verdict (an O1 gate takes minutes; t0 and O2 seconds).
constexpr auto kVerdictGuard = 15min;
// A gate refused with 429 (the queue is full) is asked again after this.
constexpr auto kGateRefusedRetry = 1s;
constexpr auto kProgressEvery = 10s;
// What a learner writes: its reflection, and the reason of an abandon.
constexpr const char* kReflection = R"({"text":"scripted by aura bench learners"})";
constexpr const char* kAbandon = R"({"reason":"aura bench learners: the run ended"})";

std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }

// Learner i of kind `group` connects from 127.0.<group>.<i>: the front counts clients by
// address, and N learners are N clients.
uint32_t loopback_address(uint8_t group, uint8_t i) {
  return (uint32_t(127) << 24) | (uint32_t(group) << 8) | i;
}
constexpr uint8_t kT0Group = 1, kO2Group = 2, kSamplerGroup = 3;

// A scenario's gold walk, from its package's judge case: the bench is the operator's tool and
// reads the answer key as judge mode does.
struct Walk {
  std::string scenario;  // the manifest id, as the API takes it
  std::string label;     // "t0", "O2"
  std::string hypothesis;
  std::vector<std::string> probes;  // call objects, JSON
  std::string ir;
};

Result<Walk> gold_walk(const fs::path& scenarios, const std::string& id, const std::string& label) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(scenarios, ec)) {
    auto bytes = read_small_file(e.path() / "manifest.json");
    if (!bytes.ok()) continue;
    auto m = scenario::parse_manifest(*bytes);
    if (!m.ok() || m->id != id) continue;
    const scenario::JudgeCase* gold = m->find_judge("gold");
    if (gold == nullptr || !gold->variants.empty() || gold->probe_calls_json.empty()) {
      return Status::failed_precondition(id + ": its gold case is not one fixed walk");
    }
    json::Reader r;
    auto ir = r.parse_object(gold->ir_json);
    if (!ir.ok()) return ir.status().with_context(id + ": the gold InterventionIR");
    auto h = ir->required_string("hypothesis");
    if (!h.ok()) return h.status().with_context(id + ": the gold InterventionIR");
    return Walk{id, label, std::string(*h), gold->probe_calls_json, gold->ir_json};
  }
  return Status::not_found("no package of scenario " + id + " in " + scenarios.string());
}

struct StateView {
  std::string phase, verdict;
  uint64_t last_seq = 0;
};

std::optional<StateView> state_of(const std::string& body) {
  json::Reader r;
  auto o = r.parse_object(body);
  if (!o.ok()) return std::nullopt;
  auto phase = o->optional_string("phase");
  auto verdict = o->optional_string("verdict");
  auto seq = o->optional_u64("last_seq");
  if (!phase.ok() || !*phase || !verdict.ok() || !seq.ok() || !*seq) return std::nullopt;
  return StateView{std::string(**phase), *verdict ? std::string(**verdict) : "", **seq};
}

// A number member of a JSON body, optionally inside the object member `in`.
std::optional<double> number_of(const std::string& body, std::string_view name,
                                std::string_view in = "") {
  json::Reader r;
  auto o = r.parse_object(body);
  if (!o.ok()) return std::nullopt;
  json::Object obj = *o;
  if (!in.empty()) {
    auto inner = o->optional_object(in);
    if (!inner.ok() || !*inner) return std::nullopt;
    obj = **inner;
  }
  auto v = obj.optional_value(name);
  if (!v) return std::nullopt;
  double d = 0;
  return v->element().get_double().get(d) ? std::nullopt : std::optional<double>(d);
}

struct GateRecord {
  std::string kind, learner;
  bool queued = false;
  int64_t position = 0;
  std::optional<double> expected_wait_s;
  int learners_started = 0;
  double asked_s = 0, started_s = -1, ended_s = -1;
  std::string verdict;
};

struct Sample {
  double at_s;  // when it was sent, from the run's start
  double ms;
};

// What the threads of one run share.
class Run {
 public:
  explicit Run(uint16_t port) : port(port), epoch_(Clock::now()) {}
  const uint16_t port;

  double now_s() const { return std::chrono::duration<double>(Clock::now() - epoch_).count(); }
  bool stopping() const { return stop_ || g_interrupted; }
  // The first failure is the one said; every thread winds down.
  void fail(const std::string& why) {
    std::lock_guard held(mu_);
    if (failure_.empty()) failure_ = why;
    stop_ = true;
  }
  std::string failure() const {
    std::lock_guard held(mu_);
    return failure_;
  }
  void track(const std::string& id, const std::string& token) {
    std::lock_guard held(mu_);
    live_[id] = token;
  }
  void untrack(const std::string& id) {
    std::lock_guard held(mu_);
    live_.erase(id);
  }
  std::map<std::string, std::string> live() const {
    std::lock_guard held(mu_);
    return live_;
  }
  // An ack answered with a new readback to acknowledge; the first is kept, words and all.
  void ack_again(const std::string& what) {
    std::lock_guard held(mu_);
    if (acks_again_++ == 0) first_ack_again_ = what;
  }
  std::pair<uint64_t, std::string> acks_again() const {
    std::lock_guard held(mu_);
    return {acks_again_, first_ack_again_};
  }
  void add_gate(GateRecord g) {
    std::lock_guard held(mu_);
    gates_.push_back(std::move(g));
  }
  std::vector<GateRecord> gates() const {
    std::lock_guard held(mu_);
    return gates_;
  }

  std::atomic<bool> loaded{false};  // the loaded phase: learners' commands are counted
  std::atomic<int> learners_started{0};
  std::atomic<uint64_t> commands{0}, requests{0}, gates_refused{0};

 private:
  const Clock::time_point epoch_;
  mutable std::mutex mu_;
  std::atomic<bool> stop_{false};
  std::string failure_;
  std::map<std::string, std::string> live_;  // attempt → token: abandoned at the end
  std::vector<GateRecord> gates_;
  uint64_t acks_again_ = 0;
  std::string first_ack_again_;
};

// One scripted learner: a client of its own, one attempt at a time, the walk's commands in
// order. A command whose answer is not the one the walk expects fails the run, naming both.
class Learner {
 public:
  Learner(Run& run, const Walk& walk, std::string name, uint32_t source)
      : run_(run), walk_(walk), name_(std::move(name)), client_(run.port, source) {}

  // create, predict, the walk's probes, intervention, apply, ack, verify: the attempt is then
  // in transfer_gate. False when the run stops (a failure is recorded).
  bool to_gate() {
    id_.clear();
    token_.clear();
    HttpAnswer a;
    if (!send("create", R"({"scenario":")" + walk_.scenario + R"(","learner":")" + name_ + "\"}",
              201, &a))
      return false;
    id_ = member_of(a.body, "attempt");
    token_ = member_of(a.body, "token");
    if (id_.empty() || token_.empty()) return refuse("create", a);
    run_.track(id_, token_);
    if (!send("predict",
              R"({"hypothesis":")" + walk_.hypothesis + R"(","expect":"the gold walk's evidence"})",
              200))
      return false;
    for (const auto& p : walk_.probes)
      if (!send("probe", p, 200)) return false;
    if (!send("intervention", walk_.ir, 200)) return false;
    if (!send("apply", "{}", 200, &a)) return false;
    if (!acknowledge(a)) return false;
    if (!send("verify", "{}", 200, &a)) return false;
    if (a.body.find("\"recovered\":true") == std::string::npos) return refuse("verify", a);
    return true;
  }

  // gate, its verdict, the receipt (VERIFIED), reflect: the attempt is done.
  bool finish() {
    auto before = read_state();
    if (!before) return false;
    GateRecord g;
    g.kind = walk_.label;
    g.learner = name_;
    HttpAnswer a;
    for (;;) {
      g.asked_s = run_.now_s();
      g.learners_started = run_.learners_started;
      a = post("gate", "{}");
      if (a.status != 429) break;
      run_.gates_refused++;
      if (run_.stopping()) return false;
      std::this_thread::sleep_for(kGateRefusedRetry);
    }
    if (a.status != 202) return refuse("gate", a);
    g.queued = member_of(a.body, "gate") == "queued";
    g.position = int64_t(number_of(a.body, "queue_position").value_or(0));
    g.expected_wait_s = number_of(a.body, "expected_wait_s");
    if (!g.queued) g.started_s = g.asked_s;
    const auto guard = Clock::now() + kVerdictGuard;
    for (;;) {
      if (run_.stopping()) return false;
      auto s = read_state();
      if (!s) return false;
      if (g.started_s < 0 && s->last_seq > before->last_seq) g.started_s = run_.now_s();
      if (s->phase != "transfer_gate") {
        g.ended_s = run_.now_s();
        if (g.started_s < 0) g.started_s = g.ended_s;
        g.verdict = s->verdict;
        break;
      }
      if (Clock::now() > guard) {
        run_.fail("learner " + name_ + " (" + walk_.label + "): the gate of attempt " + id_ +
                  " gave no verdict in " + std::to_string(kVerdictGuard.count()) + " minutes");
        return false;
      }
      std::this_thread::sleep_for(kVerdictPoll);
    }
    run_.add_gate(g);
    if (g.verdict == "VERIFIED" && !send("receipt", "{}", 200)) return false;
    if (!send("reflect", kReflection, 200)) return false;
    run_.untrack(id_);
    ++attempts_done;
    return true;
  }

  // Attempts, each to its end, until `until_s` (the run's clock) or the run stops.
  void walk_until(double until_s) {
    while (!run_.stopping() && run_.now_s() < until_s) {
      if (!to_gate() || !finish()) return;
    }
  }

  const std::string& kind() const { return walk_.label; }
  std::map<std::string, std::vector<double>> latencies_ms;  // per command, loaded phase only
  size_t attempts_done = 0;

 private:
  HttpAnswer post(const std::string& command, const std::string& body) {
    HttpAnswer a = command == "create"
                       ? client_.post("/api/v1/attempts", body)
                       : client_.post("/api/v1/attempts/" + id_ + "/" + command, body, token_);
    run_.requests++;
    if (run_.loaded) {
      run_.commands++;
      latencies_ms[command].push_back(a.ms);
    }
    return a;
  }
  bool send(const std::string& command, const std::string& body, int want,
            HttpAnswer* out = nullptr) {
    if (run_.stopping()) return false;
    HttpAnswer a = post(command, body);
    if (a.status != want) return refuse(command, a);
    if (out) *out = std::move(a);
    return true;
  }
  // ack of the readback `applied` showed. When the world read back again differs from what
  // was shown but is as requested (the apply's readback caught a service still starting), the
  // lab records a new readback and answers 409 naming its seq: the learner reads it and
  // acknowledges that one, as docs/ATTEMPTS.md says a learner does.
  bool acknowledge(const HttpAnswer& applied) {
    auto readback = number_of(applied.body, "readback_seq", "readback");
    for (int tries = 0;; ++tries) {
      const std::string body = readback ? R"({"note":"as shown","readback_seq":)" +
                                              std::to_string(uint64_t(*readback)) + "}"
                                        : R"({"note":"as shown"})";
      if (run_.stopping()) return false;
      HttpAnswer a = post("ack", body);
      if (a.status == 200) return true;
      // The API names the new readback's seq only in the message's words.
      constexpr std::string_view kNew = "recorded it as ack.readback at seq ";
      const size_t at = a.body.find(kNew);
      if (a.status != 409 || at == std::string::npos || tries == 2) return refuse("ack", a);
      readback = std::strtod(a.body.c_str() + at + kNew.size(), nullptr);
      run_.ack_again("learner " + name_ + " (" + walk_.label + ", attempt " + id_ +
                     "): apply answered " + applied.body + "; ack answered 409 " + a.body);
    }
  }
  bool refuse(const std::string& command, const HttpAnswer& a) {
    run_.fail("learner " + name_ + " (" + walk_.label + ", attempt " + (id_.empty() ? "-" : id_) +
              "): " + command + " answered " +
              (a.status < 0 ? "nothing (the connection failed)"
                            : std::to_string(a.status) + " " + a.body));
    return false;
  }
  std::optional<StateView> read_state() {
    HttpAnswer a = client_.get("/api/v1/attempts/" + id_, token_);
    run_.requests++;
    auto s = a.status == 200 ? state_of(a.body) : std::nullopt;
    if (!s) refuse("GET state", a);
    return s;
  }

  Run& run_;
  const Walk& walk_;
  const std::string name_;
  LabClient client_;
  std::string id_, token_;
};

// The read sampler: its own t0 attempt's state, read every kReadEvery until `done`.
void sample_reads(Run& run, const std::string& id, const std::string& token,
                  const std::atomic<bool>& done, std::vector<Sample>* out) {
  LabClient c(run.port, loopback_address(kSamplerGroup, 1));
  const std::string path = "/api/v1/attempts/" + id;
  auto next = Clock::now();
  while (!done && !run.stopping()) {
    const double at = run.now_s();
    HttpAnswer a = c.get(path, token);
    run.requests++;
    if (a.status != 200) {
      run.fail("the read sampler: GET " + path + " answered " + std::to_string(a.status) + " " +
               a.body);
      return;
    }
    out->push_back({at, a.ms});
    next += kReadEvery;
    std::this_thread::sleep_until(std::max(next, Clock::now()));
    if (next < Clock::now()) next = Clock::now();
  }
}

// The probe sampler: the t0 walk's first probe, again and again, on attempts of its own (a
// fresh one when the budget is spent), every kProbeEvery until `done`.
void sample_probes(Run& run, const Walk& t0, const std::atomic<bool>& done,
                   std::vector<Sample>* out) {
  LabClient c(run.port, loopback_address(kSamplerGroup, 2));
  auto next = Clock::now();
  std::string id, token;
  double left = 0;
  auto fail = [&](const std::string& what, const HttpAnswer& a) {
    run.fail("the probe sampler: " + what + " answered " + std::to_string(a.status) + " " + a.body);
  };
  while (!done && !run.stopping()) {
    if (left < 1) {
      if (!id.empty()) {
        HttpAnswer a = c.post("/api/v1/attempts/" + id + "/abandon", kAbandon, token);
        if (a.status != 200) return fail("abandon", a);
        run.untrack(id);
      }
      HttpAnswer a = c.post("/api/v1/attempts",
                            R"({"scenario":")" + t0.scenario + R"(","learner":"bench-prober"})");
      if (a.status != 201) return fail("create", a);
      id = member_of(a.body, "attempt");
      token = member_of(a.body, "token");
      run.track(id, token);
      a = c.post("/api/v1/attempts/" + id + "/predict",
                 R"({"hypothesis":")" + t0.hypothesis + R"(","expect":"a probe sampler"})", token);
      if (a.status != 200) return fail("predict", a);
      left = 1;
    }
    const double at = run.now_s();
    HttpAnswer a = c.post("/api/v1/attempts/" + id + "/probe", t0.probes.front(), token);
    run.requests++;
    if (a.status != 200) return fail("probe", a);
    out->push_back({at, a.ms});
    const double budget = number_of(a.body, "budget").value_or(0);
    const double spent = number_of(a.body, "spent").value_or(budget);
    const double cost = std::max(1.0, number_of(a.body, "cost").value_or(1));
    left = (budget - spent) / cost;
    next += kProbeEvery;
    std::this_thread::sleep_until(std::max(next, Clock::now()));
    if (next < Clock::now()) next = Clock::now();
  }
}

struct Stat {
  size_t n = 0;
  double p50 = 0, p99 = 0;
};

Stat stat_of(const std::vector<double>& v) {
  return {v.size(), percentile(v, 0.5), percentile(v, 0.99)};
}

std::string stat_json(const Stat& s) {
  return JsonWriter()
      .num("count", uint64_t(s.n))
      .real("p50_ms", s.p50)
      .real("p99_ms", s.p99)
      .done();
}

// The samples sent in [from, to) and, when `windows` is given, inside (`inside`) or outside
// every one of its intervals.
std::vector<double> select(const std::vector<Sample>& all, double from, double to,
                           const std::vector<std::pair<double, double>>* windows = nullptr,
                           bool inside = true) {
  std::vector<double> out;
  for (const auto& s : all) {
    if (s.at_s < from || s.at_s >= to) continue;
    if (windows) {
      bool in = false;
      for (const auto& [a, b] : *windows) in = in || (s.at_s >= a && s.at_s < b);
      if (in != inside) continue;
    }
    out.push_back(s.ms);
  }
  return out;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one_minute = 0;
  in >> one_minute;
  return one_minute;
}

double mib(uint64_t bytes) { return double(bytes) / (1024.0 * 1024.0); }

std::string memory_json(const WorldMemory& m) {
  const double w = m.worlds ? double(m.worlds) : 1;
  return JsonWriter()
      .num("worlds", uint64_t(m.worlds))
      .num("cgroups", uint64_t(m.cgroups))
      .num("processes", uint64_t(m.processes))
      .num("cgroup_bytes_per_world", uint64_t(double(m.cgroup_bytes) / w))
      .num("pss_bytes_per_world", uint64_t(double(m.pss_bytes) / w))
      .num("disk_bytes_per_world", uint64_t(double(m.disk_bytes) / w))
      .done();
}

// ---- the bench ----

struct Options {
  uint64_t learners = 8, o2 = 2, seconds = 60, idle_seconds = 10, ramp_ms = 1000;
};

// What one run measured; the figures are computed from it afterwards.
struct Measured {
  double idle_from = 0, idle_to = 0, loaded_from = 0, loaded_to = 0;
  std::vector<Sample> reads, probes;
  std::vector<GateRecord> gates;
  // Per world kind ("t0", "O2"), per learner command.
  std::map<std::string, std::map<std::string, std::vector<double>>> latencies_ms;
  size_t t0_done = 0, o2_done = 0;
  uint64_t commands = 0, requests = 0, gates_refused = 0;
  uint64_t acks_again = 0;      // acks answered with a newer readback to acknowledge
  std::string first_ack_again;  // the first such exchange, as the learner saw it
  WorldMemory o2_memory, t0_memory;
  uint64_t daemon_pss = 0, front_pss = 0;
  // The machine's 1-minute load average at the idle phase's start and the loaded phase's end:
  // whatever else ran on it is in every figure.
  double load_before = 0, load_after = 0;
};

// One run's learners and samplers on a started lab, phase after phase. Every phase returns
// false when the run stops (a failure, or a signal); abandon_live() then ends what is left.
class Bench {
 public:
  Bench(const Options& o, const BenchLab& lab, Walk t0, std::optional<Walk> o2)
      : o_(o), lab_(lab), run_(lab.port()), t0_(std::move(t0)), o2_(std::move(o2)) {}
  ~Bench() { stop_samplers(); }

  Run& run() { return run_; }
  const Measured& measured() const { return m_; }

  // The read sampler's attempt, and the O2 learners' first attempts walked to their gates
  // (their live worlds up), one after another.
  bool set_up() {
    std::cerr << "setting up: the read sampler's attempt and " << o_.o2
              << " O2 attempts walked to their gates" << std::endl;
    LabClient c(run_.port, loopback_address(kSamplerGroup, 1));
    HttpAnswer a = c.post("/api/v1/attempts",
                          R"({"scenario":")" + t0_.scenario + R"(","learner":"bench-reader"})");
    reader_id_ = member_of(a.body, "attempt");
    reader_token_ = member_of(a.body, "token");
    if (a.status != 201 || reader_id_.empty()) {
      run_.fail("the read sampler: create answered " + std::to_string(a.status) + " " + a.body);
      return false;
    }
    run_.track(reader_id_, reader_token_);
    for (uint64_t k = 0; k < o_.o2; ++k) {
      o2_learners_.push_back(std::make_unique<Learner>(
          run_, *o2_, "bench-o2-" + std::to_string(k + 1), loopback_address(kO2Group, k + 1)));
      if (!o2_learners_.back()->to_gate()) return false;
    }
    return true;
  }

  // Memory per live world, while nothing runs: the O2 learners' worlds (their nodes' groups
  // and processes) and the t0 worlds of the live attempts (files only: a filetree world runs
  // no process); the daemon and the front beside them.
  void measure_memory() {
    const fs::path data = lab_.root() / "data";
    m_.o2_memory = nodes_world_memory(data, o_.o2);
    for (const auto& [id, token] : run_.live()) {
      const fs::path live = data / "worlds" / id / "live";
      std::ifstream state(live / "world.state");
      std::string magic;
      if (!(state >> magic) || magic != "aura-filetree-world") continue;
      m_.t0_memory.worlds++;
      m_.t0_memory.disk_bytes += disk_bytes(live);
    }
    const auto daemon = number_of(LabClient(run_.port).get("/api/v1/health").body, "pid", "daemon");
    m_.daemon_pss = daemon ? pss_bytes(pid_t(*daemon)) : 0;
    m_.front_pss = pss_bytes(lab_.serve_pid());
  }

  // The idle lab: the samplers alone (they go on until the end of the loaded phase).
  bool idle_phase() {
    std::cerr << "phase 1: the idle lab, a read every " << kReadEvery.count()
              << " ms and a probe every " << kProbeEvery.count() << " ms for " << o_.idle_seconds
              << " s" << std::endl;
    reader_ = std::thread(sample_reads, std::ref(run_), reader_id_, reader_token_,
                          std::cref(samplers_done_), &m_.reads);
    prober_ = std::thread(sample_probes, std::ref(run_), std::cref(t0_), std::cref(samplers_done_),
                          &m_.probes);
    m_.load_before = load_average();
    m_.idle_from = run_.now_s();
    while (!run_.stopping() && run_.now_s() < m_.idle_from + double(o_.idle_seconds))
      std::this_thread::sleep_for(50ms);
    m_.idle_to = run_.now_s();
    return !run_.stopping();
  }

  // The t0 learners, one more every ramp_ms; once all have started, the O2 learners' gates;
  // every learner starts attempts until `seconds` have passed and walks each to its end.
  bool loaded_phase() {
    std::cerr << "phase 2: " << o_.learners << " t0 learners (one more every " << o_.ramp_ms
              << " ms) and " << o_.o2 << " O2 learners, new attempts for " << o_.seconds << " s"
              << std::endl;
    run_.loaded = true;
    m_.loaded_from = run_.now_s();
    const double until = m_.loaded_from + double(o_.seconds);
    std::vector<std::unique_ptr<Learner>> t0_learners;
    for (uint64_t i = 0; i < o_.learners; ++i) {
      t0_learners.push_back(std::make_unique<Learner>(
          run_, t0_, "bench-t0-" + std::to_string(i + 1), loopback_address(kT0Group, i + 1)));
    }
    std::vector<std::thread> threads;
    for (uint64_t i = 0; i < o_.learners; ++i) {
      threads.emplace_back([&, i, l = t0_learners[i].get()] {
        std::this_thread::sleep_for(std::chrono::milliseconds(o_.ramp_ms * i));
        if (run_.stopping()) return;
        run_.learners_started++;
        l->walk_until(until);
      });
    }
    for (auto& o2 : o2_learners_) {
      threads.emplace_back([&, l = o2.get()] {
        while (!run_.stopping() && run_.learners_started < int(o_.learners))
          std::this_thread::sleep_for(10ms);
        if (l->finish()) l->walk_until(until);
      });
    }
    std::atomic<bool> done{false};
    std::thread progress([&] {
      auto next = Clock::now() + kProgressEvery;
      while (!done) {
        std::this_thread::sleep_for(100ms);
        if (Clock::now() < next) continue;
        next += kProgressEvery;
        std::fprintf(stderr, "  %.0f s: %d learners started, %zu gates done, %zu attempts live\n",
                     run_.now_s() - m_.loaded_from, run_.learners_started.load(),
                     run_.gates().size(), run_.live().size());
      }
    });
    for (auto& t : threads) t.join();
    done = true;
    progress.join();
    m_.loaded_to = run_.now_s();
    m_.load_after = load_average();
    run_.loaded = false;
    stop_samplers();
    for (const auto* group : {&t0_learners, &o2_learners_}) {
      for (const auto& l : *group) {
        (group == &t0_learners ? m_.t0_done : m_.o2_done) += l->attempts_done;
        auto& mine = m_.latencies_ms[l->kind()];
        for (const auto& [c, v] : l->latencies_ms)
          mine[c].insert(mine[c].end(), v.begin(), v.end());
      }
    }
    m_.gates = run_.gates();
    m_.commands = run_.commands;
    m_.requests = run_.requests;
    m_.gates_refused = run_.gates_refused;
    std::tie(m_.acks_again, m_.first_ack_again) = run_.acks_again();
    return !run_.stopping();
  }

  // Abandons every attempt still live (the run's end, whatever it was). Quiet unless `loud`.
  void abandon_live(bool loud) {
    stop_samplers();
    LabClient c(run_.port);
    for (const auto& [id, token] : run_.live()) {
      HttpAnswer a = c.post("/api/v1/attempts/" + id + "/abandon", kAbandon, token);
      if (a.status != 200 && loud) {
        std::cerr << "aura bench learners: abandon " << id << " answered " << a.status << " "
                  << a.body << "\n";
      }
    }
  }

 private:
  void stop_samplers() {
    samplers_done_ = true;
    if (reader_.joinable()) reader_.join();
    if (prober_.joinable()) prober_.join();
  }

  const Options o_;
  const BenchLab& lab_;
  Run run_;
  const Walk t0_;
  const std::optional<Walk> o2_;
  std::vector<std::unique_ptr<Learner>> o2_learners_;
  std::string reader_id_, reader_token_;
  std::atomic<bool> samplers_done_{false};
  std::thread reader_, prober_;
  Measured m_;
};

// The figures of a run.
struct Figures {
  Stat idle_read, idle_probe;    // phase 1
  Stat gate_read, gate_probe;    // phase 2, sent while at least one O2 gate ran
  Stat other_read, other_probe;  // phase 2, sent while none did
  double o2_gate_s = 0;          // how long at least one O2 gate ran
  double read_p99_ratio = 0;     // gate_read.p99 / idle_read.p99 (0: no sample)
  double loaded_s = 0;
  std::map<std::string, std::vector<double>> gate_s, wait_s;  // per kind: running, queued
  std::map<std::string, size_t> verdicts;
  std::optional<GateRecord> first_queued;
  size_t queued = 0;
  int64_t max_position = 0;
  std::map<int64_t, size_t> positions;  // queue position → gates told it
  // The queued gates' wait, as the answer expected it and as it was.
  std::vector<double> expected_wait_s, queued_wait_s;
};

Figures figures_of(const Measured& m) {
  Figures f;
  std::vector<std::pair<double, double>> o2_windows;
  for (const auto& g : m.gates) {
    if (g.kind == "O2") o2_windows.push_back({g.started_s, g.ended_s});
    f.gate_s[g.kind].push_back(g.ended_s - g.started_s);
    f.wait_s[g.kind].push_back(g.started_s - g.asked_s);
    f.verdicts[g.verdict]++;
    if (!g.queued) continue;
    f.queued++;
    f.positions[g.position]++;
    f.max_position = std::max(f.max_position, g.position);
    if (g.expected_wait_s) {
      f.expected_wait_s.push_back(*g.expected_wait_s);
      f.queued_wait_s.push_back(g.started_s - g.asked_s);
    }
    if (!f.first_queued || g.asked_s < f.first_queued->asked_s) f.first_queued = g;
  }
  std::sort(o2_windows.begin(), o2_windows.end());
  double covered_to = -1;
  for (const auto& [a, b] : o2_windows) {
    f.o2_gate_s += std::max(0.0, b - std::max(a, covered_to));
    covered_to = std::max(covered_to, b);
  }
  f.idle_read = stat_of(select(m.reads, m.idle_from, m.idle_to));
  f.idle_probe = stat_of(select(m.probes, m.idle_from, m.idle_to));
  f.gate_read = stat_of(select(m.reads, m.loaded_from, m.loaded_to, &o2_windows, true));
  f.gate_probe = stat_of(select(m.probes, m.loaded_from, m.loaded_to, &o2_windows, true));
  f.other_read = stat_of(select(m.reads, m.loaded_from, m.loaded_to, &o2_windows, false));
  f.other_probe = stat_of(select(m.probes, m.loaded_from, m.loaded_to, &o2_windows, false));
  f.read_p99_ratio =
      f.idle_read.p99 > 0 && f.gate_read.n > 0 ? f.gate_read.p99 / f.idle_read.p99 : 0;
  f.loaded_s = m.loaded_to - m.loaded_from;
  return f;
}

double max_of(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

void print_report(const Options& o, const Measured& m, const Figures& f) {
  std::printf(
      "aura bench learners: %llu t0 learners (one more every %llu ms), %llu O2 learners; idle "
      "phase %.1f s, loaded phase %.1f s\n",
      (unsigned long long)o.learners, (unsigned long long)o.ramp_ms, (unsigned long long)o.o2,
      m.idle_to - m.idle_from, f.loaded_s);
  std::printf(
      "machine: %u cores, load average %.2f before the idle phase, %.2f after the loaded "
      "phase\n",
      std::thread::hardware_concurrency(), m.load_before, m.load_after);
  std::printf("memory per live world (measured with no gate or command running):\n");
  if (const WorldMemory& w = m.o2_memory; w.worlds > 0) {
    std::printf(
        "  O2 (nodes world): %.1f MiB in its memory cgroups (%zu groups for %zu worlds), PSS "
        "%.1f MiB of its processes, keepers and holder (%zu processes in all)\n",
        mib(w.cgroup_bytes) / double(w.worlds), w.cgroups, w.worlds,
        mib(w.pss_bytes) / double(w.worlds), w.processes);
  }
  if (const WorldMemory& w = m.t0_memory; w.worlds > 0) {
    std::printf(
        "  t0 (filetree world): no process and no cgroup; %.1f KiB of files in the data folder "
        "(%zu worlds)\n",
        double(w.disk_bytes) / 1024.0 / double(w.worlds), w.worlds);
  }
  std::printf("  beside them: the daemon PSS %.1f MiB, the front PSS %.1f MiB\n", mib(m.daemon_pss),
              mib(m.front_pss));
  std::printf("%-44s %8s %9s %9s   %8s %9s %9s\n", "", "reads", "p50 ms", "p99 ms", "probes",
              "p50 ms", "p99 ms");
  auto row = [](const std::string& what, const Stat& r, const Stat& p) {
    std::printf("  %-42s %8zu %9.2f %9.2f   %8zu %9.2f %9.2f\n", what.c_str(), r.n, r.p50, r.p99,
                p.n, p.p50, p.p99);
  };
  char during[96];
  std::snprintf(during, sizeof during, "loaded, while O2 gates ran (%.1f s)", f.o2_gate_s);
  row("idle lab", f.idle_read, f.idle_probe);
  row(during, f.gate_read, f.gate_probe);
  row("loaded, no O2 gate running", f.other_read, f.other_probe);
  if (f.gate_read.n > 0) {
    std::printf("read p99 while O2 gates ran / idle: %.2fx (aim: at most 2x): %s\n",
                f.read_p99_ratio, f.read_p99_ratio <= 2.0 ? "met" : "NOT met");
  } else {
    std::printf("read p99 while O2 gates ran: no sample (no O2 gate ran)\n");
  }
  std::printf(
      "loaded phase: %llu learner commands, %.1f per second; %llu requests in all, %.1f per "
      "second\n",
      (unsigned long long)m.commands, double(m.commands) / f.loaded_s,
      (unsigned long long)m.requests, double(m.requests) / f.loaded_s);
  std::printf("  attempts walked to their end: t0 %zu, O2 %zu; verdicts:", m.t0_done, m.o2_done);
  for (const auto& [v, n] : f.verdicts) std::printf(" %s %zu", v.c_str(), n);
  std::printf("\n  gates: %zu, %.1f per minute\n", m.gates.size(),
              double(m.gates.size()) / (f.loaded_s / 60.0));
  for (const auto& [kind, v] : f.gate_s) {
    const auto& w = f.wait_s.at(kind);
    std::printf("    %s gate: p50 %.2f s, max %.2f s; waited in the queue p50 %.2f s, max %.2f s\n",
                kind.c_str(), percentile(v, 0.5), max_of(v), percentile(w, 0.5), max_of(w));
  }
  if (f.first_queued) {
    std::printf(
        "  the queue starts: the first 'queued' answer %.1f s into the phase, with %d of %llu t0 "
        "learners started (position %lld)\n",
        f.first_queued->asked_s - m.loaded_from, f.first_queued->learners_started,
        (unsigned long long)o.learners, (long long)f.first_queued->position);
    std::printf("  %zu of %zu gates queued; positions seen:", f.queued, m.gates.size());
    for (const auto& [p, n] : f.positions) std::printf(" %lld (x%zu)", (long long)p, n);
    std::printf("\n");
    if (!f.expected_wait_s.empty()) {
      std::printf(
          "  the wait a queued gate was told, p50 %.2f s (max %.2f), against the wait it had, p50 "
          "%.2f s (max %.2f), %zu gates\n",
          percentile(f.expected_wait_s, 0.5), max_of(f.expected_wait_s),
          percentile(f.queued_wait_s, 0.5), max_of(f.queued_wait_s), f.expected_wait_s.size());
    }
  } else {
    std::printf("  the queue never started: every gate answered 'started'\n");
  }
  std::printf("  gates refused (429, the queue full): %llu\n", (unsigned long long)m.gates_refused);
  std::printf("  acks answered 409 with a newer readback to acknowledge: %llu\n",
              (unsigned long long)m.acks_again);
  if (m.acks_again > 0) std::fprintf(stderr, "the first: %s\n", m.first_ack_again.c_str());
  std::printf("learners' commands in the loaded phase (ms):\n");
  for (const auto& [kind, commands] : m.latencies_ms) {
    for (const auto& [c, v] : commands) {
      std::printf("  %-3s %-14s %6zu   p50 %8.2f   p99 %8.2f\n", kind.c_str(), c.c_str(), v.size(),
                  percentile(v, 0.5), percentile(v, 0.99));
    }
  }
}

std::string report_json(const Options& o, const Measured& m, const Figures& f) {
  auto reads_and_probes = [](const Stat& r, const Stat& p) {
    return JsonWriter().raw("read", stat_json(r)).raw("probe", stat_json(p));
  };
  JsonWriter latencies;
  for (const auto& [kind, commands] : m.latencies_ms) {
    JsonWriter of_kind;
    for (const auto& [c, v] : commands) of_kind.raw(c, stat_json(stat_of(v)));
    latencies.raw(kind, of_kind.done());
  }
  JsonWriter gate;
  for (const auto& [kind, v] : f.gate_s) {
    const auto& w = f.wait_s.at(kind);
    gate.raw(kind, JsonWriter()
                       .num("count", uint64_t(v.size()))
                       .real("p50_s", percentile(v, 0.5))
                       .real("max_s", max_of(v))
                       .real("wait_p50_s", percentile(w, 0.5))
                       .real("wait_max_s", max_of(w))
                       .done());
  }
  JsonWriter verdicts;
  for (const auto& [v, n] : f.verdicts) verdicts.num(v, uint64_t(n));
  JsonArray positions;
  for (const auto& [p, n] : f.positions)
    positions.raw(JsonWriter().num("position", p).num("count", uint64_t(n)).done());
  JsonWriter queue;
  queue.num("queued", uint64_t(f.queued))
      .num("max_position", f.max_position)
      .raw("positions", positions.done());
  if (f.first_queued) {
    queue.real("first_queued_s", f.first_queued->asked_s - m.loaded_from)
        .num("learners_at_first_queued", f.first_queued->learners_started);
  } else {
    queue.null("first_queued_s").null("learners_at_first_queued");
  }
  queue.num("refused", m.gates_refused)
      .real("expected_wait_p50_s", percentile(f.expected_wait_s, 0.5))
      .real("queued_wait_p50_s", percentile(f.queued_wait_s, 0.5));
  return JsonWriter()
      .num("learners", o.learners)
      .num("o2", o.o2)
      .num("ramp_ms", o.ramp_ms)
      .real("idle_seconds", m.idle_to - m.idle_from)
      .real("loaded_seconds", f.loaded_s)
      .num("cores", std::thread::hardware_concurrency())
      .real("load_before", m.load_before)
      .real("load_after", m.load_after)
      .raw("idle", reads_and_probes(f.idle_read, f.idle_probe).done())
      .raw("o2_gates",
           reads_and_probes(f.gate_read, f.gate_probe).real("seconds", f.o2_gate_s).done())
      .raw("no_o2_gate", reads_and_probes(f.other_read, f.other_probe).done())
      .real("read_p99_ratio", f.read_p99_ratio)
      .boolean("aim_met", f.gate_read.n > 0 && f.read_p99_ratio <= 2.0)
      .num("commands", m.commands)
      .real("commands_per_s", double(m.commands) / f.loaded_s)
      .num("requests", m.requests)
      .real("requests_per_s", double(m.requests) / f.loaded_s)
      .raw("attempts",
           JsonWriter().num("t0", uint64_t(m.t0_done)).num("O2", uint64_t(m.o2_done)).done())
      .num("gates", uint64_t(m.gates.size()))
      .real("gates_per_min", double(m.gates.size()) / (f.loaded_s / 60.0))
      .raw("gate", gate.done())
      .raw("verdicts", verdicts.done())
      .raw("queue", queue.done())
      .num("acks_again", m.acks_again)
      .raw("memory", JsonWriter()
                         .raw("O2", memory_json(m.o2_memory))
                         .raw("t0", memory_json(m.t0_memory))
                         .num("daemon_pss_bytes", m.daemon_pss)
                         .num("front_pss_bytes", m.front_pss)
                         .done())
      .raw("latencies", latencies.done())
      .done();
}

int bench_learners(Invocation& inv) {
  Options o;
  auto learners = inv.get_u64("learners", o.learners);
  auto o2 = inv.get_u64("o2", o.o2);
  auto secs = inv.get_u64("seconds", o.seconds);
  auto idle = inv.get_u64("idle-seconds", o.idle_seconds);
  auto ramp = inv.get_u64("ramp-ms", o.ramp_ms);
  if (!learners.ok() || !o2.ok() || !secs.ok() || !idle.ok() || !ramp.ok() || *learners < 1 ||
      *learners > 200 || *o2 > 16 || *secs < 1 || *secs > 3600 || *idle < 1 || *idle > 600 ||
      *ramp > 60000) {
    return inv.fail(Status::invalid("--learners must be 1..200, --o2 0..16, --seconds 1..3600, "
                                    "--idle-seconds 1..600 and --ramp-ms 0..60000"),
                    2);
  }
  o = {*learners, *o2, *secs, *idle, *ramp};
  auto root = make_bench_root(inv, "/tmp/aura-bench-learners-XXXXXX");
  if (!root.ok()) return inv.fail(root.status());
  BenchLab lab("bench learners", *root, inv.has("keep"));

  // Ctrl-C or a TERM: every thread winds down, every attempt is abandoned, the front stopped.
  struct sigaction sa {
  }, old_int{}, old_term{};
  sa.sa_handler = on_interrupt;
  ::sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, &old_int);
  ::sigaction(SIGTERM, &sa, &old_term);
  g_interrupted = false;
  std::unique_ptr<Bench> bench;
  // Every exit: what is live abandoned, the front stopped, the folder left as bench_http.h says.
  auto finish = [&](int code) {
    if (bench) bench->abandon_live(code == 0);
    lab.finish(code == 0);
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
    return code;
  };

  if (Status s = lab.start(inv.has("scenarios") ? fs::path(inv.get("scenarios"))
                                                : app::default_scenarios_dir());
      !s.is_ok()) {
    return finish(inv.fail(s));
  }
  auto t0 = gold_walk(lab.root() / "scenarios", "t0-config-drift", "t0");
  if (!t0.ok()) return finish(inv.fail(t0.status()));
  std::optional<Walk> o2_walk;
  if (o.o2 > 0) {
    auto w = gold_walk(lab.root() / "scenarios", "o2-service-chain", "O2");
    if (!w.ok()) return finish(inv.fail(w.status()));
    o2_walk = std::move(w).value();
  }
  bench = std::make_unique<Bench>(o, lab, std::move(t0).value(), std::move(o2_walk));
  auto failed = [&](const std::string& where) {
    std::string why = bench->run().failure();
    if (why.empty()) why = g_interrupted ? "interrupted" : "stopped";
    return finish(inv.fail(Status::unavailable(where + ": " + why)));
  };
  if (!bench->set_up()) return failed("set-up");
  bench->measure_memory();
  if (!bench->idle_phase()) return failed("phase 1");
  if (!bench->loaded_phase()) return failed("phase 2");
  const Figures f = figures_of(bench->measured());
  print_report(o, bench->measured(), f);
  inv.emit_json(report_json(o, bench->measured(), f));
  return finish(0);
}

}  // namespace

void register_bench_learners_commands(CommandTable& r) {
  r.add({"bench learners",
         "",
         "many scripted learners over HTTP at once: read and probe latency while gates run",
         "Starts aura serve (and its daemon) on a fresh lab in a temporary folder and a free\n"
         "loopback port. Set-up walks K O2 attempts to their gates and measures the memory of\n"
         "each kind of live world (O2: its nodes' memory cgroups and processes' PSS; t0: its\n"
         "files). Phase 1, the idle lab: a read of an attempt's state every 5 ms and a t0 probe\n"
         "every 20 ms for the --idle-seconds. Phase 2: N learners, each its own client from its\n"
         "own loopback address (127.0.1.I), walk t0 attempts end to end (create, predict,\n"
         "probe, intervention, apply, ack, verify, gate, the verdict, receipt, reflect), one\n"
         "more learner every --ramp-ms; once all have started, the K O2 learners' gates run,\n"
         "and every learner starts attempts until --seconds have passed. The same read and probe\n"
         "are timed throughout; those sent while an O2 gate ran are compared with the idle\n"
         "lab's (the aim: read p99 at most 2x). Prints commands and requests per second, gates\n"
         "per minute, the gate queue (where it starts, the positions seen) and each command's\n"
         "latency. Every attempt is abandoned and the lab removed at the end (--keep DIR keeps\n"
         "it). Run it from the repository root (the bundled scenarios are copied).",
         {{"learners", "N", "t0 learners at once (1..200, default 8)"},
          {"o2", "K", "O2 learners whose gates run in phase 2 (0..16, default 2)"},
          {"seconds", "S", "phase 2: learners start attempts for S seconds (1..3600, default 60)"},
          {"idle-seconds", "S", "phase 1, the idle lab (1..600, default 10)"},
          {"ramp-ms", "MS", "between two learners' starts (0..60000, default 1000)"},
          {"keep", "DIR", "run the lab in DIR and keep it"},
          {"scenarios", "DIR", "the packages to set the lab up with (default: the bundled ones)"}},
         0,
         0,
         bench_learners});
}

}  // namespace aura::cli
