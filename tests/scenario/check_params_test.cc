// The rule every world driver reads a check's parameters by (engine/scenario/check_params.h).
#include "engine/scenario/check_params.h"

#include <doctest/doctest.h>

#include <array>
#include <string>
#include <vector>

using namespace aura;
using namespace aura::scenario;

namespace {

using Spec = CheckParamSpec;
constexpr std::array<Spec, 3> kHttp = {Spec{"to"}, Spec{"port", Spec::Type::kInteger},
                                       Spec{"expect_text", Spec::Type::kText, false}};

// The message of `json`'s refusal (kInvalidArgument) against kHttp.
std::string refusal(const std::string& json) {
  auto p = parse_check_params(json, kHttp, "checks[0].params");
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == ErrorCode::kInvalidArgument);
  return p.status().message();
}

}  // namespace

TEST_CASE("check params: the declared members are read by type; optional ones may be absent") {
  auto p = parse_check_params(R"({"to":"web","port":80})", kHttp, "checks[0].params");
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  CHECK(p->get("to") == "web");
  CHECK(p->get_int("port") == int64_t(80));
  CHECK_FALSE(p->has("expect_text"));
  CHECK(p->get("expect_text").empty());
  CHECK_FALSE(p->get_int("to").has_value());

  // No parameters at all: an empty text reads as {}.
  auto none = parse_check_params("", {}, "checks[1].params");
  CHECK(none.ok());
  CHECK(parse_check_params("{}", {}, "checks[1].params").ok());
}

TEST_CASE("check params: what a check may not carry is refused, naming the member") {
  struct Case {
    std::string json, message;
  };
  const std::vector<Case> cases = {
      {R"({"to":"web","port":80,"colour":"red"})", "checks[0].params: colour: unknown member"},
      {R"({"port":80})", "checks[0].params: to: required"},
      {R"({"to":"web","port":"80"})", "checks[0].params: port: an integer 0..65535"},
      {R"({"to":"web","port":65536})", "checks[0].params: port: an integer 0..65535"},
      {R"({"to":"web","port":-1})", "checks[0].params: port: an integer 0..65535"},
      {R"({"to":"","port":80})", "checks[0].params: to: a string of 1..1024 bytes"},
      {R"({"to":7,"port":80})", "checks[0].params: to: a string of 1..1024 bytes"},
      // Over the bound every string of a check's params has: refused by the reader.
      {R"({"to":")" + std::string(1025, 'a') + R"(","port":80})",
       "checks[0].params: to: longer than 1024 bytes"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json.substr(0, 80));
    CHECK(refusal(c.json) == c.message);
  }
  // A duplicate member and a value that is not an object are refused too.
  auto dup = parse_check_params(R"({"to":"web","to":"app","port":80})", kHttp, "checks[0].params");
  REQUIRE_FALSE(dup.ok());
  CHECK(dup.status().message().find("to") != std::string::npos);
  CHECK_FALSE(parse_check_params(R"(["to"])", kHttp, "checks[0].params").ok());
  CHECK_FALSE(parse_check_params(R"({"to":"web",)", kHttp, "checks[0].params").ok());
}

TEST_CASE("check params: the strict reader's refusals name the JSON path after the params' name") {
  struct Case {
    std::string json, message;
  };
  const std::vector<Case> cases = {
      // A duplicate deep inside a value, refused before the value's type is looked at.
      {R"({"to":"web","port":80,"expect_text":{"a":[{"b":1,"b":2}]}})",
       "checks[0].params: expect_text.a[0].b: duplicate member"},
      {R"({"to":"web","port":80,"expect_text":["ok"]})",
       "checks[0].params: expect_text: a string of 1..1024 bytes"},
      {R"({"to":[[[["web"]]]],"port":80})", "checks[0].params: to[0][0][0]: nested deeper than 4"},
      // Longer than any string of a check's params, though the member is unknown.
      {R"({"to":"web","port":80,"colour":")" + std::string(1025, 'r') + R"("})",
       "checks[0].params: colour: longer than 1024 bytes"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json.substr(0, 80));
    CHECK(refusal(c.json) == c.message);
  }
}
