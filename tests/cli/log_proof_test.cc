// Checkpoints and proofs from the command line: `log checkpoint`, `log prove`,
// `log consistency` and the offline `log check-proof`, including edited proof files.
#include <doctest/doctest.h>

#include <string>

#include "tests/cli/cli_util.h"

using aura::testing::CliResult;
using aura::testing::flip_hex_digit;
using aura::testing::Json;
using aura::testing::Lab;
using aura::testing::read_file;
using aura::testing::replace_once;
using aura::testing::run_aura;
using aura::testing::write_file;
namespace fs = std::filesystem;

namespace {

void append_n(const Lab& lab, int n) {
  for (int i = 0; i < n; ++i) lab.append("ops/" + std::to_string(i % 3), "operator.t", "{}");
}

// Writes the stdout of `log prove|consistency ...` to ROOT/name, as `> name` would.
fs::path save_proof(const Lab& lab, std::vector<std::string> args, const std::string& name) {
  args.insert(args.begin(), "log");
  CliResult r = lab.aura(args);
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  write_file(lab / name, r.out);
  return lab / name;
}

// `log check-proof FILE` with the lab's public key pinned; no data folder needed.
CliResult check_proof(const Lab& lab, const fs::path& file, const fs::path& pubkey = {}) {
  return run_aura({"log", "check-proof", file.string(), "--pubkey",
                   (pubkey.empty() ? lab.keys() / "lab.pub" : pubkey).string(), "--json"});
}

// check-proof of `text` written to a fresh file must fail cleanly.
void check_refused(const Lab& lab, const std::string& text, const std::string& why) {
  CAPTURE(why);
  write_file(lab / "edited.json", text);
  CliResult r = check_proof(lab, lab / "edited.json");
  CHECK_MESSAGE(r.exit_code == 1, r.describe());
  CHECK_FALSE(r.signaled);
  CHECK(Json(r.last_line()).boolean("ok") == false);
  CHECK_FALSE(r.err.empty());
}

}  // namespace

TEST_CASE("log checkpoint signs the head; log prove SEQ > p.json; log check-proof p.json passes") {
  Lab lab;
  append_n(lab, 12);
  CliResult ck = lab.aura({"log", "checkpoint", "--json"});
  REQUIRE_MESSAGE(ck.exit_code == 0, ck.describe());
  Json jck(ck.last_line());
  CHECK(jck.u64("size") == 12u);
  CHECK(jck.str("checkpoint").value_or("").find("\n12\n") != std::string::npos);
  CHECK(lab.head().u64("checkpoint_size") == 12u);

  for (int seq : {1, 5, 11, 12}) {
    CAPTURE(seq);
    const fs::path p = save_proof(lab, {"prove", std::to_string(seq)}, "p.json");
    Json doc(read_file(p));
    REQUIRE(doc.ok());
    CHECK(doc.str("kind") == "inclusion");
    CHECK(doc.u64("seq") == uint64_t(seq));
    CHECK(doc.u64("tree_size") == 12u);
    CliResult r = check_proof(lab, p);
    CHECK_MESSAGE(r.exit_code == 0, r.describe());
    Json j(r.last_line());
    CHECK(j.boolean("ok") == true);
    CHECK(j.u64("seq") == uint64_t(seq));
    CHECK(j.u64("tree_size") == 12u);
  }
  // The auditor's way: only the keys folder with lab.pub, no data folder at all.
  fs::create_directories(lab / "auditor");
  fs::copy_file(lab.keys() / "lab.pub", lab / "auditor" / "lab.pub");
  CliResult r = run_aura(
      {"log", "check-proof", (lab / "p.json").string(), "--keys", (lab / "auditor").string()});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.out.find("signature verified") != std::string::npos);
}

TEST_CASE("editing one hex digit of an inclusion proof or its event hash makes check-proof fail") {
  Lab lab;
  append_n(lab, 12);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  const std::string text = read_file(save_proof(lab, {"prove", "5"}, "p.json"));
  Json doc(text);
  REQUIRE(doc.ok());
  REQUIRE(check_proof(lab, lab / "p.json").exit_code == 0);

  const std::string event_hash = doc.str("event_hash").value_or("");
  REQUIRE(event_hash.size() == 64);
  check_refused(lab, replace_once(text, event_hash, flip_hex_digit(event_hash)), "event_hash");
  std::string last = event_hash;
  last.back() = last.back() == 'a' ? 'b' : 'a';
  check_refused(lab, replace_once(text, event_hash, last), "event_hash, last digit");

  simdjson::dom::array proof;
  REQUIRE(!doc.root()["proof"].get(proof));
  REQUIRE(proof.size() == 4);  // log2(12), rounded up
  for (auto e : proof) {
    std::string_view h;
    REQUIRE(!e.get(h));
    check_refused(lab, replace_once(text, std::string(h), flip_hex_digit(std::string(h))),
                  "proof entry " + std::string(h));
  }
  // The claimed position or size.
  check_refused(lab, replace_once(text, "\"seq\":5", "\"seq\":6"), "seq");
  check_refused(lab, replace_once(text, "\"tree_size\":12", "\"tree_size\":13"), "tree_size");
  // The checkpoint: one digit of its chain head line breaks its signature.
  const std::string head = lab.head().str("head_hash").value_or("");
  check_refused(lab, replace_once(text, "chain-head " + head, "chain-head " + flip_hex_digit(head)),
                "checkpoint chain head");
  // Without the checkpoint, nothing is proven.
  const size_t at = text.find(",\"checkpoint\":");
  REQUIRE(at != std::string::npos);
  check_refused(lab, text.substr(0, at) + "}", "no checkpoint");
  // A proof one hash short.
  std::string_view first;
  REQUIRE(!proof.at(0).get(first));
  check_refused(lab, replace_once(text, "\"" + std::string(first) + "\",", ""),
                "proof one hash short");
}

TEST_CASE("log check-proof with another lab's key fails") {
  Lab lab;
  append_n(lab, 4);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  const fs::path p = save_proof(lab, {"prove", "2"}, "p.json");
  REQUIRE(run_aura({"keys", "init", "--keys", (lab / "other").string()}).exit_code == 0);
  CliResult r = check_proof(lab, p, lab / "other" / "lab.pub");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("checkpoint") != std::string::npos);
}

TEST_CASE("log check-proof refuses malformed proof files cleanly") {
  Lab lab;
  append_n(lab, 4);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  const std::string text = read_file(save_proof(lab, {"prove", "2"}, "p.json"));
  check_refused(lab, "", "empty file");
  check_refused(lab, "not json", "not JSON");
  check_refused(lab, "[]", "an array");
  check_refused(lab, R"({"kind":"inclusion"})", "no proof");
  check_refused(lab, replace_once(text, "\"kind\":\"inclusion\"", "\"kind\":\"other\""), "kind");
  check_refused(lab, replace_once(text, "\"seq\":2", "\"seq\":0"), "seq 0");
  check_refused(lab, replace_once(text, "\"seq\":2", "\"seq\":-2"), "negative seq");
  check_refused(lab, replace_once(text, "\"proof\":[", "\"proof\":[\"zz\","), "non-hex entry");
  std::string many = "{\"kind\":\"inclusion\",\"seq\":1,\"tree_size\":1,\"event_hash\":\"" +
                     std::string(64, '0') + "\",\"proof\":[";
  for (int i = 0; i < 200; ++i) many += (i ? ",\"" : "\"") + std::string(64, 'a') + "\"";
  check_refused(lab, many + "]}", "200 hashes");
  CliResult r = check_proof(lab, lab / "missing.json");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("missing.json") != std::string::npos);
}

TEST_CASE("log consistency 3 10 > c.json; check-proof passes and says the roots are unsigned") {
  Lab lab;
  append_n(lab, 12);
  const fs::path c = save_proof(lab, {"consistency", "3", "10"}, "c.json");
  Json doc(read_file(c));
  CHECK(doc.str("kind") == "consistency");
  CHECK(doc.u64("old_size") == 3u);
  CHECK(doc.u64("new_size") == 10u);
  CliResult r = check_proof(lab, c);
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  Json j(r.last_line());
  CHECK(j.boolean("ok") == true);
  CHECK(j.boolean("old_signed") == false);
  CHECK(j.boolean("new_signed") == false);
  CHECK(r.out.find("UNSIGNED") != std::string::npos);
  // Any changed digit of a root or a proof hash fails.
  const std::string text = read_file(c);
  for (const char* key : {"old_root", "new_root"}) {
    const std::string h = doc.str(key).value_or("");
    check_refused(lab, replace_once(text, h, flip_hex_digit(h)), key);
  }
  simdjson::dom::array proof;
  REQUIRE(!doc.root()["proof"].get(proof));
  REQUIRE(proof.size() > 0);
  for (auto e : proof) {
    std::string_view h;
    REQUIRE(!e.get(h));
    check_refused(lab, replace_once(text, std::string(h), flip_hex_digit(std::string(h))),
                  "proof entry " + std::string(h));
  }
}

TEST_CASE("log consistency between two checkpoints carries both signed notes") {
  Lab lab;
  append_n(lab, 3);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  append_n(lab, 7);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  append_n(lab, 2);
  const fs::path c = save_proof(lab, {"consistency", "3", "10"}, "c.json");
  const std::string text = read_file(c);
  Json doc(text);
  CHECK(doc.has("old_checkpoint"));
  CHECK(doc.has("new_checkpoint"));
  CliResult r = check_proof(lab, c);
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  Json j(r.last_line());
  CHECK(j.boolean("old_signed") == true);
  CHECK(j.boolean("new_signed") == true);
  // A root that differs from its signed checkpoint's.
  const std::string h = doc.str("new_root").value_or("");
  check_refused(lab, replace_once(text, h, flip_hex_digit(h)), "new_root vs its checkpoint");
  // And a proof against another lab's key.
  REQUIRE(run_aura({"keys", "init", "--keys", (lab / "other").string()}).exit_code == 0);
  CHECK(check_proof(lab, c, lab / "other" / "lab.pub").exit_code == 1);
}

TEST_CASE("log prove --size uses an earlier checkpoint") {
  Lab lab;
  append_n(lab, 4);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  append_n(lab, 4);
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  const fs::path p = save_proof(lab, {"prove", "3", "--size", "4"}, "p.json");
  CHECK(Json(read_file(p)).u64("tree_size") == 4u);
  CHECK(check_proof(lab, p).exit_code == 0);
  CliResult r = lab.aura({"log", "prove", "3", "--size", "5"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("no checkpoint at size 5") != std::string::npos);
}

TEST_CASE("log prove and log consistency refuse what they cannot prove, with the way out") {
  Lab lab;
  append_n(lab, 5);
  CliResult r = lab.aura({"log", "prove", "1"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("aura log checkpoint") != std::string::npos);  // no checkpoint yet
  REQUIRE(lab.aura({"log", "checkpoint"}).exit_code == 0);
  lab.append("s", "operator.t", "{}");
  r = lab.aura({"log", "prove", "6"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("not covered by the checkpoint of size 5") != std::string::npos);
  r = lab.aura({"log", "prove", "0"});
  CHECK(r.exit_code == 2);
  r = lab.aura({"log", "prove", "x"});
  CHECK(r.exit_code == 2);
  r = lab.aura({"log", "consistency", "5", "3"});
  CHECK(r.exit_code == 2);
  r = lab.aura({"log", "consistency", "0", "3"});
  CHECK(r.exit_code == 2);
  r = lab.aura({"log", "consistency", "3", "7"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("beyond the head 6") != std::string::npos);
  // Equal sizes are a (trivial) valid proof.
  const fs::path c = save_proof(lab, {"consistency", "4", "4"}, "c.json");
  CHECK(check_proof(lab, c).exit_code == 0);
}
