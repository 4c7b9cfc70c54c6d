// Black-box tests of `aura receipt verify`: a lab set up by the real binary (keys init), an
// attempt written to its data folder and a receipt issued in-process with the lab key, then the
// binary's exit status and output for genuine, tampered and mis-used invocations.
#include <doctest/doctest.h>

#include "engine/blob/blob_store.h"
#include "engine/keys/key_store.h"
#include "engine/log/data_dir.h"
#include "engine/log/event_log.h"
#include "engine/receipt/receipt.h"
#include "engine/receipt/receipt_format.h"
#include "engine/sign/dsse.h"
#include "tests/cli/cli_util.h"
#include "tests/cli/storage_edit.h"
#include "tests/receipt/attempt_fixture.h"

using namespace aura;
using namespace aura::testing;

namespace {

struct IssuedLab {
  Lab lab;
  AttemptFixture fx;
  receipt::IssuedReceipt receipt;
  std::filesystem::path file;
};

// Writes the fixture's attempt into the lab's data folder with the lab's own key, issues its
// receipt to ROOT/receipt.json and closes everything (the binary then opens the folder itself).
void set_up(IssuedLab& s) {
  auto keys = KeyStore::open(s.lab.keys());
  REQUIRE(keys.ok());
  auto dd = DataDir::open_writer(s.lab.data());
  REQUIRE(dd.ok());
  auto blobs = BlobStore::open(dd->blob_dir());
  REQUIRE(blobs.ok());
  EventLog::Options o;
  o.signer = &keys->lab_signer();
  o.blobs = &*blobs;
  auto log = EventLog::open(dd->log_dir(), o);
  REQUIRE(log.ok());
  s.fx = append_attempt(**log, *blobs);
  auto r = receipt::issue_receipt(**log, s.fx.attempt_id, keys->lab_signer(), *blobs);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  s.receipt = std::move(r).value();
  s.file = s.lab / "receipt.json";
  write_file(s.file, s.receipt.envelope);
}

}  // namespace

TEST_CASE("aura receipt verify: a genuine receipt holds offline and by replay") {
  IssuedLab s;
  set_up(s);
  CliResult r = s.lab.aura({"receipt", "verify", s.file.string()});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.out.find("receipt of attempt " + s.fx.attempt_id) != std::string::npos);
  CHECK(r.out.find("  ok    signature\n") != std::string::npos);
  CHECK(r.out.find("  ok    inclusion_proofs\n") != std::string::npos);
  CHECK(r.out.find("FAIL") == std::string::npos);

  r = s.lab.aura({"receipt", "verify", s.file.string(), "--replay", "--json"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  Json j(r.last_line());
  REQUIRE(j.ok());
  CHECK(j.boolean("ok") == true);
  CHECK(j.boolean("replayed") == true);
  CHECK(j.str("attempt") == s.fx.attempt_id);
  CHECK(j.str("verdict") == "VERIFIED");
  CHECK(j.u64("first_seq") == s.fx.started_seq);
  CHECK(j.u64("last_seq") == s.fx.verdict_seq);

  // --pubkey pins the same key from a file outside the data folder.
  r = run_aura(
      {"receipt", "verify", s.file.string(), "--pubkey", (s.lab.keys() / "lab.pub").string()});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
}

TEST_CASE("aura receipt verify: a tampered receipt fails with the field named") {
  IssuedLab s;
  set_up(s);
  // Re-signed by a key the verifier does not pin.
  auto other = KeyStore::init(s.lab / "other-keys");
  REQUIRE(other.ok());
  auto edited = replace_once(s.receipt.document, "6.8.0-test", "6.8.1-test");
  write_file(s.file, dsse_sign(receipt::receipt_format::kPayloadType, edited, other->lab_signer()));
  CliResult r = s.lab.aura({"receipt", "verify", s.file.string(), "--json"});
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK(r.out.find("  FAIL  signature: ") != std::string::npos);
  Json j(r.last_line());
  REQUIRE(j.ok());
  CHECK(j.boolean("ok") == false);

  // A genuine receipt checked against the other key.
  write_file(s.file, s.receipt.envelope);
  r = run_aura({"receipt", "verify", s.file.string(), "--pubkey",
                (s.lab / "other-keys" / "lab.pub").string()});
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK(r.out.find("FAIL  signature") != std::string::npos);
}

TEST_CASE("aura receipt verify --replay: an edited log event is named") {
  IssuedLab s;
  set_up(s);
  flip_stored_value_byte(s.lab.data() / "log", s.fx.predicted_text, 2);
  CliResult r = s.lab.aura({"receipt", "verify", s.file.string()});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());  // offline: the receipt itself is intact
  r = s.lab.aura({"receipt", "verify", s.file.string(), "--replay"});
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK(r.out.find("  FAIL  log: seq ") != std::string::npos);
}

TEST_CASE("aura receipt verify: usage errors exit 2") {
  IssuedLab s;
  set_up(s);
  CliResult r = s.lab.aura({"receipt", "verify"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  r = s.lab.aura({"receipt", "verify", s.file.string(), "--no-such-flag"});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  r = s.lab.aura({"receipt", "verify", (s.lab / "missing.json").string()});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  // A key inside the data folder is never pinned.
  write_file(s.lab.data() / "lab.pub", read_file(s.lab.keys() / "lab.pub"));
  r = s.lab.aura(
      {"receipt", "verify", s.file.string(), "--pubkey", (s.lab.data() / "lab.pub").string()});
  CHECK_MESSAGE(r.exit_code == 2, r.describe());
  CHECK(r.err.find("inside the data folder") != std::string::npos);
  r = run_aura({"receipt", "verify", "--help"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.out.find("--replay") != std::string::npos);
}
