#include "engine/blob/evidence_ref.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/crypto/sha256.h"

namespace aura {
namespace {

const std::string kHex = to_hex(sha256("x"));

// One valid ref object, with `extra` spliced in before the closing brace.
std::string ref_json(std::string_view id = "ev-1", std::string_view extra = "") {
  return R"({"id":")" + std::string(id) + R"(","sha256":")" + kHex +
         R"(","kind":"probe.output","bytes":123)" + std::string(extra) + "}";
}

std::string payload_with(const std::vector<std::string>& refs) {
  std::string out = R"({"type":"probe","refs":[)";
  for (size_t i = 0; i < refs.size(); ++i) out += (i ? "," : "") + refs[i];
  return out + "]}";
}

TEST_CASE("evidence ref: a payload without \"refs\" yields no refs and is not parsed") {
  for (std::string_view payload : {"", "{}", R"({"a":1})", "not json at all {[", "[1,2,3]",
                                   R"({"references":[{"id":1}]})", R"({"ref":[]})"}) {
    CAPTURE(payload);
    auto r = extract_refs(payload);
    REQUIRE(r.ok());
    CHECK(r->empty());
  }
}

TEST_CASE("evidence ref: refs that are absent at the top level yield no refs") {
  for (std::string_view payload : {R"({"nested":{"refs":[1]}})", R"({"note":"see \"refs\""})",
                                   R"(["refs"])", R"({"a":"\u00e9"})", R"("refs")"}) {
    CAPTURE(payload);
    auto r = extract_refs(payload);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    CHECK(r->empty());
  }
}

TEST_CASE("evidence ref: valid refs are extracted in payload order with every field") {
  std::string second = to_hex(sha256("y"));
  std::string payload = R"({"refs":[)" + ref_json("ev-1") +
                        R"(,{"bytes":0,"kind":"trace:sched","sha256":")" + second +
                        R"(","id":"A.b_c:9-z"}],"other":{"x":[1,2]}})";
  auto r = extract_refs(payload);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0] == EvidenceRef{"ev-1", sha256("x"), "probe.output", 123});
  CHECK((*r)[1] == EvidenceRef{"A.b_c:9-z", sha256("y"), "trace:sched", 0});
}

TEST_CASE("evidence ref: an empty refs array yields no refs") {
  auto r = extract_refs(R"({"refs":[]})");
  REQUIRE(r.ok());
  CHECK(r->empty());
}

TEST_CASE("evidence ref: a refs key spelled with escapes is still found") {
  // Not the bytes "refs", but the same key once unescaped: the fast path must not skip it.
  auto r = extract_refs(R"({"\u0072efs":[)" + ref_json() + "]}");
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  REQUIRE(r->size() == 1);
  CHECK((*r)[0].id == "ev-1");
  auto bad = extract_refs(R"({"r\u0065fs":{}})");
  CHECK(bad.status().message() == "refs: not an array");
}

TEST_CASE("evidence ref: evidence_ref_json is compact, ordered and round-trips") {
  EvidenceRef ref{"ev-1", sha256("hello\n"), "probe.output", 6};
  std::string json = evidence_ref_json(ref);
  CHECK(json ==
        "{\"id\":\"ev-1\","
        "\"sha256\":\"5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03\","
        "\"kind\":\"probe.output\",\"bytes\":6}");
  auto back = extract_refs(R"({"refs":[)" + json + "]}");
  REQUIRE(back.ok());
  REQUIRE(back->size() == 1);
  CHECK((*back)[0] == ref);

  EvidenceRef big{"x", {}, "k", UINT64_MAX};
  auto big_back = extract_refs(R"({"refs":[)" + evidence_ref_json(big) + "]}");
  REQUIRE_MESSAGE(big_back.ok(), big_back.status().message());
  CHECK((*big_back)[0].bytes == UINT64_MAX);
}

TEST_CASE("evidence ref: evidence_ref_json escapes what an invalid ref would need escaped") {
  EvidenceRef ref{"a\"b\\c\n", {}, "k", 1};
  std::string json = evidence_ref_json(ref);
  CHECK(json.find(R"("id":"a\"b\\c\u000a")") != std::string::npos);
  CHECK(validate_evidence_ref(ref).message() == "id: character '\"' outside [A-Za-z0-9._:-]");
}

TEST_CASE("evidence ref: validate_evidence_ref applies the id and kind rules") {
  CHECK(validate_evidence_ref({"ev-1", {}, "probe.output", 0}).is_ok());
  CHECK(validate_evidence_ref({"", {}, "k", 0}).message() == "id: empty");
  CHECK(validate_evidence_ref({"i", {}, std::string(65, 'k'), 0}).message() ==
        "kind: longer than 64 bytes (65)");
}

TEST_CASE("evidence ref: id and kind lengths are accepted up to their limits") {
  auto at_limit =
      extract_refs(payload_with({R"({"id":")" + std::string(128, 'i') + R"(","sha256":")" + kHex +
                                 R"(","kind":")" + std::string(64, 'k') + R"(","bytes":1})"}));
  REQUIRE_MESSAGE(at_limit.ok(), at_limit.status().message());
  CHECK((*at_limit)[0].id.size() == 128);
  CHECK((*at_limit)[0].kind.size() == 64);

  auto long_id = extract_refs(payload_with({ref_json(std::string(129, 'i'))}));
  CHECK(long_id.status().message() == "refs[0].id: longer than 128 bytes (129)");
  auto long_kind = extract_refs(payload_with({R"({"id":"a","sha256":")" + kHex + R"(","kind":")" +
                                              std::string(65, 'k') + R"(","bytes":1})"}));
  CHECK(long_kind.status().message() == "refs[0].kind: longer than 64 bytes (65)");
}

TEST_CASE("evidence ref: 1024 refs are accepted and 1025 refused") {
  std::vector<std::string> refs;
  for (int i = 0; i < 1024; ++i) refs.push_back(ref_json("ev-" + std::to_string(i)));
  auto ok = extract_refs(payload_with(refs));
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->size() == 1024);
  CHECK(ok->back().id == "ev-1023");
  refs.push_back(ref_json("ev-1024"));
  auto too_many = extract_refs(payload_with(refs));
  CHECK(too_many.status().code() == ErrorCode::kInvalidArgument);
  CHECK(too_many.status().message() == "refs: more than 1024 refs");
}

TEST_CASE("evidence ref: each malformed payload is refused naming its JSON path") {
  const std::string r0 = ref_json("a");
  const std::string r1 = ref_json("b");
  auto with_member = [](std::string_view member_json) {
    // A ref whose members are given explicitly.
    return "{" + std::string(member_json) + "}";
  };
  const std::string id = R"("id":"a")";
  const std::string sha = R"("sha256":")" + kHex + R"(")";
  const std::string kind = R"("kind":"k")";
  const std::string bytes = R"("bytes":1)";
  auto ref_of = [&](std::string_view i, std::string_view s, std::string_view k,
                    std::string_view b) {
    std::string out;
    for (std::string_view part : {i, s, k, b}) {
      if (part.empty()) continue;
      if (!out.empty()) out += ",";
      out += part;
    }
    return with_member(out);
  };
  struct Case {
    std::string payload;
    std::string message;
  };
  const std::vector<Case> cases = {
      {R"({"refs":{}})", "refs: not an array"},
      {R"({"refs":null})", "refs: not an array"},
      {R"({"refs":"ev-1"})", "refs: not an array"},
      {R"({"refs":[],"refs":[]})", "refs: duplicate member"},
      {R"({"refs":[1]})", "refs[0]: not an object"},
      {payload_with({r0, "[]"}), "refs[1]: not an object"},
      {payload_with({ref_of("", sha, kind, bytes)}), "refs[0].id: missing"},
      {payload_with({ref_of(id, "", kind, bytes)}), "refs[0].sha256: missing"},
      {payload_with({ref_of(id, sha, "", bytes)}), "refs[0].kind: missing"},
      {payload_with({ref_of(id, sha, kind, "")}), "refs[0].bytes: missing"},
      {payload_with({ref_of(R"("id":7)", sha, kind, bytes)}), "refs[0].id: not a string"},
      {payload_with({ref_of(id, R"("sha256":null)", kind, bytes)}), "refs[0].sha256: not a string"},
      {payload_with({ref_of(id, sha, R"("kind":["k"])", bytes)}), "refs[0].kind: not a string"},
      {payload_with({r0, r1, ref_of(id, R"("sha256":"abc")", kind, bytes)}),
       "refs[2].sha256: not 64 hex digits (lowercase)"},
      {payload_with({ref_of(id, R"("sha256":")" + std::string(64, 'g') + "\"", kind, bytes)}),
       "refs[0].sha256: not 64 hex digits (lowercase)"},
      {payload_with({ref_of(id, R"("sha256":")" + std::string(64, 'A') + "\"", kind, bytes)}),
       "refs[0].sha256: not 64 hex digits (lowercase)"},
      {payload_with({ref_of(id, R"("sha256":")" + kHex + "0\"", kind, bytes)}),
       "refs[0].sha256: not 64 hex digits (lowercase)"},
      {payload_with({ref_of(R"("id":"")", sha, kind, bytes)}), "refs[0].id: empty"},
      {payload_with({ref_of(id, sha, R"("kind":"")", bytes)}), "refs[0].kind: empty"},
      {payload_with({ref_of(R"("id":"a b")", sha, kind, bytes)}),
       "refs[0].id: character ' ' outside [A-Za-z0-9._:-]"},
      {payload_with({ref_of(R"("id":"a/b")", sha, kind, bytes)}),
       "refs[0].id: character '/' outside [A-Za-z0-9._:-]"},
      {payload_with({ref_of(id, sha, R"("kind":"caf\u00e9")", bytes)}),
       "refs[0].kind: character '\\xc3' outside [A-Za-z0-9._:-]"},
      {payload_with({ref_of(id, sha, kind, R"("bytes":-1)")}),
       "refs[0].bytes: not a non-negative integer"},
      {payload_with({ref_of(id, sha, kind, R"("bytes":1.5)")}),
       "refs[0].bytes: not a non-negative integer"},
      {payload_with({ref_of(id, sha, kind, R"("bytes":1e3)")}),
       "refs[0].bytes: not a non-negative integer"},
      {payload_with({ref_of(id, sha, kind, R"("bytes":"12")")}),
       "refs[0].bytes: not a non-negative integer"},
      {payload_with({ref_of(id, sha, kind, R"("bytes":true)")}),
       "refs[0].bytes: not a non-negative integer"},
      {payload_with({r0, ref_json("b", R"(,"note":"x")")}), "refs[1].note: unknown member"},
      {payload_with({ref_json("a", R"(,"id":"b")")}), "refs[0].id: duplicate member"},
      {payload_with({r0, r1, ref_json("a")}), "refs[2].id: duplicate id \"a\" (also refs[0])"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.payload);
    auto r = extract_refs(c.payload);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kInvalidArgument);
    CHECK(r.status().message() == c.message);
  }
}

TEST_CASE("evidence ref: an unknown member's name is printed safely") {
  auto r = extract_refs(payload_with({ref_json("a", R"(,"bad\nkey\\":1)")}));
  CHECK(r.status().message() == "refs[0].bad\\x0akey\\x5c: unknown member");
}

TEST_CASE("evidence ref: invalid JSON that mentions refs is refused") {
  auto r = extract_refs(R"({"refs":[}])");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  CHECK(r.status().message().rfind("payload: invalid JSON", 0) == 0);
}

}  // namespace
}  // namespace aura
