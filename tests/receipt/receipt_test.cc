#include "engine/receipt/receipt.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <optional>

#include "engine/checkpoint/checkpoint.h"
#include "engine/common/json_writer.h"
#include "engine/crypto/ed25519.h"
#include "engine/events/event_types.h"
#include "engine/receipt/raw_json.h"
#include "engine/receipt/receipt_format.h"
#include "engine/sign/dsse.h"
#include "engine/world/world_built.h"
#include "tests/cli/cli_util.h"
#include "tests/cli/storage_edit.h"
#include "tests/log/log_test_util.h"
#include "tests/receipt/attempt_fixture.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::receipt;
using aura::testing::append_attempt;
using aura::testing::AttemptFixture;
using aura::testing::AttemptOptions;
using aura::testing::replace_once;
using aura::testing::test_signer;

namespace {

namespace rf = receipt::receipt_format;

// A log and blob store in a temporary folder, signed by the test lab key.
struct TestLab {
  aura::testing::TempDir dir;
  std::optional<BlobStore> blobs;
  std::unique_ptr<EventLog> log;

  explicit TestLab(uint64_t checkpoint_every = 16) {
    auto b = BlobStore::open(dir / "blobs");
    REQUIRE(b.ok());
    blobs.emplace(std::move(b).value());
    log = aura::testing::open_log(dir / "log", checkpoint_every, false, nullptr, &*blobs);
  }
  void close() { log.reset(); }
  void reopen_read_only() {
    log.reset();
    log = aura::testing::open_log(dir / "log", 16, true, nullptr, &*blobs);
  }
  ReplayContext replay() const { return {log.get(), &*blobs}; }
  // The lab's per-request replay: the receipt's own events, not the whole log.
  ReplayContext replay_events() const { return {log.get(), &*blobs, /*whole_log=*/false}; }
};

// Overwrites the attempt's IR blob in the store with as many spaces (its name kept).
void replace_ir_blob(const TestLab& lab, const AttemptFixture& fx) {
  const auto path = lab.blobs->path_of(sha256(fx.ir_json));
  std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  aura::testing::write_file(path, std::string(fx.ir_json.size(), ' '));
}

const NoteVerifierKey& pinned() {
  static const NoteVerifierKey k = test_signer().verifier();
  return k;
}

const NoteSigner& other_signer() {
  static const NoteSigner s("aura.lab/someone-else", Ed25519KeyPair::from_seed(Ed25519Seed{9}));
  return s;
}

IssuedReceipt issue(TestLab& lab, const AttemptFixture& fx) {
  auto r = issue_receipt(*lab.log, fx.attempt_id, test_signer(), *lab.blobs);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  return std::move(r).value();
}

std::string describe(const ReceiptReport& r) {
  std::string s = "failures:";
  for (const auto& f : r.failures) s += "\n  " + f.field + ": " + f.what;
  return s;
}

bool fails_at(const ReceiptReport& r, const std::string& field) {
  for (const auto& f : r.failures)
    if (f.field == field) return true;
  return false;
}

// A failure named at `field` or a member or element below it.
bool fails_under(const ReceiptReport& r, const std::string& field) {
  for (const auto& f : r.failures)
    if (f.field == field || f.field.starts_with(field + ".") || f.field.starts_with(field + "["))
      return true;
  return false;
}

std::vector<std::string> failed_fields(const ReceiptReport& r) {
  std::vector<std::string> out;
  for (const auto& f : r.failures) out.push_back(f.field);
  return out;
}

std::string sign_doc(const std::string& doc, const NoteSigner& signer = test_signer()) {
  return dsse_sign(rf::kPayloadType, doc, signer);
}

// The document with its hashes member recomputed from its sections (as a forger holding the
// signing key would).
std::string rehash(const std::string& doc) {
  auto members = raw_members(doc, "doc");
  REQUIRE(members.ok());
  auto intervention = raw_members(*raw_member(*members, "intervention", "doc"), "intervention");
  REQUIRE(intervention.ok());
  std::string hashes = "{";
  for (std::string_view name : rf::kHashedSections) {
    const std::string_view bytes = name == "actions" ? *raw_member(*intervention, "actions", "i")
                                                     : *raw_member(*members, name, "doc");
    if (hashes.size() > 1) hashes += ",";
    hashes += "\"" + std::string(name) + "\":\"" + to_hex(sha256(bytes)) + "\"";
  }
  hashes += "}";
  const size_t at = doc.rfind(",\"hashes\":");
  REQUIRE(at != std::string::npos);
  return doc.substr(0, at) + ",\"hashes\":" + hashes + "}";
}

// The original envelope with its payload replaced but its signature kept.
std::string swap_payload(const std::string& envelope, const std::string& old_doc,
                         const std::string& new_doc) {
  return replace_once(envelope, base64_encode(old_doc), base64_encode(new_doc));
}

uint64_t first_seq_of_type(const EventLog& log, const std::string& stream,
                           const std::string& type) {
  uint64_t found = 0;
  REQUIRE(log.read_stream(stream, 1,
                          [&](const EventView& v) {
                            if (v.type != type) return true;
                            found = v.seq;
                            return false;
                          })
              .is_ok());
  REQUIRE(found != 0);
  return found;
}

}  // namespace

TEST_CASE("receipt: a VERIFIED attempt's receipt verifies offline and by replay") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  REQUIRE(fx.recorded.verdict == gate::Verdict::kVerified);
  const IssuedReceipt r = issue(lab, fx);

  CHECK(r.envelope_sha256 == sha256(r.envelope));
  CHECK(r.first_seq == fx.started_seq);
  CHECK(r.last_seq == fx.verdict_seq);
  CHECK(r.checkpoint_size == lab.log->head().seq);
  auto opened = dsse_open(r.envelope, rf::kPayloadType, std::span(&pinned(), 1));
  REQUIRE(opened.ok());
  CHECK(*opened == r.document);

  const ReceiptReport offline = verify_receipt(r.envelope, pinned());
  CHECK_MESSAGE(offline.ok(), describe(offline));
  CHECK_FALSE(offline.replayed);
  CHECK(offline.attempt == fx.attempt_id);
  CHECK(offline.scenario_id == "t0-config-drift");
  CHECK(offline.verdict == "VERIFIED");
  CHECK(offline.first_seq == fx.started_seq);
  CHECK(offline.last_seq == fx.verdict_seq);
  for (const char* c : {"signature", "document", "hashes.scenario", "hashes.actions",
                        "hashes.events", "gate", "events", "checkpoint", "inclusion_proofs"}) {
    CAPTURE(c);
    CHECK(std::find(offline.passed.begin(), offline.passed.end(), c) != offline.passed.end());
  }

  const ReceiptReport replayed = verify_receipt(r.envelope, pinned(), lab.replay());
  CHECK_MESSAGE(replayed.ok(), describe(replayed));
  CHECK(replayed.replayed);
  for (const char* c :
       {"log", "checkpoint in log", "events in log", "rebuilt facts", "rebuilt gate", "regraded"}) {
    CAPTURE(c);
    CHECK(std::find(replayed.passed.begin(), replayed.passed.end(), c) != replayed.passed.end());
  }
}

TEST_CASE("receipt: the document binds the attempt's events, facts, gate and intervention") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs, {.coach_calls = 2});
  const IssuedReceipt r = issue(lab, fx);
  const std::string& doc = r.document;

  auto members = raw_members(doc, "doc");
  REQUIRE(members.ok());
  REQUIRE(members->size() == rf::kMembers.size());
  for (size_t i = 0; i < rf::kMembers.size(); ++i) CHECK((*members)[i].key == rf::kMembers[i]);
  CHECK(doc.rfind(R"({"v":2,"attempt":"0123456789abcdef",)", 0) == 0);

  // Exactly the attempt's events from attempt.started through the verdict, none of the
  // interleaved streams', none after the verdict.
  std::string leaves;
  for (uint64_t seq : fx.stream_seqs) {
    auto ev = lab.log->get(seq);
    REQUIRE(ev.ok());
    leaves += std::string(leaves.empty() ? "" : ",") + R"({"seq":)" + std::to_string(seq) +
              R"(,"hash":")" + to_hex(ev->hash) + "\"}";
  }
  CHECK(std::string(*raw_member(*members, "events", "doc")) ==
        R"({"stream":"attempt/0123456789abcdef","first_seq":)" + std::to_string(fx.started_seq) +
            R"(,"last_seq":)" + std::to_string(fx.verdict_seq) + R"(,"count":)" +
            std::to_string(fx.stream_seqs.size()) + R"(,"leaves":[)" + leaves + "]}");

  // The gate section is byte for byte the recorded result.
  CHECK(std::string(*raw_member(*members, "gate", "doc")) == gate::result_json(fx.recorded));
  // The IR's actions and rollback, minified from the learner's bytes.
  CHECK(std::string(*raw_member(*members, "intervention", "doc")) ==
        R"({"revision":1,"ir_sha256":")" + to_hex(sha256(fx.ir_json)) +
            R"(","actions":[{"call":"vars.unset","params":{"node":{"selector":"stale-app-root"},)"
            R"("key":"app_root"}}]})");
  const std::string rollback(*raw_member(*members, "rollback", "doc"));
  CHECK(rollback.rfind(R"({"actions":[{"call":"journal.undo","params":{}}],"facts":[)", 0) == 0);
  // Facts: the supervisor's only (the learner's forged gate.fact is not among them), split at
  // stage before.
  const std::string facts(*raw_member(*members, "facts", "doc"));
  CHECK(facts.find("forged") == std::string::npos);
  size_t listed = 0;
  for (uint64_t seq : fx.fact_seqs) {
    CAPTURE(seq);
    CHECK(facts.find(R"({"seq":)" + std::to_string(seq) + ",") != std::string::npos);
    ++listed;
  }
  CHECK(listed == 19);
  CHECK(facts.rfind(R"({"before":[{"seq":)", 0) == 0);
  CHECK(facts.find(R"("stage":"before","check":"world.fingerprint","ok":true,"value":")") <
        facts.find(R"("after":[)"));
  // Model assistance disclosed.
  CHECK(std::string(*raw_member(*members, "model_assistance", "doc")) ==
        R"({"used":true,"calls":[{"call":1,"request_sha256":")" + std::string(64, 'd') +
            R"(","response_sha256":")" + std::string(64, 'e') +
            R"(","model":"coach-small"},{"call":2,"request_sha256":")" + std::string(64, 'd') +
            R"(","response_sha256":")" + std::string(64, 'e') + R"(","model":"coach-small"}]})");
  // Every hash is recomputable from the document itself.
  CHECK(rehash(doc) == doc);
  // The checkpoint note is the log's, signed at the head.
  auto latest = lab.log->latest_checkpoint();
  REQUIRE(latest.ok());
  REQUIRE(latest->has_value());
  std::string note_json;
  json_append_string(note_json, (*latest)->signed_note);
  CHECK(std::string(*raw_member(*members, "checkpoint", "doc")) ==
        R"({"size":)" + std::to_string((*latest)->size) + R"(,"note":)" + note_json + "}");

  const ReceiptReport report = verify_receipt(r.envelope, pinned(), lab.replay());
  CHECK_MESSAGE(report.ok(), describe(report));
}

TEST_CASE("receipt: issuing is refused unless the attempt's verdict is VERIFIED") {
  TestLab lab;
  const AttemptFixture unproven = append_attempt(*lab.log, *lab.blobs, {.fail_twin = true});
  REQUIRE(unproven.recorded.verdict == gate::Verdict::kRecoveredUnproven);
  auto r = issue_receipt(*lab.log, unproven.attempt_id, test_signer(), *lab.blobs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(r.status().message().find("RECOVERED_UNPROVEN") != std::string::npos);

  const AttemptFixture no_gate = append_attempt(
      *lab.log, *lab.blobs, {.attempt_id = "00000000000000aa", .stop_before_gate = true});
  r = issue_receipt(*lab.log, no_gate.attempt_id, test_signer(), *lab.blobs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(r.status().message().find("no gate verdict") != std::string::npos);

  r = issue_receipt(*lab.log, "00000000000000bb", test_signer(), *lab.blobs);
  CHECK(r.status().code() == ErrorCode::kNotFound);
  r = issue_receipt(*lab.log, "0123456789ABCDEF", test_signer(), *lab.blobs);
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  r = issue_receipt(*lab.log, "../../etc", test_signer(), *lab.blobs);
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("receipt: issuing fails when the IR blob is gone") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  std::filesystem::remove(lab.blobs->path_of(sha256(fx.ir_json)));
  auto r = issue_receipt(*lab.log, fx.attempt_id, test_signer(), *lab.blobs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("IR blob ir-1") != std::string::npos);
}

TEST_CASE("receipt: the signature is checked against the pinned key only") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);

  SUBCASE("the same document signed by another key") {
    const ReceiptReport rep = verify_receipt(sign_doc(r.document, other_signer()), pinned());
    CHECK(failed_fields(rep) == std::vector<std::string>{"signature"});
    CHECK(rep.passed.empty());
  }
  SUBCASE("a genuine receipt checked against another pinned key") {
    const ReceiptReport rep = verify_receipt(r.envelope, other_signer().verifier());
    CHECK(failed_fields(rep) == std::vector<std::string>{"signature"});
  }
  SUBCASE("a signature byte changed") {
    const size_t at = r.envelope.find("\"sig\":\"") + 7;
    std::string bad = r.envelope;
    bad[at] = bad[at] == 'A' ? 'B' : 'A';
    const ReceiptReport rep = verify_receipt(bad, pinned());
    CHECK(failed_fields(rep) == std::vector<std::string>{"signature"});
  }
  SUBCASE("another payload type") {
    const std::string bad = dsse_sign(dsse_format::kPayloadTypeSnapshot, r.document, test_signer());
    const ReceiptReport rep = verify_receipt(bad, pinned());
    CHECK(failed_fields(rep) == std::vector<std::string>{"envelope"});
  }
  SUBCASE("not an envelope") {
    CHECK(failed_fields(verify_receipt(r.document, pinned())) ==
          std::vector<std::string>{"envelope"});
    CHECK(failed_fields(verify_receipt("", pinned())) == std::vector<std::string>{"envelope"});
  }
}

TEST_CASE("receipt: every bound field, edited, is caught and named") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  const std::string& doc = r.document;

  auto members = raw_members(doc, "doc");
  REQUIRE(members.ok());
  const std::string events(*raw_member(*members, "events", "doc"));
  const std::string proofs(*raw_member(*members, "inclusion_proofs", "doc"));
  const std::string first_leaf_hash = events.substr(events.find(R"("hash":")") + 8, 64);
  const std::string first_proof_hash = proofs.substr(proofs.find(R"("hashes":[")") + 11, 64);
  const auto flip = [](std::string hex) { return aura::testing::flip_hex_digit(std::move(hex)); };

  struct Case {
    std::string name;
    std::function<std::string(const std::string&)> edit;
    std::vector<std::string> fields;  // each must be named
  };
  const std::string ck_size = std::to_string(r.checkpoint_size);
  const std::vector<Case> cases = {
      {"scenario id",
       [](const std::string& d) {
         return replace_once(d, R"("id":"t0-config-drift")", R"("id":"t0-config-drifT")");
       },
       {"hashes.scenario"}},
      {"environment",
       [](const std::string& d) { return replace_once(d, "6.8.0-test", "6.8.1-test"); },
       {"hashes.environment"}},
      {"intervention revision",
       [](const std::string& d) {
         return replace_once(d, R"("intervention":{"revision":1,)",
                             R"("intervention":{"revision":2,)");
       },
       {"hashes.intervention"}},
      {"an action",
       [](const std::string& d) {
         return replace_once(d, R"("key":"app_root"}}])", R"("key":"port"}}])");
       },
       {"hashes.actions", "hashes.intervention"}},
      {"a fact",
       [](const std::string& d) {
         return replace_once(d, R"("check":"control-calm","ok":true)",
                             R"("check":"control-calm","ok":false)");
       },
       {"hashes.facts"}},
      {"a property result",
       [](const std::string& d) {
         return replace_once(d, R"({"property":"twin","status":"pass","reason":"")",
                             R"({"property":"twin","status":"pass","reason":"x")");
       },
       {"hashes.gate"}},
      {"the rollback",
       [](const std::string& d) { return replace_once(d, "journal.undo", "journal.redo"); },
       {"hashes.rollback"}},
      {"model assistance",
       [](const std::string& d) {
         return replace_once(d, R"("model_assistance":{"used":false,"calls":[]})",
                             R"("model_assistance":{"used":true,"calls":[{"call":1,)"
                             R"("request_sha256":")" +
                                 std::string(64, '0') + R"(","response_sha256":")" +
                                 std::string(64, '0') + R"(","model":"m"}]})");
       },
       {"hashes.model_assistance"}},
      {"a leaf hash",
       [&](const std::string& d) {
         return replace_once(d, first_leaf_hash, flip(first_leaf_hash));
       },
       {"hashes.events", "inclusion_proofs[0]"}},
      {"a section hash",
       [&](const std::string& d) {
         const size_t at = d.find(R"("facts":")", d.rfind(R"("hashes":)")) + 9;
         std::string e = d;
         e.replace(at, 64, flip(d.substr(at, 64)));
         return e;
       },
       {"hashes.facts"}},
      {"a proof hash",
       [&](const std::string& d) {
         return replace_once(d, first_proof_hash, flip(first_proof_hash));
       },
       {"inclusion_proofs[0]"}},
      {"the checkpoint note's root",
       [&](const std::string& d) {
         // The note's third line is the base64 root.
         const size_t note = d.find(R"("note":")") + 8;
         size_t line3 = d.find("\\n", d.find("\\n", note) + 2) + 2;
         std::string e = d;
         e[line3] = e[line3] == 'A' ? 'B' : 'A';
         return e;
       },
       {"checkpoint.note", "inclusion_proofs"}},
      {"the checkpoint size",
       [&](const std::string& d) {
         return replace_once(d, R"("checkpoint":{"size":)" + ck_size,
                             R"("checkpoint":{"size":)" + std::to_string(r.checkpoint_size + 1));
       },
       {"checkpoint.size"}},
  };

  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string edited = c.edit(doc);
    REQUIRE(edited != doc);
    // Signed by another key, or carried under the original signature: the signature fails.
    CHECK(failed_fields(verify_receipt(sign_doc(edited, other_signer()), pinned())) ==
          std::vector<std::string>{"signature"});
    CHECK(failed_fields(verify_receipt(swap_payload(r.envelope, doc, edited), pinned())) ==
          std::vector<std::string>{"signature"});
    // Signed with the pinned key itself: only the hash or proof checks can catch it.
    const ReceiptReport rep = verify_receipt(sign_doc(edited), pinned());
    CHECK_FALSE(rep.ok());
    CHECK(std::find(rep.passed.begin(), rep.passed.end(), "signature") != rep.passed.end());
    for (const auto& f : c.fields) {
      CAPTURE(f);
      CHECK_MESSAGE(fails_at(rep, f), describe(rep));
    }
  }
}

TEST_CASE("receipt: claims edited with their hashes recomputed fail their own checks") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  const std::string& doc = r.document;
  const std::string first = std::to_string(fx.started_seq);
  const std::string last = std::to_string(fx.verdict_seq);
  const std::string count = std::to_string(fx.stream_seqs.size());

  struct Case {
    std::string name;
    std::string from, to;
    std::string field;
  };
  const std::vector<Case> cases = {
      // The receipt field, not the event type: NOLINT(event-type)
      {"verdict", R"("verdict":"VERIFIED")", R"("verdict":"RECOVERED_UNPROVEN")", "gate.verdict"},
      {"recovered", R"({"recovered":true,)", R"({"recovered":false,)", "gate.recovered"},
      {"a property status", R"({"property":"control","status":"pass")",
       R"({"property":"control","status":"fail")", "gate.properties[2].status"},
      {"count", R"("count":)" + count, R"("count":)" + std::to_string(fx.stream_seqs.size() + 1),
       "events.count"},
      {"first_seq", R"("first_seq":)" + first + ",", R"("first_seq":)" + last + ",",
       "events.first_seq"},
      {"stream", R"("stream":"attempt/0123456789abcdef")", R"("stream":"attempt/0123456789abcdee")",
       "events.stream"},
      {"a fact seq not among the events",
       R"({"seq":)" + std::to_string(fx.fact_seqs[3]) + R"(,"property")",
       R"({"seq":)" + std::to_string(fx.fact_seqs[3] + 1) + R"(,"property")", "facts"},
      {"version", R"({"v":2,)", R"({"v":1,)", "v"},
      {"a placeholder lab build digest", R"("lab_build_digest":")" + std::string(64, '1'),
       R"("lab_build_digest":")" + std::string(64, '0'), "environment.lab_build_digest"},
      {"an evidence seq not among the events",
       R"("bytes":26,"seq":)" + std::to_string(fx.evidence_seq),
       R"("bytes":26,"seq":)" + std::to_string(fx.evidence_seq + 1), "evidence"},
      {"a world seq not among the events", R"("worlds":[)" + std::to_string(fx.world_seqs[0]),
       R"("worlds":[)" + std::to_string(fx.world_seqs[0] + 1), "environment.worlds"},
      {"binaries out of order", R"({"/aura/bin/aura-runner":)",
       R"({"/zzz":")" + std::string(64, 'a') + R"(","/aura/bin/aura-runner":)",
       "environment.binaries./aura/bin/aura-runner"},
      {"attempt id", R"("attempt":"0123456789abcdef")", R"("attempt":"0123456789ABCDEF")",
       "attempt"},
      {"an unknown member", R"("rollback":{)", R"("extra":1,"rollback":{)", "document"},
      {"model assistance used without calls", R"("used":false)", R"("used":true)",
       "model_assistance.used"},
      {"a fact at before listed after", R"("stage":"after_rollback")", R"("stage":"before")",
       "facts.after[17].stage"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::string edited = rehash(replace_once(doc, c.from, c.to));
    const ReceiptReport rep = verify_receipt(sign_doc(edited), pinned());
    CHECK_MESSAGE(fails_at(rep, c.field), describe(rep));
    CHECK_FALSE(rep.ok());
  }

  SUBCASE("a leaf dropped, count and hashes recomputed: the proofs no longer line up") {
    const std::string leaf_prefix =
        R"({"seq":)" + std::to_string(fx.stream_seqs[1]) + R"(,"hash":")";
    const size_t at = doc.find(leaf_prefix);
    REQUIRE(at != std::string::npos);
    std::string edited = doc;
    edited.erase(at, leaf_prefix.size() + 64 + 3);  // the leaf, its closing brace and comma
    edited = replace_once(edited, R"("count":)" + count,
                          R"("count":)" + std::to_string(fx.stream_seqs.size() - 1));
    const ReceiptReport rep = verify_receipt(sign_doc(rehash(edited)), pinned());
    CHECK_MESSAGE(fails_at(rep, "inclusion_proofs"), describe(rep));
  }
  SUBCASE("a leaf hash and its events hash both forged: the proof catches it, and replay") {
    auto members = raw_members(doc, "doc");
    const std::string events(*raw_member(*members, "events", "doc"));
    const std::string h = events.substr(events.find(R"("hash":")") + 8, 64);
    const std::string edited = rehash(replace_once(doc, h, aura::testing::flip_hex_digit(h)));
    const ReceiptReport offline = verify_receipt(sign_doc(edited), pinned());
    CHECK(failed_fields(offline) == std::vector<std::string>{"inclusion_proofs[0]"});
    const ReceiptReport replayed = verify_receipt(sign_doc(edited), pinned(), lab.replay());
    CHECK(fails_at(replayed, "events.leaves[0].hash"));
    CHECK(fails_under(replayed, "events"));
  }
  SUBCASE("a checkpoint note signed by another key") {
    auto latest = lab.log->latest_checkpoint();
    REQUIRE(latest.ok());
    auto ck = open_checkpoint((*latest)->signed_note, std::span(&pinned(), 1));
    REQUIRE(ck.ok());
    auto other_note = sign_checkpoint(*ck, other_signer());
    REQUIRE(other_note.ok());
    std::string from, to;
    json_append_string(from, (*latest)->signed_note);
    json_append_string(to, *other_note);
    const ReceiptReport rep = verify_receipt(sign_doc(replace_once(doc, from, to)), pinned());
    CHECK(fails_at(rep, "checkpoint.note"));
    CHECK(fails_at(rep, "inclusion_proofs"));
  }
  SUBCASE("not compact") {
    const ReceiptReport rep =
        verify_receipt(sign_doc(replace_once(doc, R"({"v":2,)", R"({"v": 2,)")), pinned());
    CHECK(failed_fields(rep) == std::vector<std::string>{"document"});
  }
}

TEST_CASE("receipt: the document is read strictly; a refusal names the JSON path") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  const std::string& doc = r.document;
  const std::string action_end = R"("key":"app_root"}}])";
  const std::string ck_size = std::to_string(r.checkpoint_size);
  struct Case {
    std::string name, edited, field, what;
  };
  const std::vector<Case> cases = {
      // Inside the actions section, which no typed read looks into: only the reader refuses it.
      {"a duplicate member deep in an action",
       replace_once(doc, action_end, R"("key":"app_root","key":"port"}}])"), "document",
       "intervention.actions[0].params.key: duplicate member"},
      {"nesting deeper than any receipt",
       replace_once(
           doc, action_end,
           R"("key":"app_root","x":)" + std::string(12, '[') + std::string(12, ']') + "}}]"),
       "document",
       "intervention.actions[0].params.x[0][0][0][0][0][0][0][0][0][0][0]: nested "
       "deeper than 16"},
      {"a string longer than any receipt holds",
       replace_once(doc, R"("note":")", R"("note":")" + std::string(65537, 'x')), "document",
       "checkpoint.note: longer than 65536 bytes"},
      {"a wrong type",
       replace_once(doc, R"("checkpoint":{"size":)" + ck_size,
                    R"("checkpoint":{"size":")" + ck_size + "\""),
       "checkpoint.size", "not a non-negative integer"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const ReceiptReport rep = verify_receipt(sign_doc(rehash(c.edited)), pinned());
    REQUIRE_MESSAGE(rep.failures.size() == 1, describe(rep));
    CHECK(rep.failures[0].field == c.field);
    CHECK(rep.failures[0].what == c.what);
  }
}

TEST_CASE("receipt: sections edited consistently pass offline, and replay names them") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  struct Case {
    std::string from, to, section;
  };
  const std::vector<Case> cases = {
      {R"("id":"t0-config-drift")", R"("id":"t0-config-drifT")", "scenario"},
      {"6.8.0-test", "6.8.1-test", "environment"},
      {R"("key":"app_root"}}])", R"("key":"port"}}])", "intervention.actions"},
      {R"("check":"control-calm","ok":true)", R"("check":"control-calm","ok":false)", "facts"},
      {"journal.undo", "journal.redo", "rollback"},
      {R"({"property":"twin","status":"pass","reason":"")",
       R"({"property":"twin","status":"pass","reason":"x")", "gate"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.section);
    const std::string envelope = sign_doc(rehash(replace_once(r.document, c.from, c.to)));
    const ReceiptReport offline = verify_receipt(envelope, pinned());
    CHECK_MESSAGE(offline.ok(), describe(offline));
    const ReceiptReport replayed = verify_receipt(envelope, pinned(), lab.replay());
    CHECK_MESSAGE(fails_under(replayed, c.section), describe(replayed));
  }
}

TEST_CASE("receipt: each field of the evidence and environment, edited, is named") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  const std::string& doc = r.document;
  const auto flip_after = [&](const std::string& marker) {
    const size_t at = doc.find(marker);
    REQUIRE_MESSAGE(at != std::string::npos, marker);
    std::string e = doc;
    const size_t digit = at + marker.size();
    e[digit] = e[digit] == '0' ? '1' : '0';
    return e;
  };
  struct Case {
    std::string name;
    std::string edited;
    std::string field;  // named by replay (offline: hashes.<section>)
  };
  const std::string caps = std::to_string(fx.capabilities_seq);
  const std::vector<Case> cases = {
      {"lab build digest", flip_after(R"("lab_build_digest":")"), "environment.lab_build_digest"},
      {"kernel release", replace_once(doc, "6.8.0-test", "6.9.0-test"),
       "environment.kernel_release"},
      {"sandbox profile digest", flip_after(R"("sandbox_profile_digest":")"),
       "environment.sandbox_profile_digest"},
      {"capability digest", flip_after(R"("capability_snapshot_digest":")"),
       "environment.capability_snapshot_digest"},
      {"capabilities seq",
       replace_once(doc, R"("capabilities_seq":)" + caps,
                    R"("capabilities_seq":)" + std::to_string(fx.capabilities_seq + 1)),
       "environment.capabilities_seq"},
      {"a binary's digest", flip_after(R"("/usr/sbin/nginx":")"),
       "environment.binaries./usr/sbin/nginx"},
      {"a binary dropped",
       replace_once(doc, R"(,"/usr/sbin/nginx":")" + std::string(64, '6') + "\"", ""),
       "environment.binaries"},
      {"a world image", flip_after(R"(,"layers":["fleet"],"sha256":")"),
       "environment.world_images[0].sha256"},
      {"a world image's layers", replace_once(doc, R"("layers":["twin"])", R"("layers":["fleet"])"),
       "environment.world_images[1].layers[0]"},
      {"a world seq",
       replace_once(doc, R"("worlds":[)" + std::to_string(fx.world_seqs[0]),
                    R"("worlds":[)" + std::to_string(fx.world_seqs[1])),
       "environment.worlds[0]"},
      {"evidence id",
       replace_once(doc, R"("evidence":[{"id":"ev-1")", R"("evidence":[{"id":"ev-9")"),
       "evidence[0].id"},
      {"evidence kind", replace_once(doc, R"("kind":"probe.output")", R"("kind":"probe.outpuT")"),
       "evidence[0].kind"},
      {"evidence digest", flip_after(R"("kind":"probe.output","sha256":")"), "evidence[0].sha256"},
      {"evidence size", replace_once(doc, R"("bytes":26,)", R"("bytes":27,)"), "evidence[0].bytes"},
      {"evidence seq",
       replace_once(doc, R"("seq":)" + std::to_string(fx.evidence_seq) + "}]",
                    R"("seq":)" + std::to_string(fx.submitted_seq) + "}]"),
       "evidence[0].seq"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    REQUIRE(c.edited != doc);
    const std::string section = c.field.substr(0, c.field.find_first_of(".["));
    // Offline, the section's hash names it; with the hashes recomputed, replay names the field.
    const ReceiptReport offline = verify_receipt(sign_doc(c.edited), pinned());
    CHECK_MESSAGE(fails_at(offline, "hashes." + section), describe(offline));
    const std::string rehashed = sign_doc(rehash(c.edited));
    const ReceiptReport replayed = verify_receipt(rehashed, pinned(), lab.replay());
    CHECK_MESSAGE(fails_at(replayed, c.field), describe(replayed));
  }
}

TEST_CASE("receipt: issuing is refused when what the gate ran cannot be bound") {
  SUBCASE("the lab build digest is unknown") {
    for (std::string unknown : {std::string(), std::string(64, '0')}) {
      TestLab lab;
      const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs, {.lab_build_digest = unknown});
      auto r = issue_receipt(*lab.log, fx.attempt_id, test_signer(), *lab.blobs);
      REQUIRE_FALSE(r.ok());
      CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
      CHECK(r.status().message().find("lab build digest") != std::string::npos);
    }
  }
  SUBCASE("no capability panel was recorded before the gate") {
    TestLab lab;
    const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs, {.record_capabilities = false});
    auto r = issue_receipt(*lab.log, fx.attempt_id, test_signer(), *lab.blobs);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(events::kCapabilitiesMeasured) != std::string::npos);
  }
  SUBCASE("the gate recorded no world.built") {
    TestLab lab;
    const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs, {.record_worlds = false});
    auto r = issue_receipt(*lab.log, fx.attempt_id, test_signer(), *lab.blobs);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(events::kWorldBuilt) != std::string::npos);
  }
  SUBCASE("a world's image digest is not its layers' lines of the package's SHA256SUMS") {
    TestLab lab;
    const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs, {.forge_image = true});
    auto r = issue_receipt(*lab.log, fx.attempt_id, test_signer(), *lab.blobs);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("image_sha256") != std::string::npos);
  }
}

TEST_CASE("receipt: replay recomputes the profile digest from the stored profile") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  const auto path = lab.blobs->path_of(sha256(aura::testing::fixture_profile()));
  std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  aura::testing::write_file(path, aura::testing::fixture_profile() + "call.capabilities=0x3f\n");
  const ReceiptReport rep = verify_receipt(r.envelope, pinned(), lab.replay());
  CHECK(fails_at(rep, "log"));
  CHECK_MESSAGE(fails_at(rep, "replay"), describe(rep));
}

TEST_CASE("receipt: a version 1 receipt is refused naming its version") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  const ReceiptReport rep =
      verify_receipt(sign_doc(replace_once(r.document, R"({"v":2,)", R"({"v":1,)")), pinned());
  REQUIRE(rep.failures.size() == 1);
  CHECK(rep.failures[0].field == "v");
  CHECK(rep.failures[0].what.find("version 1") != std::string::npos);
}

TEST_CASE("receipt: replay names an event edited in the RocksDB log") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  const uint64_t predicted = first_seq_of_type(*lab.log, fx.stream, events::kAttemptPredicted);
  lab.close();
  aura::testing::flip_stored_value_byte(lab.dir / "log", fx.predicted_text, 3);
  lab.reopen_read_only();

  // Offline, the receipt still holds: it is the log that changed.
  CHECK(verify_receipt(r.envelope, pinned()).ok());
  const ReceiptReport rep = verify_receipt(r.envelope, pinned(), lab.replay());
  CHECK_FALSE(rep.ok());
  bool named = false;
  for (const auto& f : rep.failures) {
    if (f.field == "log" && f.what.rfind("seq " + std::to_string(predicted) + ":", 0) == 0)
      named = true;
  }
  CHECK_MESSAGE(named, describe(rep));
}

TEST_CASE("receipt: replay by the receipt's own events holds, and names damage to them") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  // Another attempt after it, under a later checkpoint: not the receipt's.
  const AttemptFixture other =
      append_attempt(*lab.log, *lab.blobs, {.attempt_id = "2222222222222222"});
  REQUIRE(lab.log->checkpoint().ok());

  const ReceiptReport good = verify_receipt(r.envelope, pinned(), lab.replay_events());
  CHECK_MESSAGE(good.ok(), describe(good));
  for (const char* c : {"log events", "checkpoint in log", "events in log", "rebuilt facts",
                        "rebuilt gate", "regraded"}) {
    CAPTURE(c);
    CHECK(std::find(good.passed.begin(), good.passed.end(), c) != good.passed.end());
  }
  CHECK(std::find(good.passed.begin(), good.passed.end(), "log") == good.passed.end());

  // The other attempt's event edited: the whole log fails, the receipt's events still hold.
  const uint64_t theirs = first_seq_of_type(*lab.log, other.stream, events::kAttemptPredicted);
  const uint64_t mine = first_seq_of_type(*lab.log, fx.stream, events::kAttemptPredicted);
  REQUIRE(theirs != mine);
  lab.close();
  aura::testing::flip_stored_value_byte(lab.dir / "log", other.predicted_text, 3);
  lab.reopen_read_only();
  CHECK_FALSE(verify_receipt(r.envelope, pinned(), lab.replay()).ok());
  const ReceiptReport beside = verify_receipt(r.envelope, pinned(), lab.replay_events());
  CHECK_MESSAGE(beside.ok(), describe(beside));

  // One of its own edited: named at its seq.
  lab.close();
  aura::testing::flip_stored_value_byte(lab.dir / "log", fx.predicted_text, 3);
  lab.reopen_read_only();
  const ReceiptReport edited = verify_receipt(r.envelope, pinned(), lab.replay_events());
  CHECK_FALSE(edited.ok());
  bool named = false;
  for (const auto& f : edited.failures) {
    if (f.field == "log" && f.what.rfind("seq " + std::to_string(mine) + ":", 0) == 0) named = true;
  }
  CHECK_MESSAGE(named, describe(edited));
}

TEST_CASE("receipt: replay by its own events fails on a replaced blob and on another log") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  TestLab other;
  append_attempt(*other.log, *other.blobs);
  REQUIRE(other.log->checkpoint().ok());
  const ReceiptReport elsewhere = verify_receipt(r.envelope, pinned(), other.replay_events());
  CHECK(fails_at(elsewhere, "events.leaves[0].hash"));
  CHECK(fails_at(elsewhere, "log"));  // not in that log's tree under the checkpoint's root

  replace_ir_blob(lab, fx);
  const ReceiptReport rep = verify_receipt(r.envelope, pinned(), lab.replay_events());
  CHECK(fails_at(rep, "log"));
  CHECK(fails_at(rep, "replay"));
}

TEST_CASE("receipt: replay fails when the IR blob was replaced") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  replace_ir_blob(lab, fx);
  const ReceiptReport rep = verify_receipt(r.envelope, pinned(), lab.replay());
  CHECK(fails_at(rep, "log"));
  CHECK(fails_at(rep, "replay"));
}

TEST_CASE("receipt: replay against a log that does not hold the attempt fails") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  TestLab other;
  const AttemptFixture again = append_attempt(*other.log, *other.blobs);
  REQUIRE(other.log->checkpoint().ok());
  const ReceiptReport rep = verify_receipt(r.envelope, pinned(), other.replay());
  CHECK_FALSE(rep.ok());
  CHECK(fails_at(rep, "events.leaves[0].hash"));
  CHECK(fails_at(rep, "checkpoint"));
  CHECK_FALSE(verify_receipt(r.envelope, pinned(), ReplayContext{}).ok());
}

TEST_CASE("receipt: a receipt still replays after the log has grown") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  append_attempt(*lab.log, *lab.blobs, {.attempt_id = "1111111111111111"});
  REQUIRE(lab.log->checkpoint().ok());
  const ReceiptReport rep = verify_receipt(r.envelope, pinned(), lab.replay());
  CHECK_MESSAGE(rep.ok(), describe(rep));
}

TEST_CASE("receipt: the test vector of docs/formats/receipt.md") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  auto members = raw_members(r.document, "doc");
  REQUIRE(members.ok());
  CHECK(std::string(*raw_member(*members, "scenario", "doc")) ==
        R"({"id":"t0-config-drift","version":"1.0.0","package_digest":")"
        R"(05a449032f61832f81d77bd0d9cd3553439be766a917922a01c235938ec90502","manifest_sha256":")"
        R"(391df687f66c886c2b255c229b167a4923f718005ae1267d4c948a3a444373bc"})");
  CHECK(
      r.document.find(
          R"("hashes":{"scenario":"a9a459642fa15d99676fc22b89313d4a60a1aa8c9a696f53266dc3b771a8d6ea",)") !=
      std::string::npos);
  CHECK(r.document.find(
            R"("actions":"c15301f322032abf405f6d818df1ca21ff220696e0b187e418b24e4f0f3fb0be")") !=
        std::string::npos);
  // The evidence section, and the image of the layer "fleet" (its lines of the fixture's sums).
  CHECK(
      std::string(*raw_member(*members, "evidence", "doc")) ==
      R"([{"id":"ev-1","kind":"probe.output","sha256":")"
      R"(d89a4d840f22949fa66ab321208df074b28ccdd4bc1a9eb21cf68adf0bc0f6df","bytes":26,"seq":11}])");
  CHECK(r.document.find(
            R"("evidence":"a43d4efacdb6c3a5dd3086d2433c82fc0e19c5931619743f5f4f65dadde8412f")") !=
        std::string::npos);
  auto image = world::image_digest(aura::testing::fixture_sums(), {"fleet"});
  REQUIRE(image.ok());
  CHECK(to_hex(*image) == "a1f8a5ab77ad412d625c923b57b601e00e97987d0ac9f8aa0faed892a582e1f6");
  CHECK(r.document.find(R"({"world":"primary","layers":["fleet"],"sha256":")"
                        R"(a1f8a5ab77ad412d625c923b57b601e00e97987d0ac9f8aa0faed892a582e1f6"})") !=
        std::string::npos);
}

TEST_CASE("receipt: replay re-grades the facts and catches a verdict the facts do not support") {
  TestLab lab;
  // The log records web-content failing on the primary, yet a VERIFIED verdict.
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs, {.forge_verdict = true});
  const IssuedReceipt r = issue(lab, fx);
  // The lab signed it, so offline it holds; only replay can tell.
  CHECK(verify_receipt(r.envelope, pinned()).ok());
  const ReceiptReport rep = verify_receipt(r.envelope, pinned(), lab.replay());
  CHECK_FALSE(rep.ok());
  CHECK_MESSAGE(fails_at(rep, "gate"), describe(rep));
  bool says = false;
  for (const auto& f : rep.failures) {
    if (f.field == "gate" && f.what.find("re-grading the recorded facts gives NOT_RECOVERED") == 0)
      says = true;
  }
  CHECK_MESSAGE(says, describe(rep));
  CHECK(std::find(rep.passed.begin(), rep.passed.end(), "regraded") == rep.passed.end());
}

TEST_CASE("receipt: replay fails when the manifest blob no longer parses") {
  TestLab lab;
  const AttemptFixture fx = append_attempt(*lab.log, *lab.blobs);
  const IssuedReceipt r = issue(lab, fx);
  std::filesystem::remove(lab.blobs->path_of(sha256(fx.manifest_json)));
  const ReceiptReport rep = verify_receipt(r.envelope, pinned(), lab.replay());
  CHECK(fails_at(rep, "log"));
  CHECK_MESSAGE(fails_at(rep, "regraded"), describe(rep));
}

// A world whose driver checked its files against another SHA256SUMS than the package the engine
// verified (the package changed between the two reads) gets no world.built record.
TEST_CASE("receipt: a world built from another SHA256SUMS than the verified package is refused") {
  TestLab lab;
  world::BuildRecord record;
  record.profile = testing::fixture_profile();
  record.layers = {"fleet"};
  record.package_sums_sha256 = to_hex(sha256(testing::fixture_sums()));
  JsonWriter ok;
  const Status same =
      world::add_world_built_members(ok, "primary", record, testing::fixture_sums(), *lab.blobs);
  CHECK_MESSAGE(same.is_ok(), same.message());

  record.package_sums_sha256 = to_hex(sha256(testing::fixture_sums() + "\n"));
  JsonWriter bad;
  const Status other =
      world::add_world_built_members(bad, "primary", record, testing::fixture_sums(), *lab.blobs);
  CHECK(other.code() == ErrorCode::kFailedPrecondition);
  CHECK(other.message().find("world primary: build record: its files were checked against a "
                             "SHA256SUMS with SHA-256 " +
                             record.package_sums_sha256) != std::string::npos);
  CHECK(other.message().find("the package changed while the world was built") != std::string::npos);
}
