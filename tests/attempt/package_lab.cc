#include "tests/attempt/package_lab.h"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "engine/crypto/ed25519.h"

namespace aura::testing {

namespace fs = std::filesystem;

PackageLab::PackageLab(const char* env, std::string id, std::string hypothesis, std::string probe)
    : scenario(std::move(id)), hypothesis_(std::move(hypothesis)), probe_(std::move(probe)) {
  const char* src = std::getenv(env);
  REQUIRE_MESSAGE(src != nullptr, env << " is not set (run through meson)");
  // Worlds mount the package read-only: its folders must be searchable by a node's uids.
  fs::permissions(lab.root(),
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  const fs::path dest = lab / "scenarios" / scenario;
  fs::create_directories(dest);
  fs::copy(src, dest, fs::copy_options::recursive);
  fs::remove(dest / "package.sig.json");  // the lab signs its own copy, as committed
  CliResult r = lab.aura({"setup", "--scenarios", (lab / "scenarios").string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
}

std::string PackageLab::attempt(const std::string& ir, int seed,
                                const std::function<void(const std::string&)>& live) const {
  CliResult r = ok({"attempt", "start", scenario, "--seed", std::to_string(seed), "--json"});
  const std::string id = *Json(r.last_line()).str("attempt");
  ok({"attempt", "predict", id, "--hypothesis", hypothesis_, "--expect", "the fix works"});
  ok({"attempt", "probe", id, probe_});
  write_file(lab / "fix.json", ir);
  r = ok({"attempt", "submit", id, (lab / "fix.json").string()});
  // Every script of the IR is authorised, as the learner would after reading it (each is named
  // by its own line, and the first one again by the next step).
  std::set<std::string> authorized;
  for (const std::string& line : r.lines()) {
    const size_t at = line.find("aura attempt authorize " + id + " ");
    if (at == std::string::npos) continue;
    const size_t sha = at + std::string("aura attempt authorize ").size() + id.size() + 1;
    if (authorized.insert(line.substr(sha, 64)).second)
      ok({"attempt", "authorize", id, line.substr(sha, 64)});
  }
  ok({"attempt", "apply", id});
  ok({"attempt", "ack", id});
  lab.aura({"attempt", "verify", id});  // a fix that does not recover fails here; gate anyway
  if (live) live(id);
  r = lab.aura({"attempt", "gate", id, "--json"});
  // Ending the attempt destroys its live world.
  if (lab.aura({"attempt", "reflect", id, "--text", "wrong fix"}).exit_code != 0)
    ok({"attempt", "abandon", id, "--reason", "test done"});
  return r.last_line();
}

void PackageLab::expect_refused(const std::vector<WrongFix>& fixes, int seed,
                                const std::function<std::string(const std::string&)>& ir_of) const {
  for (const WrongFix& w : fixes) {
    INFO(std::string(w.what));
    const std::string gate = attempt(ir_of(w.actions), seed);
    INFO(gate);
    CHECK(gate.find(std::string("\"verdict\":\"") + w.verdict + "\"") != std::string::npos);
    CHECK(gate.find(w.failing) != std::string::npos);
  }
}

std::string PackageLab::recover_and_gate(const std::string& id, const fs::path& ir_file) const {
  ok({"attempt", "submit", id, ir_file.string()});
  ok({"attempt", "apply", id});
  ok({"attempt", "ack", id});
  CliResult r = ok({"attempt", "verify", id});
  CHECK(r.out.find("the live world recovered") != std::string::npos);
  r = ok({"attempt", "gate", id, "--json"});
  return Json(r.last_line()).str("verdict").value_or("");
}

std::string PackageLab::check_bound(const fs::path& path,
                                    const std::vector<std::string>& programs) const {
  const std::string envelope = read_file(path);
  simdjson::dom::parser parser;
  std::string_view payload;
  REQUIRE(parser.parse(envelope)["payload"].get_string().get(payload) == simdjson::SUCCESS);
  const auto doc = base64_decode(payload);
  REQUIRE(doc.has_value());
  CHECK(doc->starts_with(R"({"v":2,)"));
  CHECK(doc->find(R"("evidence":[{"id":"ev-1","kind":"probe.output","sha256":")") !=
        std::string::npos);
  CHECK(doc->find(R"("lab_build_digest":")") != std::string::npos);
  CHECK(doc->find(R"("lab_build_digest":")" + std::string(64, '0')) == std::string::npos);
  CHECK(doc->find(R"("world_images":[{"world":")") != std::string::npos);
  for (const std::string& program : programs) {
    CAPTURE(program);
    CHECK(doc->find("\"" + program + R"(":")") != std::string::npos);
  }
  return *doc;
}

void PackageLab::no_receipt(const std::string& id) const {
  const fs::path out = lab / (id + ".receipt.json");
  CliResult r = lab.aura({"attempt", "receipt", id, "--out", out.string()});
  CHECK(r.exit_code != 0);
  CHECK_FALSE(fs::exists(out));
}

}  // namespace aura::testing
