// Crash tests for the event log: whatever point a crash cuts, the log reopens, verifies, has no
// gap and holds every event whose append had returned. Two kinds of crash: SIGKILL of a child
// process (what the page cache keeps survives), and a simulated power cut through
// PowerLossFileSystem (only what was synced survives), which is what catches a missing fsync.
//
// Rounds are driven by a seeded RNG; the seed is printed, and AURA_CRASH_SEED replays it.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <rocksdb/write_batch.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/log/event_codec.h"
#include "tests/log/log_test_util.h"
#include "tests/support/power_loss_fs.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"

extern char** environ;

using namespace aura;
using aura::testing::first_problem;
using aura::testing::make_env;
using aura::testing::open_log;
using aura::testing::PowerLossFileSystem;
using aura::testing::sample;
using aura::testing::TempDir;

namespace {

using Clock = std::chrono::steady_clock;

// The child checkpoints every 50 events; the recovering parent opens the log the same way.
constexpr uint64_t kCheckpointEvery = 50;
// A close that takes longer than this after a power cut is a hang, reported as a failure.
constexpr auto kCloseDeadline = std::chrono::seconds(30);

// ---------------------------------------------------------------------------------------------
// Shared: seeds, acknowledgements and the recovery check.

uint64_t test_seed() {
  if (const char* s = std::getenv("AURA_CRASH_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device()() * uint64_t(0x100000000) + std::random_device()();
}

struct Ack {
  uint64_t seq = 0;
  Digest hash{};
};

// Every (seq, hash) some append returned, across all rounds on one log.
class AckedEvents {
 public:
  // Records `a`; returns false if the same seq was acknowledged before with another hash (the log
  // handed out one seq twice).
  bool add(const Ack& a) {
    auto [it, inserted] = by_seq_.emplace(a.seq, a.hash);
    return inserted || it->second == a.hash;
  }
  uint64_t max_seq() const { return by_seq_.empty() ? 0 : by_seq_.rbegin()->first; }
  size_t size() const { return by_seq_.size(); }
  const std::map<uint64_t, Digest>& by_seq() const { return by_seq_; }

 private:
  std::map<uint64_t, Digest> by_seq_;
};

// Checks a log reopened after a crash: verify passes, the events 1..head read back with no gap,
// and every acknowledged event is there with the hash its append returned. Returns the head seq.
uint64_t check_recovered(const EventLog& log, const AckedEvents& acked) {
  const LogHead head = log.head();
  const VerifyReport report = aura::testing::verify(log);
  CHECK_MESSAGE(report.ok(), "verify after recovery: seq ", report.first_bad_seq().value_or(0),
                ": ", first_problem(report));
  CHECK(report.head_seq == head.seq);
  CHECK(report.events_checked == head.seq);

  uint64_t read = 0, missing = 0, wrong_hash = 0;
  std::string first_wrong;
  auto next = acked.by_seq().begin();
  Status s = log.read_range(1, head.seq, [&](const EventView& ev) {
    ++read;
    for (; next != acked.by_seq().end() && next->first < ev.seq; ++next) ++missing;
    if (next != acked.by_seq().end() && next->first == ev.seq) {
      if (next->second != ev.hash) {
        if (wrong_hash++ == 0) first_wrong = std::to_string(ev.seq);
      }
      ++next;
    }
    return true;
  });
  CHECK_MESSAGE(s.is_ok(), "read_range 1..", head.seq, ": ", s.message());
  CHECK(read == head.seq);  // read_range fails on a gap; this also catches a short read
  for (; next != acked.by_seq().end(); ++next) ++missing;
  CHECK_MESSAGE(missing == 0, missing, " acknowledged events lost; acknowledged up to seq ",
                acked.max_seq(), ", recovered head ", head.seq);
  CHECK_MESSAGE(wrong_hash == 0, wrong_hash, " acknowledged events recovered with another hash, ",
                "first at seq ", first_wrong);
  CHECK(head.seq >= acked.max_seq());
  return head.seq;
}

std::unique_ptr<EventLog> reopen_or_fail(const std::filesystem::path& dir) {
  try {
    return open_log(dir, kCheckpointEvery);
  } catch (const std::exception& e) {
    FAIL("reopen after crash: ", e.what());
  }
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// SIGKILL: the child process and its acknowledgement lines.

// Turns the child's stdout into acknowledgements. Only complete lines count: a line the child was
// killed in the middle of stays pending and is never taken as an acknowledgement.
class AckReader {
 public:
  void add(std::string_view bytes) {
    pending_.append(bytes);
    size_t start = 0;
    for (size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1) {
      parse_line(std::string_view(pending_).substr(start, nl - start));
    }
    pending_.erase(0, start);
  }
  const std::vector<Ack>& acks() const { return acks_; }
  const std::string& pending() const { return pending_; }
  const std::vector<std::string>& malformed() const { return malformed_; }

 private:
  void parse_line(std::string_view line) {
    const size_t sp = line.find(' ');
    uint64_t seq = 0;
    std::optional<Digest> hash;
    if (sp != std::string_view::npos) {
      auto [end, ec] = std::from_chars(line.data(), line.data() + sp, seq);
      if (ec == std::errc() && end == line.data() + sp) hash = digest_from_hex(line.substr(sp + 1));
    }
    if (!hash || seq == 0) {
      malformed_.emplace_back(line);
      return;
    }
    acks_.push_back({seq, *hash});
  }

  std::string pending_;
  std::vector<Ack> acks_;
  std::vector<std::string> malformed_;
};

std::string crash_child_path() {
  if (const char* p = std::getenv("AURA_CRASH_CHILD")) return p;
  // Run by hand: the child is built next to this test.
  return (std::filesystem::read_symlink("/proc/self/exe").parent_path() / "crash_child").string();
}

struct ChildRun {
  AckReader out;
  int wait_status = 0;
  bool killed = false;  // false: the child died before the kill (a failure)
};

// Owns a spawned child and the read end of its stdout: a failed REQUIRE still kills and reaps it.
class Child {
 public:
  Child(pid_t pid, int out_fd) : pid_(pid), out_fd_(out_fd) {}
  ~Child() {
    if (pid_ > 0) kill_and_reap();
    if (out_fd_ >= 0) ::close(out_fd_);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  int out_fd() const { return out_fd_; }
  // Returns the wait status.
  int kill_and_reap() {
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_;
  int out_fd_;
};

// Reads what is available on `fd` into `out`; returns false at end of file.
bool read_some(int fd, AckReader& out) {
  char buf[1 << 16];
  for (;;) {
    ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    REQUIRE_MESSAGE(got >= 0, "read crash child stdout: ", std::strerror(errno));
    out.add(std::string_view(buf, size_t(got)));
    return got > 0;
  }
}

// Runs the crash child on `dir` with `extra_args`, reads its stdout until `stop(out)` says so or
// `max_run` passes, SIGKILLs it, reaps it and drains the pipe.
template <class Stop>
ChildRun run_and_kill_child(const std::filesystem::path& dir, std::vector<std::string> extra_args,
                            std::chrono::milliseconds max_run, Stop stop) {
  ChildRun run;
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);  // the dup drops O_CLOEXEC
  const std::string path = crash_child_path();
  std::vector<std::string> args = {path, dir.string()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, path.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);  // so the read end sees end of file once the child is gone
  if (spawned != 0) ::close(fds[0]);
  REQUIRE_MESSAGE(spawned == 0, "posix_spawn ", path, ": ", std::strerror(spawned));
  Child child(pid, fds[0]);

  const auto deadline = Clock::now() + max_run;
  for (bool open = true; open && !stop(run.out);) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd p{child.out_fd(), POLLIN, 0};
    int n = ::poll(&p, 1, int(left.count()));
    if (n < 0 && errno == EINTR) continue;
    REQUIRE_MESSAGE(n >= 0, "poll: ", std::strerror(errno));
    if (n > 0) open = read_some(child.out_fd(), run.out);
  }
  run.wait_status = child.kill_and_reap();
  run.killed = WIFSIGNALED(run.wait_status) && WTERMSIG(run.wait_status) == SIGKILL;
  // Lines written before the kill are still in the pipe, and count: their appends had returned.
  while (read_some(child.out_fd(), run.out)) {
  }
  return run;
}

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
  return "wait status " + std::to_string(status);
}

// ---------------------------------------------------------------------------------------------
// Power loss: appender threads against a log on PowerLossFileSystem.

// Destroys `log` on another thread and ends the run if that hangs: a log whose close hangs after
// a power cut can neither be waited for nor left behind.
void close_within_deadline(std::unique_ptr<EventLog> log) {
  if (!log) return;
  auto closed = std::make_shared<std::promise<void>>();
  std::future<void> done = closed->get_future();
  std::thread([log = std::move(log), closed]() mutable {
    log.reset();
    closed->set_value();
  }).detach();
  if (done.wait_for(kCloseDeadline) != std::future_status::ready) {
    std::fprintf(stderr, "log crash: closing the event log after a power cut hung\n");
    std::_Exit(2);
  }
}

struct PowerRig {
  std::shared_ptr<PowerLossFileSystem> fs = std::make_shared<PowerLossFileSystem>();
  std::unique_ptr<rocksdb::Env> env = make_env(fs);
};

struct Workload {
  int threads = 4;
  int appends_per_thread = 10;
};

struct CutRun {
  bool opened = false;
  std::vector<Ack> acks;
  uint64_t failed_appends = 0;
  std::string first_error;
  // Appends that returned success although another append had already failed (they started after
  // the failure was seen), or a retry after a failure that succeeded: sticky failure broken.
  std::vector<uint64_t> ok_after_failure;
  uint64_t syncs = 0;  // sync attempts the run made through the file system
};

// Opens the log in `dir` through `rig` with power on, runs `w` and cuts power when the
// `cut_after_syncs`-th sync is attempted (the open's syncs included) or as soon as
// `cut_after_acks` appends have been acknowledged; with neither, once the workload is done. On
// return the log is closed and the disk holds only what the cut left.
CutRun append_until_power_cut(const std::filesystem::path& dir, PowerRig& rig, const Workload& w,
                              std::optional<uint64_t> cut_after_syncs,
                              std::optional<uint64_t> cut_after_acks) {
  CutRun run;
  rig.fs->reset();
  if (cut_after_syncs) rig.fs->power_off_after_syncs(*cut_after_syncs);
  std::unique_ptr<EventLog> log;
  {
    EventLog::Options o;
    o.signer = &aura::testing::test_signer();
    o.checkpoint_every = kCheckpointEvery / 5;  // short workloads cross checkpoints too
    o.env = rig.env.get();
    auto r = EventLog::open(dir, o);
    if (r.ok()) {
      log = std::move(r).value();
    } else {
      run.first_error = r.status().message();
      // Only a power cut may make the open fail.
      CHECK_MESSAGE(!rig.fs->is_power_on(), "open with power on failed: ", run.first_error);
    }
  }
  run.opened = log != nullptr;

  if (log) {
    std::mutex mu;
    std::atomic<bool> failure_seen{false};
    std::atomic<uint64_t> acked{0};
    std::atomic<bool> done{false};
    std::thread power_switch;
    if (cut_after_acks) {
      power_switch = std::thread([&] {
        while (!done.load() && acked.load() < *cut_after_acks) {
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }
        rig.fs->power_off();
      });
    }
    std::vector<std::thread> appenders;
    for (int t = 0; t < w.threads; ++t) {
      appenders.emplace_back([&, t] {
        for (int i = 0; i < w.appends_per_thread; ++i) {
          const bool failed_before = failure_seen.load();
          auto r = log->append(sample(uint64_t(t) * 1000000 + uint64_t(i)));
          if (r.ok()) {
            std::lock_guard l(mu);
            run.acks.push_back({r->seq, r->hash});
            if (failed_before) run.ok_after_failure.push_back(r->seq);
            acked.fetch_add(1);
            continue;
          }
          failure_seen.store(true);
          // Sticky: once an append failed, the next one must fail too, never succeed.
          auto again = log->append(sample(uint64_t(t) * 1000000 + uint64_t(i) + 500000));
          std::lock_guard l(mu);
          ++run.failed_appends;
          if (run.first_error.empty()) run.first_error = r.status().message();
          if (again.ok()) {
            run.acks.push_back({again->seq, again->hash});
            run.ok_after_failure.push_back(again->seq);
          }
          return;
        }
      });
    }
    for (auto& t : appenders) t.join();
    done.store(true);
    if (power_switch.joinable()) power_switch.join();
  }
  run.syncs = rig.fs->sync_count();
  rig.fs->power_off();
  close_within_deadline(std::move(log));
  Status dropped = rig.fs->drop_unsynced();
  INFO(rig.fs->last_drop_report());
  REQUIRE_MESSAGE(dropped.is_ok(), "drop_unsynced: ", dropped.message());
  return run;
}

// Checks one power-cut round and folds its acknowledgements into `acked`. `head_before` is the
// head recovered after the previous round (0 for a new log). Returns the recovered head.
uint64_t check_power_cut_round(const std::filesystem::path& dir, const CutRun& run,
                               const Workload& w, uint64_t head_before, AckedEvents& acked) {
  CAPTURE(run.first_error);
  CHECK_MESSAGE(run.ok_after_failure.empty(), "an append succeeded after a failed one (seq ",
                run.ok_after_failure.empty() ? 0 : run.ok_after_failure.front(), ")");
  uint64_t contradicted = 0;
  for (const Ack& a : run.acks) contradicted += acked.add(a) ? 0 : 1;
  CHECK_MESSAGE(contradicted == 0, contradicted, " seqs acknowledged twice with different hashes");

  auto log = reopen_or_fail(dir);
  const uint64_t head = check_recovered(*log, acked);
  // Each appender thread has at most one append in flight, so beyond what was acknowledged at
  // most one event per thread can have become durable.
  CHECK(head <= std::max(head_before, acked.max_seq()) + uint64_t(w.threads));
  return head;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

TEST_CASE("log crash: a torn acknowledgement line from a killed child is not counted") {
  AckReader reader;
  const std::string h(64, 'a');
  reader.add("1 " + h + "\n2 " + h.substr(0, 10));
  CHECK(reader.acks().size() == 1);
  CHECK(reader.pending() == "2 " + h.substr(0, 10));
  reader.add(h.substr(10) + "\n3 ");
  REQUIRE(reader.acks().size() == 2);
  CHECK(reader.acks()[1].seq == 2);
  CHECK(reader.pending() == "3 ");
  reader.add("\n");
  CHECK(reader.acks().size() == 2);  // "3 " without a hash is no acknowledgement
  CHECK(reader.malformed().size() == 1);

  // End to end: the child writes half of its 31st line and is killed there.
  TempDir dir;
  constexpr uint64_t kLines = 30;
  ChildRun run = run_and_kill_child(
      dir / "log", {"--torn-line-after", std::to_string(kLines)}, aura::testing::kHangGuard,
      [&](const AckReader& out) { return out.acks().size() >= kLines && !out.pending().empty(); });
  CHECK_MESSAGE(run.killed, "crash child ", describe_exit(run.wait_status));
  CHECK(run.out.acks().size() == kLines);
  CHECK_FALSE(run.out.pending().empty());
  CHECK(run.out.malformed().empty());

  AckedEvents acked;
  for (const Ack& a : run.out.acks()) REQUIRE(acked.add(a));
  auto log = reopen_or_fail(dir / "log");
  // The torn line's event was appended (its append returned) but counts as unacknowledged.
  CHECK(check_recovered(*log, acked) > kLines);
}

TEST_CASE(
    "log crash: after SIGKILL at a random point the log reopens, verifies and holds every "
    "acknowledged event") {
  constexpr int kRounds = 25;
  const uint64_t seed = test_seed();
  MESSAGE("SIGKILL rounds: seed ", seed, " (AURA_CRASH_SEED replays it)");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> run_ms(20, 400);

  TempDir dir;
  const std::filesystem::path db = dir / "log";
  AckedEvents acked;
  uint64_t head = 0, torn_lines = 0;
  const auto start = Clock::now();
  for (int round = 0; round < kRounds; ++round) {
    const int ms = run_ms(rng);
    CAPTURE(round);
    CAPTURE(ms);
    ChildRun run = run_and_kill_child(db, {}, std::chrono::milliseconds(ms),
                                      [](const AckReader&) { return false; });
    REQUIRE_MESSAGE(run.killed, "crash child ", describe_exit(run.wait_status),
                    " before it was killed");
    CHECK(run.out.malformed().empty());
    torn_lines += run.out.pending().empty() ? 0 : 1;
    uint64_t contradicted = 0, old = 0;
    for (const Ack& a : run.out.acks()) {
      contradicted += acked.add(a) ? 0 : 1;
      old += a.seq <= head ? 1 : 0;
    }
    CHECK_MESSAGE(contradicted == 0, contradicted, " seqs acknowledged twice, different hashes");
    // A new process continues after the recovered head; it never reuses an older seq.
    CHECK_MESSAGE(old == 0, old, " acknowledged seqs at or below the previous head ", head);

    auto log = reopen_or_fail(db);
    const uint64_t recovered = check_recovered(*log, acked);
    CHECK(recovered >= head);
    head = recovered;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  MESSAGE("SIGKILL: ", kRounds, " rounds, ", acked.size(), " events acknowledged, head ", head,
          ", ", torn_lines, " torn lines ignored, ", seconds, " s");
  CHECK(acked.size() > 0);  // the rounds were long enough to acknowledge something
}

TEST_CASE("log crash: a write that was never synced is gone after the simulated power cut") {
  TempDir dir;
  const std::filesystem::path db = dir / "log";
  PowerRig rig;
  auto log = open_log(db, kCheckpointEvery, false, rig.env.get());
  for (uint64_t i = 1; i <= 5; ++i) REQUIRE(log->append(sample(i)).ok());
  const LogHead head = log->head();
  REQUIRE(head.seq == 5);

  // Event 6 written by hand into the log's RocksDB with sync=false, as a log that forgot its
  // fsync would: acknowledged-looking, on "disk" (the page cache), but never made durable.
  auto last = log->get(5);
  REQUIRE(last.ok());
  Digest h6;
  rocksdb::WriteBatch batch;
  batch.Put(log->events_cf(), seq_key(6), encode_record(6, head.hash, last->ts_us, sample(6), &h6));
  rocksdb::WriteOptions unsynced;
  unsynced.sync = false;
  REQUIRE(log->db()->Write(unsynced, &batch).ok());
  {
    // A read-only open replays the WAL from the files: the bytes did reach the file system.
    auto peek = open_log(db, kCheckpointEvery, true);
    CHECK(peek->head().seq == 6);
  }

  rig.fs->power_off();
  close_within_deadline(std::move(log));
  Status dropped = rig.fs->drop_unsynced();
  INFO(rig.fs->last_drop_report());
  REQUIRE_MESSAGE(dropped.is_ok(), dropped.message());

  auto reopened = reopen_or_fail(db);
  CHECK(reopened->head().seq == 5);
  CHECK(reopened->head().hash == head.hash);
  CHECK_FALSE(reopened->get(6).ok());
  CHECK(aura::testing::verify(*reopened).ok());
}

TEST_CASE(
    "log crash: a power cut at every sync of a short workload loses no acknowledged event and "
    "leaves a log that verifies") {
  const Workload w{3, 12};
  // A full run's sync count (open included), so that each sync gets its turn to be cut.
  uint64_t workload_syncs = 0;
  {
    TempDir dir;
    PowerRig rig;
    CutRun run = append_until_power_cut(dir / "log", rig, w, std::nullopt, std::nullopt);
    REQUIRE(run.acks.size() == size_t(w.threads * w.appends_per_thread));
    workload_syncs = run.syncs;
  }
  REQUIRE(workload_syncs > 0);

  uint64_t cut_in_open = 0, cut_in_appends = 0, not_cut = 0;
  const auto start = Clock::now();
  // Group sizes vary from run to run, so the sweep runs a little past the measured count.
  for (uint64_t n = 1; n <= workload_syncs + 3; ++n) {
    CAPTURE(n);
    TempDir dir;  // a new log each time: the cut can also land while it is being created
    PowerRig rig;
    CutRun run = append_until_power_cut(dir / "log", rig, w, n, std::nullopt);
    if (!run.opened) {
      ++cut_in_open;
    } else if (run.failed_appends > 0) {
      ++cut_in_appends;
    } else {
      ++not_cut;
    }
    AckedEvents acked;
    check_power_cut_round(dir / "log", run, w, 0, acked);
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  MESSAGE("power cut sweep: n = 1..", workload_syncs + 3, " syncs; cut during open ", cut_in_open,
          ", during appends ", cut_in_appends, ", not cut ", not_cut, "; ", seconds, " s");
  CHECK(cut_in_open > 0);
  CHECK(cut_in_appends > 0);
}

TEST_CASE(
    "log crash: power cuts at random points of a concurrent workload, round after round on one "
    "log, lose no acknowledged event") {
  constexpr int kRounds = 20;
  const Workload w{6, 40};
  const uint64_t seed = test_seed();
  MESSAGE("power cut rounds: seed ", seed, " (AURA_CRASH_SEED replays it)");
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<uint64_t> cut_at(0, uint64_t(w.threads * w.appends_per_thread));

  TempDir dir;
  const std::filesystem::path db = dir / "log";
  PowerRig rig;
  AckedEvents acked;
  uint64_t head = 0, failed_rounds = 0;
  const auto start = Clock::now();
  for (int round = 0; round < kRounds; ++round) {
    const uint64_t k = cut_at(rng);
    CAPTURE(round);
    CAPTURE(k);
    CutRun run = append_until_power_cut(db, rig, w, std::nullopt, k);
    REQUIRE(run.opened);  // power is cut only after the k-th acknowledgement
    CHECK(run.acks.size() >= k);
    failed_rounds += run.failed_appends > 0 ? 1 : 0;
    const uint64_t recovered = check_power_cut_round(db, run, w, head, acked);
    CHECK(recovered >= head);
    head = recovered;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  MESSAGE("power cut rounds: ", kRounds, " rounds, ", failed_rounds, " with failed appends, ",
          acked.size(), " events acknowledged, head ", head, ", ", seconds, " s");
  CHECK(failed_rounds > 0);
}
