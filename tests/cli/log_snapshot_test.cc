// `aura log snapshot` and `aura log restore`: a consistent signed copy, brought back and
// verified elsewhere, and refused when it or its target is not as expected.
#include <doctest/doctest.h>

#include <string>

#include "tests/cli/cli_util.h"

using aura::testing::CliResult;
using aura::testing::files_with_suffix;
using aura::testing::Json;
using aura::testing::Lab;
using aura::testing::read_file;
using aura::testing::run_aura;
using aura::testing::tree;
using aura::testing::write_file;
namespace fs = std::filesystem;

namespace {

// A log with events, a blob reference and a checkpoint, and its snapshot in ROOT/snap.
struct Snapshotted {
  Lab lab;
  std::string head_hash;
  uint64_t head_seq = 0;

  Snapshotted() {
    write_file(lab / "out.txt", "probe output\n");
    CliResult put = lab.aura({"blob", "put", (lab / "out.txt").string(), "--id", "ev-1"});
    REQUIRE_MESSAGE(put.exit_code == 0, put.describe());
    for (int i = 0; i < 4; ++i)
      lab.append("ops/a", "operator.t", "{\"i\":" + std::to_string(i) + "}");
    lab.append("ops/b", "operator.probe", R"({"refs":[)" + put.last_line() + "]}");
    REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
    lab.append("ops/a", "operator.t", "{}");
    CliResult s = lab.aura({"log", "snapshot", "--out", snap().string(), "--json"});
    REQUIRE_MESSAGE(s.exit_code == 0, s.describe());
    Json j(s.last_line());
    head_seq = j.u64("head_seq").value_or(0);
    head_hash = j.str("head_hash").value_or("");
    REQUIRE(head_seq == 6);
    REQUIRE(head_hash == lab.head().str("head_hash"));
    // An auditor's keys folder: only the lab's public key.
    fs::create_directories(auditor());
    fs::copy_file(lab.keys() / "lab.pub", auditor() / "lab.pub");
  }
  fs::path snap() const { return lab / "snap"; }
  fs::path auditor() const { return lab / "auditor"; }

  CliResult restore(const fs::path& from, const fs::path& to,
                    std::vector<std::string> more = {}) const {
    std::vector<std::string> args = {"log",       "restore", from.string(),      "--data",
                                     to.string(), "--keys",  auditor().string(), "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return run_aura(args);
  }
  // A copy of the snapshot to edit.
  fs::path copy_snapshot(const std::string& name) const {
    fs::copy(snap(), lab / name, fs::copy_options::recursive);
    return lab / name;
  }
  // A restore from `from` must fail naming `what`, and leave no target folder behind.
  void check_refused(const fs::path& from, const std::string& what,
                     std::vector<std::string> more = {}) const {
    CAPTURE(what);
    const fs::path target = lab / "refused";
    CliResult r = restore(from, target, more);
    CHECK_MESSAGE(r.exit_code != 0, r.describe());
    CHECK_FALSE(r.signaled);
    CHECK_MESSAGE(r.err.find(what) != std::string::npos, r.describe());
    CHECK(Json(r.last_line()).boolean("ok") == false);
    CHECK(tree(target).empty());
  }
};

}  // namespace

TEST_CASE("log snapshot then log restore into a new folder: verify passes with the same head") {
  Snapshotted s;
  CHECK(fs::exists(s.snap() / "manifest.dsse.json"));
  CHECK_FALSE(fs::exists(s.snap() / "lab.key"));  // only the public key travels
  const fs::path restored = s.lab / "new";
  CliResult r = s.restore(s.snap(), restored);
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json j(r.last_line());
  CHECK(j.boolean("ok") == true);
  CHECK(j.boolean("verified") == true);
  CHECK(j.u64("head_seq") == s.head_seq);
  CHECK(j.str("head_hash") == s.head_hash);

  CliResult v = run_aura(
      {"log", "verify", "--data", restored.string(), "--keys", s.auditor().string(), "--json"});
  CHECK_MESSAGE(v.exit_code == 0, v.describe());
  Json jv(v.last_line());
  CHECK(jv.boolean("ok") == true);
  CHECK(jv.str("head_hash") == s.head_hash);
  CHECK(jv.u64("head_seq") == s.head_seq);
  CHECK(jv.u64("blobs_checked") == 1u);
  CHECK(jv.u64("checkpoints_checked") == 1u);
  // The same events, byte for byte.
  CliResult a = s.lab.aura({"log", "dump"});
  CliResult b = run_aura({"log", "dump", "--data", restored.string()});
  CHECK(a.exit_code == 0);
  CHECK(a.out == b.out);
  // The original is untouched and still extends.
  CHECK(s.lab.append("ops/a", "operator.t", "{}") == s.head_seq + 1);
}

TEST_CASE("a restored log takes appends with the lab key and keeps verifying") {
  Snapshotted s;
  const fs::path restored = s.lab / "new";
  REQUIRE(s.restore(s.snap(), restored).exit_code == 0);
  CliResult r =
      run_aura({"log", "append", "--data", restored.string(), "--keys", s.lab.keys().string(),
                "--stream", "s", "--type", "operator.t", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(Json(r.last_line()).u64("seq") == s.head_seq + 1);
  CliResult v =
      run_aura({"log", "verify", "--data", restored.string(), "--keys", s.lab.keys().string()});
  CHECK_MESSAGE(v.exit_code == 0, v.describe());
}

TEST_CASE("log restore into an existing empty folder works") {
  Snapshotted s;
  fs::create_directories(s.lab / "empty");
  CliResult r = s.restore(s.snap(), s.lab / "empty");
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
}

TEST_CASE("log restore into a non-empty folder refuses and leaves it untouched") {
  Snapshotted s;
  const fs::path target = s.lab / "busy";
  fs::create_directories(target / "sub");
  write_file(target / "notes.txt", "mine\n");
  const auto before = tree(target);
  CliResult r = s.restore(s.snap(), target);
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("not empty") != std::string::npos);
  CHECK(tree(target) == before);
  CHECK(read_file(target / "notes.txt") == "mine\n");
  // Nor over the live data folder.
  r = s.restore(s.snap(), s.lab.data());
  CHECK(r.exit_code != 0);
  CHECK(s.lab.head().str("head_hash") == s.head_hash);
}

TEST_CASE("log restore without --data refuses instead of using the default folder") {
  Snapshotted s;
  CliResult r = run_aura({"log", "restore", s.snap().string(), "--keys", s.auditor().string()});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--data") != std::string::npos);
}

TEST_CASE("log restore refuses a snapshot with a changed, missing or extra file") {
  Snapshotted s;
  {
    const fs::path t = s.copy_snapshot("t-blob");
    const auto blobs = files_with_suffix(t / "blobs" / "sha256", "");
    REQUIRE(blobs.size() == 1);
    fs::permissions(blobs[0], fs::perms::owner_write, fs::perm_options::add);
    std::string b = read_file(blobs[0]);
    b[0] = char(b[0] ^ 1);
    write_file(blobs[0], b);
    s.check_refused(t, "differs from the manifest");
  }
  {
    const fs::path t = s.copy_snapshot("t-sst");
    const auto ssts = files_with_suffix(t / "log", ".sst");
    REQUIRE_FALSE(ssts.empty());
    fs::permissions(ssts[0], fs::perms::owner_write, fs::perm_options::add);
    std::string b = read_file(ssts[0]);
    b[b.size() / 2] = char(b[b.size() / 2] ^ 1);
    write_file(ssts[0], b);
    s.check_refused(t, ssts[0].filename().string());
  }
  {
    const fs::path t = s.copy_snapshot("t-missing");
    const auto ssts = files_with_suffix(t / "log", ".sst");
    REQUIRE_FALSE(ssts.empty());
    fs::remove(ssts.back());
    s.check_refused(t, "missing");
  }
  {
    // An extra WAL would be replayed by RocksDB: it must not slip in.
    const fs::path t = s.copy_snapshot("t-extra");
    write_file(t / "log" / "999999.log", "extra");
    s.check_refused(t, "not in the manifest");
  }
}

TEST_CASE("log restore refuses a snapshot whose manifest was edited or is signed by another key") {
  Snapshotted s;
  {
    const fs::path t = s.copy_snapshot("t-manifest");
    std::string m = read_file(t / "manifest.dsse.json");
    // Flip one character of the base64 payload.
    const size_t at = m.find("\"payload\":\"") + 20;
    m[at] = m[at] == 'A' ? 'B' : 'A';
    write_file(t / "manifest.dsse.json", m);
    s.check_refused(t, "manifest");
  }
  {
    const fs::path t = s.copy_snapshot("t-nomanifest");
    fs::remove(t / "manifest.dsse.json");
    s.check_refused(t, "manifest");
  }
  REQUIRE(run_aura({"keys", "init", "--keys", (s.lab / "other").string()}).exit_code == 0);
  s.check_refused(s.snap(), "no signature by a known key",
                  {"--pubkey", (s.lab / "other" / "lab.pub").string()});
}

TEST_CASE("log restore refuses a --pubkey that travels inside the snapshot it verifies") {
  Snapshotted s;
  REQUIRE(fs::exists(s.snap() / "lab.pub"));
  // A forger who re-signs a snapshot ships a matching lab.pub next to it: pinning that key
  // proves nothing, just as a key inside the data folder proves nothing.
  s.check_refused(s.snap(), "inside", {"--pubkey", (s.snap() / "lab.pub").string()});
}

TEST_CASE("log snapshot refuses an --out folder that is not empty and needs --out") {
  Snapshotted s;
  fs::create_directories(s.lab / "full");
  write_file(s.lab / "full" / "x", "x");
  CliResult r = s.lab.aura({"log", "snapshot", "--out", (s.lab / "full").string()});
  CHECK(r.exit_code != 0);
  CHECK(tree(s.lab / "full") == std::vector<std::string>{"x"});
  r = s.lab.aura({"log", "snapshot"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--out") != std::string::npos);
}
