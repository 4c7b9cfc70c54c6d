#include "engine/receipt/raw_json.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace aura;
using namespace aura::receipt;

TEST_CASE("raw_json: minify drops insignificant whitespace and keeps strings byte for byte") {
  auto m = minify_json(" { \"a\" : [ 1 , 2.50 ] ,\n \"b\" : \"x \\u0041 \\\" y\" } ", 1024, "t");
  REQUIRE(m.ok());
  CHECK(*m == R"({"a":[1,2.50],"b":"x \u0041 \" y"})");
}

TEST_CASE("raw_json: minify refuses what is not JSON or over its bound, naming the input") {
  auto bad = minify_json("{\"a\":}", 1024, "IR blob ir-1");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().message().rfind("IR blob ir-1: not JSON", 0) == 0);
  auto big = minify_json("[1,2,3]", 6, "x");
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().message() == "x: 7 bytes, more than 6");
}

TEST_CASE("raw_json: members are cut out exactly, nested values and tricky strings included") {
  const std::string s =
      R"({"a":{"x":[1,{"y":"}]"}]},"b":"q\"},{","c":-1.5e3,"d":[],"e":true,"f":null})";
  auto m = raw_members(s, "t");
  REQUIRE(m.ok());
  REQUIRE(m->size() == 6);
  CHECK((*m)[0].key == "a");
  CHECK((*m)[0].value == R"({"x":[1,{"y":"}]"}]})");
  CHECK((*m)[1].value == R"("q\"},{")");
  CHECK((*m)[2].value == "-1.5e3");
  CHECK((*m)[3].value == "[]");
  CHECK((*m)[4].value == "true");
  CHECK((*m)[5].value == "null");
  CHECK(*raw_member(*m, "c", "t") == "-1.5e3");
  CHECK(raw_member(*m, "z", "t").status().message() == "t: no member \"z\"");
  auto empty = raw_members("{}", "t");
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("raw_json: duplicate or escaped member names and non-objects are refused") {
  CHECK(raw_members(R"({"a":1,"a":2})", "t").status().message() == "t: duplicate member \"a\"");
  CHECK(raw_members(R"({"\u0061":1})", "t").status().message() ==
        "t: a member name holds an escape");
  CHECK_FALSE(raw_members("[1]", "t").ok());
  CHECK_FALSE(raw_members(R"({"a":1})x", "t").ok());
  CHECK_FALSE(raw_members(R"({"a":1 })",
                          "t")
                  .ok());
  CHECK_FALSE(raw_members(R"({"a")", "t").ok());
}

TEST_CASE("raw_json: minify reads strictly: duplicates and nesting are refused by JSON path") {
  CHECK(minify_json(R"({"a":[{"b":{"c":1,"c":2}}]})", 1024, "IR blob ir-1").status().message() ==
        "IR blob ir-1: a[0].b.c: duplicate member");
  const std::string deep =
      std::string(kMaxRawJsonDepth + 1, '[') + std::string(kMaxRawJsonDepth + 1, ']');
  std::string path;
  for (size_t i = 0; i < kMaxRawJsonDepth; ++i) path += "[0]";
  CHECK(minify_json(deep, 1024, "t").status().message() ==
        "t: " + path + ": nested deeper than " + std::to_string(kMaxRawJsonDepth));
  CHECK(minify_json("\"caf\xc3\x28\"", 1024, "t").status().message() == "t: not valid UTF-8");
  // Members, elements and strings are bounded by the size alone.
  const std::string long_string = "[\"" + std::string(100000, 'x') + "\"]";
  CHECK(minify_json(long_string, long_string.size(), "t").ok());
}
