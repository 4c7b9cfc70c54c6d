// `aura log verify` as an auditor runs it: on a good log, on logs changed on disk behind the
// engine's back (RocksDB WAL and SST files, blobs), with pinned keys and trusted checkpoints.
#include <doctest/doctest.h>

#include <string>

#include "tests/cli/cli_util.h"
#include "tests/cli/storage_edit.h"

using aura::testing::CliResult;
using aura::testing::crc32c;
using aura::testing::file_holding;
using aura::testing::files_with_suffix;
using aura::testing::flip_byte_in;
using aura::testing::flip_stored_value_byte;
using aura::testing::flip_wal_byte;
using aura::testing::Json;
using aura::testing::Lab;
using aura::testing::read_file;
using aura::testing::run_aura;
using aura::testing::WalCrc;
using aura::testing::write_file;
namespace fs = std::filesystem;

namespace {

// `log verify --json` plus extra flags; the parsed last line and the raw result.
struct Verdict {
  CliResult run;
  Json json;
};

Verdict verify(const Lab& lab, std::vector<std::string> flags = {}, const fs::path& data = {}) {
  std::vector<std::string> args = {"log", "verify", "--json"};
  args.insert(args.end(), flags.begin(), flags.end());
  CliResult r = data.empty() ? lab.aura(args) : [&] {
    args.insert(args.end(), {"--data", data.string(), "--keys", lab.keys().string()});
    return run_aura(args);
  }();
  CHECK_FALSE(r.signaled);
  Json j(r.last_line());
  return {std::move(r), std::move(j)};
}

// `log checkpoint` prints the signed note; save it outside the data folder.
fs::path save_checkpoint(const Lab& lab, const std::string& name) {
  CliResult r = lab.aura({"log", "checkpoint"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  write_file(lab / name, r.out);
  return lab / name;
}

std::string marker(int i) { return "MARKER" + std::to_string(i) + "-q8z3k1v9w7x2"; }

// Appends events 1..n, each in its own writer session, with a unique marker in its payload.
void append_marked(const Lab& lab, int n) {
  for (int i = 1; i <= n; ++i) {
    REQUIRE(lab.append("ops/" + std::to_string(i % 2), "operator.probe",
                       R"({"i":)" + std::to_string(i) + R"(,"m":")" + marker(i) + "\"}") ==
            uint64_t(i));
  }
}

}  // namespace

TEST_CASE("crc32c matches its known answer (the WAL editing helper's own check)") {
  CHECK(crc32c("123456789") == 0xE3069283u);
}

TEST_CASE("log verify --json on a good log: exit 0, ok:true, first_bad_seq:null") {
  Lab lab;
  append_marked(lab, 5);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  lab.append("s", "operator.t", "{}");
  Verdict v = verify(lab);
  CHECK_MESSAGE(v.run.exit_code == 0, v.run.describe());
  REQUIRE(v.json.ok());
  CHECK(v.json.boolean("ok") == true);
  CHECK(v.json.is_null("first_bad_seq"));
  CHECK(v.json.is_null("trusted_size"));
  CHECK(v.json.u64("head_seq") == 6u);
  CHECK(v.json.u64("events_checked") == 6u);
  CHECK(v.json.u64("checkpoints_checked") == 1u);
  CHECK(v.json.u64("latest_checkpoint_size") == 5u);
  CHECK(v.json.u64("uncovered_tail") == 1u);
  CHECK(v.json.str("head_hash") == lab.head().str("head_hash"));
  // Without --json the verdict is on stdout in words.
  CliResult text = lab.aura({"log", "verify"});
  CHECK(text.exit_code == 0);
  CHECK(text.out.rfind("ok: 6 events", 0) == 0);
}

namespace {

// A log as a crash leaves it: `aura bench log --keep DIR` killed (SIGKILL) in its append phase,
// so every event since the open is only in RocksDB's WAL, never flushed into an SST file. Its
// first phase appends from one thread, so the event whose payload holds "seq_hint":i has seq
// i + 1. Built once (it takes several seconds); each test works on its own copy.
class CrashedLog {
 public:
  static const CrashedLog& get() {
    static const CrashedLog log;
    return log;
  }
  fs::path data() const { return lab_ / "bench" / "data"; }
  fs::path keys() const { return lab_ / "bench" / "keys"; }
  // Copies the data folder to `data`, and the keys folder to `keys` unless it exists.
  void copy_to(const fs::path& data, const fs::path& keys) const {
    fs::copy(this->data(), data, fs::copy_options::recursive);
    if (!fs::exists(keys)) fs::copy(this->keys(), keys, fs::copy_options::recursive);
  }

 private:
  CrashedLog() {
    aura::testing::CliProcess bench({"bench", "log", "--keep", (lab_ / "bench").string()},
                                    aura::testing::CliProcess::Output::kStderr);
    // The single-appender phase is over once the 8-appender phase starts (6 s in, idle; 120 s
    // is a hang guard).
    REQUIRE_MESSAGE(bench.wait_for("appends with 8 appenders", std::chrono::seconds(120)),
                    "bench log never reached its 8-appender phase");
    bench.kill_now();
    REQUIRE_MESSAGE(!files_with_suffix(data() / "log", ".log").empty(),
                    "no WAL in the killed bench's log");
  }
  Lab lab_{Lab::Keys::kNone};
};

constexpr uint64_t kTarget = 100;                            // the seq the WAL edits hit
const std::string kTargetNeedle = "\"seq_hint\":99,\"note";  // in its payload only

}  // namespace

TEST_CASE("a log whose writer was killed mid-append verifies, with its events in the WAL") {
  const CrashedLog& crashed = CrashedLog::get();
  Lab lab(Lab::Keys::kNone);
  crashed.copy_to(lab.data(), lab.keys());
  Verdict v = verify(lab);
  CHECK_MESSAGE(v.run.exit_code == 0, v.run.describe());
  REQUIRE(v.json.u64("head_seq").value_or(0) > kTarget);
  // The event the WAL edits below hit: seq 100, in a WAL record, verbatim.
  CliResult d = lab.aura({"log", "dump", "--from", "100", "--to", "100"});
  REQUIRE(d.lines().size() == 1);
  CHECK(d.out.find(kTargetNeedle) != std::string::npos);
  CHECK(file_holding(lab.data() / "log", ".log", kTargetNeedle).extension() == ".log");
}

TEST_CASE(
    "log verify names the seq whose payload byte was flipped in the WAL with the record's "
    "CRC recomputed") {
  Lab lab(Lab::Keys::kNone);
  CrashedLog::get().copy_to(lab.data(), lab.keys());
  flip_wal_byte(lab.data() / "log", kTargetNeedle, 3, WalCrc::kRecompute);
  Verdict v = verify(lab);
  CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
  CHECK(v.json.boolean("ok") == false);
  CHECK_MESSAGE(v.json.u64("first_bad_seq") == kTarget, v.run.last_line());
  CliResult text = lab.aura({"log", "verify"});
  CHECK(text.out.find("FAILED: first bad seq 100") != std::string::npos);
}

// What happens: RocksDB opens the log with WALRecoveryMode::kPointInTimeRecovery, so replay
// silently stops at the record whose CRC fails: that event (seq 100) and every later one in
// the WAL, with their signed checkpoints, vanish, and verify reports an intact log of 99
// events. A writer opening the folder then reuses seq 100 and deletes the old WAL for good.
TEST_CASE(
    "log verify does not pass a log after a WAL record's CRC fails (a disk fault drops "
    "acknowledged events)") {
  Lab lab(Lab::Keys::kNone);
  CrashedLog::get().copy_to(lab.data(), lab.keys());
  flip_wal_byte(lab.data() / "log", kTargetNeedle, 3, WalCrc::kLeaveStale);
  Verdict v = verify(lab);
  CHECK_FALSE(v.run.signaled);
  // Either RocksDB refuses the corrupt WAL (a clear error) or verify names seq 100; an "ok"
  // over the surviving prefix hides the loss of durable, acknowledged events.
  CHECK_MESSAGE(v.run.exit_code != 0, v.run.describe());
  CHECK(v.json.boolean("ok") == false);
}

TEST_CASE(
    "log verify refuses a log whose WAL has a damaged record before its tail, --trusted or not") {
  Lab lab(Lab::Keys::kNone);
  const CrashedLog& crashed = CrashedLog::get();
  crashed.copy_to(lab.data(), lab.keys());
  // A checkpoint of the same log, made on a second copy: what an auditor kept earlier.
  crashed.copy_to(lab / "copy", lab.keys());
  CliResult ck = run_aura(
      {"log", "checkpoint", "--data", (lab / "copy").string(), "--keys", lab.keys().string()});
  REQUIRE_MESSAGE(ck.exit_code == 0, ck.describe());
  write_file(lab / "trusted.note", ck.out);
  Verdict ok = verify(lab, {"--trusted", (lab / "trusted.note").string()});
  REQUIRE_MESSAGE(ok.run.exit_code == 0, ok.run.describe());

  flip_wal_byte(lab.data() / "log", kTargetNeedle, 3, WalCrc::kLeaveStale);
  Verdict v = verify(lab, {"--trusted", (lab / "trusted.note").string()});
  CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
  CHECK(v.json.boolean("ok") == false);
  // The open itself refuses: RocksDB names the corrupt WAL record (no seq can be named).
  CHECK_MESSAGE(v.run.last_line().find("Corruption") != std::string::npos, v.run.describe());
}

TEST_CASE(
    "log verify names the seq of an event changed through RocksDB itself (every RocksDB "
    "checksum right)") {
  SUBCASE("the head") {
    Lab lab;
    append_marked(lab, 5);
    flip_stored_value_byte(lab.data() / "log", marker(5), 3);
    Verdict v = verify(lab);
    CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
    CHECK(v.json.boolean("ok") == false);
    CHECK(v.json.u64("first_bad_seq") == 5u);
  }
  SUBCASE("a middle event, then the head too: the first is named, both are listed") {
    Lab lab;
    append_marked(lab, 5);
    REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
    flip_stored_value_byte(lab.data() / "log", marker(3), 3);
    Verdict v = verify(lab);
    CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
    CHECK(v.json.u64("first_bad_seq") == 3u);
    flip_stored_value_byte(lab.data() / "log", marker(5), 0);
    v = verify(lab);
    CHECK(v.json.u64("first_bad_seq") == 3u);
    CHECK(v.run.last_line().find("{\"seq\":5,") != std::string::npos);
  }
}

// What happens: RocksDB checks SST block checksums on every read, so the log cannot be read
// at all ("Corruption: block checksum mismatch ... in <file>") and no seq can be named.
TEST_CASE("log verify fails with a clear corruption error when a byte of an SST file is flipped") {
  Lab lab;
  append_marked(lab, 3);  // reopening for each append flushed event 2 into an SST file
  const fs::path sst = flip_byte_in(lab.data() / "log", ".sst", marker(2), 3);
  Verdict v = verify(lab);
  CHECK(v.run.exit_code != 0);
  CHECK_MESSAGE(v.run.err.find("Corruption") != std::string::npos, v.run.describe());
  CHECK(v.run.err.find(sst.filename().string()) != std::string::npos);
  CHECK(v.json.boolean("ok") == false);
  // Readers fail the same way rather than print a changed event.
  CliResult d = lab.aura({"log", "dump"});
  CHECK(d.exit_code != 0);
  CHECK_FALSE(d.signaled);
}

TEST_CASE("log verify names the event whose blob was altered or removed") {
  Lab lab;
  write_file(lab / "out.txt", "probe output\n");
  CliResult put = lab.aura({"blob", "put", (lab / "out.txt").string(), "--id", "ev-1"});
  REQUIRE_MESSAGE(put.exit_code == 0, put.describe());
  lab.append("s", "operator.t", "{}");
  lab.append("s", "operator.t", R"({"refs":[)" + put.last_line() + "]}");
  lab.append("s", "operator.t", "{}");
  const std::string sha = Json(put.last_line()).str("sha256").value_or("");
  const fs::path blob = lab.data() / "blobs" / "sha256" / sha.substr(0, 2) / sha.substr(2);
  REQUIRE(fs::exists(blob));
  fs::permissions(blob, fs::perms::owner_write, fs::perm_options::add);
  write_file(blob, "probe outpuT\n");
  Verdict v = verify(lab);
  CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
  CHECK(v.json.u64("first_bad_seq") == 2u);
  CHECK(v.run.last_line().find("ev-1") != std::string::npos);

  fs::remove(blob);
  v = verify(lab);
  CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
  CHECK(v.json.u64("first_bad_seq") == 2u);
  CHECK(v.run.last_line().find("not found") != std::string::npos);
}

TEST_CASE("log verify fails when the whole blobs folder is gone but events reference blobs") {
  Lab lab;
  write_file(lab / "out.txt", "probe output\n");
  CliResult put = lab.aura({"blob", "put", (lab / "out.txt").string(), "--id", "ev-1"});
  REQUIRE_MESSAGE(put.exit_code == 0, put.describe());
  lab.append("s", "operator.t", "{}");
  lab.append("s", "operator.t", R"({"refs":[)" + put.last_line() + "]}");
  fs::remove_all(lab.data() / "blobs");
  Verdict v = verify(lab);
  // One missing blob is named (above); all of them missing must not be an "ok".
  CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
  CHECK(v.json.u64("first_bad_seq") == 2u);
}

TEST_CASE("log verify --pubkey with another lab's key fails and names the checkpoint") {
  Lab lab;
  append_marked(lab, 4);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  lab.append("s", "operator.t", "{}");
  REQUIRE(run_aura({"keys", "init", "--keys", (lab / "other").string()}).exit_code == 0);
  Verdict v = verify(lab, {"--pubkey", (lab / "other" / "lab.pub").string()});
  CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
  CHECK(v.json.boolean("ok") == false);
  CHECK(v.json.u64("first_bad_seq") == 4u);
  CHECK(v.run.last_line().find("checkpoint at size 4") != std::string::npos);
  CliResult text = lab.aura({"log", "verify", "--pubkey", (lab / "other" / "lab.pub").string()});
  CHECK(text.exit_code == 1);
  CHECK(text.out.find("checkpoint at size 4") != std::string::npos);
  // The right key, given explicitly, passes.
  v = verify(lab, {"--pubkey", (lab.keys() / "lab.pub").string()});
  CHECK_MESSAGE(v.run.exit_code == 0, v.run.describe());
}

TEST_CASE("log verify refuses a --pubkey inside the data folder, even through a symlink") {
  Lab lab;
  lab.append("s", "operator.t", "{}");
  fs::copy_file(lab.keys() / "lab.pub", lab.data() / "lab.pub");
  fs::create_symlink(lab.data() / "lab.pub", lab / "outside.pub");
  for (const fs::path& key : {lab.data() / "lab.pub", lab / "outside.pub"}) {
    CAPTURE(key);
    Verdict v = verify(lab, {"--pubkey", key.string()});
    CHECK(v.run.exit_code == 1);
    CHECK(v.run.err.find("inside the data folder") != std::string::npos);
    CHECK(v.json.boolean("ok") == false);
  }
  // So is a keys folder inside the data folder (its lab.pub would be found with the data).
  fs::create_directories(lab.data() / "keys");
  fs::copy_file(lab.keys() / "lab.pub", lab.data() / "keys" / "lab.pub");
  CliResult r = run_aura(
      {"log", "verify", "--data", lab.data().string(), "--keys", (lab.data() / "keys").string()});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("inside the data folder") != std::string::npos);
}

TEST_CASE("log verify without a pinned key fails and says which key it looked for") {
  Lab lab;
  lab.append("s", "operator.t", "{}");
  Verdict v = verify(lab, {"--pubkey", (lab / "missing.pub").string()});
  CHECK(v.run.exit_code == 1);
  CHECK(v.run.err.find("missing.pub") != std::string::npos);
}

TEST_CASE("log verify --trusted with an earlier checkpoint passes and reports trusted_size") {
  Lab lab;
  append_marked(lab, 5);
  const fs::path trusted = save_checkpoint(lab, "ck5.note");
  for (int i = 0; i < 3; ++i) lab.append("s", "operator.t", "{}");
  Verdict v = verify(lab, {"--trusted", trusted.string()});
  CHECK_MESSAGE(v.run.exit_code == 0, v.run.describe());
  CHECK(v.json.boolean("ok") == true);
  CHECK(v.json.u64("trusted_size") == 5u);
  CHECK(v.json.u64("head_seq") == 8u);
  CHECK(v.json.u64("uncovered_tail") == 3u);
  CliResult text = lab.aura({"log", "verify", "--trusted", trusted.string()});
  CHECK(text.out.find("extends the trusted checkpoint of size 5") != std::string::npos);
  // The checkpoint of the head itself is trusted too.
  const fs::path now = save_checkpoint(lab, "ck8.note");
  v = verify(lab, {"--trusted", now.string()});
  CHECK_MESSAGE(v.run.exit_code == 0, v.run.describe());
  CHECK(v.json.u64("trusted_size") == 8u);
  CHECK(v.json.u64("uncovered_tail") == 0u);
}

TEST_CASE("log verify --trusted refuses a log rolled back to before the trusted checkpoint") {
  Lab lab;
  append_marked(lab, 5);
  fs::copy(lab.data(), lab / "old", fs::copy_options::recursive);  // the log at size 5
  for (int i = 0; i < 3; ++i) lab.append("s", "operator.t", "{}");
  const fs::path trusted = save_checkpoint(lab, "ck8.note");
  Verdict v = verify(lab, {"--trusted", trusted.string()}, lab / "old");
  CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
  CHECK(v.json.boolean("ok") == false);
  CHECK(v.json.u64("first_bad_seq") == 6u);
  CHECK(v.run.last_line().find("truncated") != std::string::npos);
}

TEST_CASE("log verify --trusted refuses a fork of the log") {
  Lab lab;
  append_marked(lab, 5);
  fs::copy(lab.data(), lab / "fork", fs::copy_options::recursive);
  lab.append("s", "operator.t", R"({"branch":"main"})");
  lab.append("s", "operator.t", "{}");
  // The same key signs a different event 6 in the copy.
  CliResult f =
      run_aura({"log", "append", "--data", (lab / "fork").string(), "--keys", lab.keys().string(),
                "--stream", "s", "--type", "operator.t", "--payload", R"({"branch":"fork"})"});
  REQUIRE_MESSAGE(f.exit_code == 0, f.describe());
  CliResult ck = run_aura(
      {"log", "checkpoint", "--data", (lab / "fork").string(), "--keys", lab.keys().string()});
  REQUIRE_MESSAGE(ck.exit_code == 0, ck.describe());
  write_file(lab / "fork6.note", ck.out);
  Verdict v = verify(lab, {"--trusted", (lab / "fork6.note").string()});
  CHECK_MESSAGE(v.run.exit_code == 1, v.run.describe());
  CHECK(v.json.boolean("ok") == false);
  CHECK(v.json.is_null("trusted_size"));
  CHECK(v.json.u64("first_bad_seq").value_or(99) <= 6u);
}

TEST_CASE("log verify --trusted refuses a checkpoint signed by another key or malformed") {
  Lab lab;
  append_marked(lab, 3);
  const fs::path good = save_checkpoint(lab, "ck3.note");
  REQUIRE(run_aura({"keys", "init", "--keys", (lab / "other").string()}).exit_code == 0);
  // A trusted note that does not verify is bad input (exit 2), not a fault of the log.
  Verdict v =
      verify(lab, {"--trusted", good.string(), "--pubkey", (lab / "other" / "lab.pub").string()});
  CHECK(v.run.exit_code == 2);
  CHECK(v.run.err.find("--trusted") != std::string::npos);
  CHECK(v.run.last_line().find("first_bad_seq") == std::string::npos);

  // One changed digit of the size line breaks the signature.
  const std::string note = read_file(good);
  write_file(lab / "edited.note", aura::testing::replace_once(note, "\n3\n", "\n2\n"));
  v = verify(lab, {"--trusted", (lab / "edited.note").string()});
  CHECK(v.run.exit_code == 2);
  CHECK(v.run.err.find("--trusted") != std::string::npos);

  v = verify(lab, {"--trusted", (lab / "nope.note").string()});
  CHECK(v.run.exit_code == 2);
  CHECK(v.run.err.find("--trusted") != std::string::npos);
  CHECK(v.run.err.find("nope.note") != std::string::npos);
}

TEST_CASE("log verify on a missing data folder fails and names it") {
  Lab lab;
  Verdict v = verify(lab);
  CHECK(v.run.exit_code == 1);
  CHECK(v.run.err.find("no data folder") != std::string::npos);
  CHECK(v.json.boolean("ok") == false);
  CHECK_FALSE(fs::exists(lab.data()));
}
