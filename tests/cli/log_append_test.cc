// `aura log append | head | dump | tail`, the writer lock and `bench log`, as an
// operator uses them.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <string>

#include "engine/events/event_types.h"
#include "tests/cli/cli_util.h"
#include "tests/support/wait_until.h"

using aura::testing::CliProcess;
using aura::testing::CliResult;
using aura::testing::Json;
using aura::testing::kHangGuard;
using aura::testing::Lab;
using aura::testing::run_aura;
using aura::testing::write_file;
namespace fs = std::filesystem;

namespace {

const std::string kZeroHash(64, '0');

// A rejected append: exit status `exit_code` (1: the log refused it; 2: not an operator
// event), no crash, a message naming `what`, a JSON failure line, and the head exactly as before.
void check_rejected(const Lab& lab, const std::vector<std::string>& flags, const std::string& what,
                    int exit_code = 1) {
  const Json before = lab.head();
  std::vector<std::string> args = {"log", "append", "--json"};
  args.insert(args.end(), flags.begin(), flags.end());
  CliResult r = lab.aura(args);
  CHECK_MESSAGE(r.exit_code == exit_code, r.describe());
  CHECK_FALSE(r.signaled);
  CHECK_MESSAGE(r.err.find(what) != std::string::npos, r.describe());
  Json j(r.last_line());
  CHECK(j.boolean("ok") == false);
  CHECK(j.str("error").value_or("").find(what) != std::string::npos);
  const Json after = lab.head();
  CHECK(after.u64("head_seq") == before.u64("head_seq"));
  CHECK(after.str("head_hash") == before.str("head_hash"));
}

// Holds DATA/aura.lock as a writer would: our pid in it, an exclusive flock on it.
class HeldLock {
 public:
  explicit HeldLock(const fs::path& data) {
    fd_ = ::open((data / "aura.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0640);
    REQUIRE(fd_ >= 0);
    REQUIRE(::flock(fd_, LOCK_EX | LOCK_NB) == 0);
    const std::string pid = std::to_string(::getpid()) + "\n";
    REQUIRE(::ftruncate(fd_, 0) == 0);
    REQUIRE(::pwrite(fd_, pid.data(), pid.size(), 0) == ssize_t(pid.size()));
  }
  ~HeldLock() { ::close(fd_); }
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

TEST_CASE("log append acknowledges with the seq and hash that log head then reports") {
  Lab lab;
  CliResult r = lab.aura({"log", "append", "--stream", "ops/1", "--type",
                          aura::events::kOperatorNote, "--payload", R"({"a":1})", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json a(r.last_line());
  CHECK(a.boolean("ok") == true);
  CHECK(a.u64("seq") == 1u);
  const Json head = lab.head();
  CHECK(head.u64("head_seq") == 1u);
  CHECK(head.str("head_hash") == a.str("hash"));
  CHECK(head.u64("checkpoint_size") == 0u);
  CHECK(lab.append("ops/1", aura::events::kOperatorNote, "{}") == 2);
}

TEST_CASE("log append rejects a payload that is not JSON, leaving the head unchanged") {
  Lab lab;
  lab.append("s", "operator.t", R"({"first":true})");
  check_rejected(lab, {"--stream", "s", "--type", "operator.t", "--payload", "not json"}, "JSON");
  check_rejected(lab, {"--stream", "s", "--type", "operator.t", "--payload", R"({"a":1} trailing)"},
                 "JSON");
  check_rejected(lab, {"--stream", "s", "--type", "operator.t", "--payload", R"({"a":)"}, "JSON");
  check_rejected(lab, {"--stream", "s", "--type", "operator.t", "--payload", "[1,2]"},
                 "JSON object");
  check_rejected(lab, {"--stream", "s", "--type", "operator.t", "--payload", "\"text\""},
                 "JSON object");
  check_rejected(lab, {"--stream", "s", "--type", "operator.t", "--payload", "{\"a\":\"\xff\"}"},
                 "UTF-8");
}

TEST_CASE("log append rejects an empty or missing type or stream, leaving the head unchanged") {
  Lab lab;
  lab.append("s", "operator.t", "{}");
  check_rejected(lab, {"--stream", "s", "--type", ""}, "refused type \"\"", 2);
  check_rejected(lab, {"--stream", "s"}, "refused type \"\"", 2);
  check_rejected(lab, {"--stream", "", "--type", "operator.t"}, "stream");
  check_rejected(lab, {"--type", "operator.t"}, "stream");
}

TEST_CASE(
    "log append refuses the lab's own event types with exit status 2, naming the type, and "
    "appends nothing") {
  Lab lab;
  lab.append("s", "operator.t", "{}");
  // What the engine, supervisor, gate, receipts, runners, attempts, the scenario registry and the
  // capability panel write; and names that only look like operator types.
  for (const char* type :
       {aura::events::kGateVerdict, aura::events::kGateProperty, aura::events::kReceiptIssued,
        aura::events::kAttemptStarted, aura::events::kAttemptVerified,
        aura::events::kProbeCompleted, aura::events::kEvidenceRejected,
        aura::events::kSupervisorReaped, "runner.note", aura::events::kScenarioLoaded,
        aura::events::kScenarioSigned, aura::events::kCapabilitiesMeasured, "operator.", "operator",
        "operatorx.note", "x.operator.note"}) {
    CAPTURE(type);
    check_rejected(lab, {"--stream", "s", "--type", type}, "refused type \"" + std::string(type),
                   2);
    check_rejected(lab, {"--stream", "s", "--type", type}, "operator.NAME", 2);
  }
}

TEST_CASE("log append refuses any actor but operator with exit status 2, and appends nothing") {
  Lab lab;
  lab.append("s", "operator.t", "{}");
  for (const char* actor : {"engine", "supervisor", "gate", "runner", "learner:alice",
                            "operator:bob", "Operator", ""}) {
    CAPTURE(actor);
    check_rejected(lab, {"--stream", "s", "--type", aura::events::kOperatorNote, "--actor", actor},
                   "refused actor \"" + std::string(actor) + "\"", 2);
  }
  // A refused type on a lab whose log does not exist yet creates nothing.
  Lab fresh;
  CliResult r =
      fresh.aura({"log", "append", "--stream", "s", "--type", aura::events::kGateVerdict});
  CHECK(r.exit_code == 2);
  CHECK_FALSE(fs::exists(fresh.data()));
}

TEST_CASE("log append refuses the lab's own streams with exit status 2, and appends nothing") {
  Lab lab;
  lab.append("s", "operator.t", "{}");
  // An attempt's stream is what its receipt binds; lab/ holds the lab's registries.
  for (const char* stream : {"attempt/0123456789abcdef", "attempt/", "lab/scenarios",
                             "lab/capabilities", "lab/supervisor", "lab/x"}) {
    CAPTURE(stream);
    check_rejected(lab, {"--stream", stream, "--type", aura::events::kOperatorNote},
                   "refused stream \"" + std::string(stream) + "\"", 2);
  }
  // Names that only look like them are the operator's.
  CHECK(lab.append("attempts/x", aura::events::kOperatorNote, "{}") == 2);
  CHECK(lab.append("ops/attempt/x", aura::events::kOperatorNote, "{}") == 3);
}

TEST_CASE("log append accepts an operator type under the operator actor, as dump shows") {
  Lab lab;
  CliResult r = lab.aura({"log", "append", "--stream", "ops/notes", "--type",
                          "operator.maintenance_window", "--actor", "operator", "--payload",
                          R"({"note":"kernel upgrade at 02:00"})", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(Json(r.last_line()).u64("seq") == 1u);
  r = lab.aura({"log", "dump"});
  REQUIRE(r.lines().size() == 1);
  Json ev(r.lines()[0]);
  CHECK(ev.str("stream") == "ops/notes");
  CHECK(ev.str("type") == "operator.maintenance_window");
  CHECK(ev.str("actor") == "operator");
}

TEST_CASE("log append rejects a 2 MiB payload with a message naming the limit") {
  Lab lab;
  lab.append("s", "operator.t", "{}");
  // Exactly 2 MiB of valid JSON, passed as @FILE (an argument that long exceeds the
  // kernel's per-argument limit).
  std::string big = R"({"x":")";
  big += std::string((2u << 20) - big.size() - 2, 'a');
  big += "\"}";
  REQUIRE(big.size() == 2u << 20);
  write_file(lab / "big.json", big);
  check_rejected(
      lab,
      {"--stream", "s", "--type", "operator.t", "--payload", "@" + (lab / "big.json").string()},
      "limit");
  // And one byte over 2 MiB, which the file reader refuses before the log does.
  write_file(lab / "bigger.json", big + " ");
  check_rejected(
      lab,
      {"--stream", "s", "--type", "operator.t", "--payload", "@" + (lab / "bigger.json").string()},
      "limit");
  // A missing @FILE is named.
  check_rejected(
      lab, {"--stream", "s", "--type", "operator.t", "--payload", "@" + (lab / "nope").string()},
      "nope");
}

TEST_CASE("log append takes a payload of exactly 1 MiB from @FILE and dump shows it verbatim") {
  Lab lab;
  std::string payload = R"({ "k" : [1, 2.50, "é"], "pad":")";
  payload += std::string((1u << 20) - payload.size() - 3, 'p') + "\" }";
  REQUIRE(payload.size() == 1u << 20);
  write_file(lab / "p.json", payload);
  CHECK(lab.append("s", "operator.t", "@" + (lab / "p.json").string()) == 1);
  CliResult r = lab.aura({"log", "dump"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.out.find("\"payload\":" + payload + ",") != std::string::npos);
  // One byte more is refused.
  write_file(lab / "over.json", payload + " ");
  check_rejected(
      lab,
      {"--stream", "s", "--type", "operator.t", "--payload", "@" + (lab / "over.json").string()},
      "limit");
}

TEST_CASE("log append refuses refs to blobs that are not stored, and accepts stored ones") {
  Lab lab;
  write_file(lab / "out.txt", "probe output\n");
  CliResult put = lab.aura(
      {"blob", "put", (lab / "out.txt").string(), "--kind", "probe.output", "--id", "ev-1"});
  REQUIRE_MESSAGE(put.exit_code == 0, put.describe());
  Json ref(put.last_line());
  REQUIRE(ref.ok());
  CHECK(ref.str("id") == "ev-1");
  CHECK(ref.u64("bytes") == 13u);
  lab.append("s", "operator.t", "{}");
  const std::string wrong_size =
      R"({"id":"ev-1","sha256":")" + *ref.str("sha256") + R"(","kind":"probe.output","bytes":14})";
  check_rejected(
      lab,
      {"--stream", "s", "--type", "operator.t", "--payload", R"({"refs":[)" + wrong_size + "]}"},
      "refs ev-1");
  const std::string unknown =
      R"({"id":"ev-2","sha256":")" + kZeroHash + R"(","kind":"probe.output","bytes":1})";
  check_rejected(
      lab, {"--stream", "s", "--type", "operator.t", "--payload", R"({"refs":[)" + unknown + "]}"},
      "not found");
  CHECK(lab.append("s", "operator.t", R"({"refs":[)" + put.last_line() + "]}") == 2);
  CliResult v = lab.aura({"log", "verify", "--json"});
  CHECK_MESSAGE(v.exit_code == 0, v.describe());
  CHECK(Json(v.last_line()).u64("blobs_checked") == 1u);
}

TEST_CASE("log dump prints one JSON object per line, chained, with the payload verbatim") {
  Lab lab;
  const std::vector<std::string> payloads = {R"({"a":1})", R"({ "b" : [1, 2] ,"c":"x y"})",
                                             R"({"unicode":"\u00e9é","n":-1.5e3})", "{}"};
  for (size_t i = 0; i < payloads.size(); ++i) {
    lab.append("ops/" + std::to_string(i % 2), "operator.t.x", payloads[i]);
  }
  CliResult r = lab.aura({"log", "dump"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const auto lines = r.lines();
  REQUIRE(lines.size() == payloads.size());
  std::string prev = kZeroHash;
  for (size_t i = 0; i < lines.size(); ++i) {
    CAPTURE(lines[i]);
    Json ev(lines[i]);
    REQUIRE(ev.ok());
    CHECK(ev.u64("seq") == i + 1);
    CHECK(ev.str("prev_hash") == prev);
    CHECK(ev.str("stream") == "ops/" + std::to_string(i % 2));
    CHECK(ev.str("type") == "operator.t.x");
    CHECK(ev.str("actor") == "operator");
    CHECK(ev.u64("ts_us").value_or(0) > 0);
    CHECK(ev.str("hash").value_or("").size() == 64);
    CHECK(lines[i].find("\"payload\":" + payloads[i] + ",\"hash\"") != std::string::npos);
    prev = ev.str("hash").value_or("");
  }
  CHECK(lab.head().str("head_hash") == prev);
}

TEST_CASE("log dump --stream prints only that stream; --from/--to bound the range") {
  Lab lab;
  for (int i = 1; i <= 6; ++i) {
    lab.append(i % 3 == 0 ? "ops/b" : "ops/a", "operator.t", "{\"i\":" + std::to_string(i) + "}");
  }
  CliResult r = lab.aura({"log", "dump", "--stream", "ops/b"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  auto lines = r.lines();
  REQUIRE(lines.size() == 2);
  CHECK(Json(lines[0]).u64("seq") == 3u);
  CHECK(Json(lines[1]).u64("seq") == 6u);
  for (const auto& l : lines) CHECK(Json(l).str("stream") == "ops/b");

  r = lab.aura({"log", "dump", "--stream", "ops/a", "--from", "2", "--to", "4"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  lines = r.lines();
  REQUIRE(lines.size() == 2);
  CHECK(Json(lines[0]).u64("seq") == 2u);
  CHECK(Json(lines[1]).u64("seq") == 4u);

  r = lab.aura({"log", "dump", "--from", "5"});
  CHECK(r.lines().size() == 2);
  r = lab.aura({"log", "dump", "--stream", "ops/none"});
  CHECK(r.exit_code == 0);
  CHECK(r.lines().empty());
  r = lab.aura({"log", "dump", "--from", "x"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--from") != std::string::npos);
}

TEST_CASE("log tail --lines 2 prints the last two events") {
  Lab lab;
  for (int i = 1; i <= 5; ++i) lab.append("s", "operator.t", "{\"i\":" + std::to_string(i) + "}");
  CliResult r = lab.aura({"log", "tail", "--lines", "2"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  const auto lines = r.lines();
  REQUIRE(lines.size() == 2);
  CHECK(Json(lines[0]).u64("seq") == 4u);
  CHECK(Json(lines[1]).u64("seq") == 5u);
  r = lab.aura({"log", "tail"});
  CHECK(r.lines().size() == 5);
}

TEST_CASE("log tail --follow prints events appended after it started") {
  Lab lab;
  lab.append("s", "operator.t", R"({"i":1})");
  CliProcess follow({"log", "tail", "--follow", "--lines", "1", "--data", lab.data().string(),
                     "--keys", lab.keys().string()});
  auto first = follow.next_line(kHangGuard);
  REQUIRE(first.has_value());
  CHECK(Json(*first).u64("seq") == 1u);
  lab.append("s", "operator.t", R"({"i":2})");
  auto second = follow.next_line(kHangGuard);
  REQUIRE(second.has_value());
  CHECK(Json(*second).u64("seq") == 2u);
  CHECK(second->find(R"("payload":{"i":2})") != std::string::npos);
}

TEST_CASE("while another process holds the data folder, writers say which pid and readers work") {
  Lab lab;
  lab.append("s", "operator.t", R"({"i":1})");
  lab.append("s", "operator.t", R"({"i":2})");
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  const std::string in_use = "in use by pid " + std::to_string(::getpid());
  {
    HeldLock lock(lab.data());
    for (auto args : std::vector<std::vector<std::string>>{
             {"log", "append", "--stream", "s", "--type", "operator.t"},
             {"log", "checkpoint"},
             {"log", "snapshot", "--out", (lab / "snap").string()},
             {"caps", "--json"}}) {
      CAPTURE(args[0] + " " + args[1]);
      CliResult r = lab.aura(args);
      CHECK_MESSAGE(r.exit_code == 1, r.describe());
      CHECK_MESSAGE(r.err.find(in_use) != std::string::npos, r.describe());
    }
    CHECK_FALSE(fs::exists(lab / "snap"));

    CliResult v = lab.aura({"log", "verify", "--json"});
    CHECK_MESSAGE(v.exit_code == 0, v.describe());
    CHECK(Json(v.last_line()).u64("head_seq") == 2u);
    CliResult d = lab.aura({"log", "dump"});
    CHECK_MESSAGE(d.exit_code == 0, d.describe());
    CHECK(d.lines().size() == 2);
    CHECK(lab.head().u64("head_seq") == 2u);
    CliResult p = lab.aura({"log", "prove", "1"});
    CHECK_MESSAGE(p.exit_code == 0, p.describe());
  }
  // Released: appends go on where they stopped.
  CHECK(lab.append("s", "operator.t", R"({"i":3})") == 3);
}

namespace {

// `bench log` takes a while (5 s idle, well inside kCliHangGuard): it runs once and its result
// is shared.
const CliResult& bench_result() {
  static const CliResult r = run_aura({"bench", "log", "--events", "3000", "--json"});
  return r;
}

}  // namespace

TEST_CASE("bench log --json reports every figure, all positive") {
  const CliResult& r = bench_result();
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json j(r.last_line());
  REQUIRE_MESSAGE(j.ok(), r.describe());
  for (const char* key : {"raw_rocksdb_per_s", "append_p50_us", "append_p99_us",
                          "verify_events_per_s", "raw_sha256_events_per_s"}) {
    CAPTURE(key);
    CHECK(j.number(key).value_or(0) > 0);
  }
  simdjson::dom::object appends;
  REQUIRE(!j.root()["appends_per_s"].get(appends));
  for (const char* n : {"1", "8", "64"}) {
    CAPTURE(n);
    double v = 0;
    CHECK(!appends[n].get(v));
    CHECK(v > 0);
  }
  // Its temporary folder is gone.
  CHECK(r.out.find("kept:") == std::string::npos);
}

TEST_CASE("bench log --events N builds and verifies a log of N events") {
  const CliResult& r = bench_result();
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json j(r.last_line());
  // --events is "size of the log to build and verify".
  CHECK_MESSAGE(j.u64("events") == 3000u, r.last_line());
}
