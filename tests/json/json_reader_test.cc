#include "engine/json/json_reader.h"

#include <doctest/doctest.h>

#include <string>

using aura::json::Array;
using aura::json::Limits;
using aura::json::Object;
using aura::json::PathStyle;
using aura::json::Reader;

namespace {

// The error message of a parse that must fail.
std::string parse_error(Reader& r, std::string_view text) {
  auto v = r.parse(text);
  REQUIRE_FALSE(v.ok());
  return v.status().message();
}

Object must_object(Reader& r, std::string_view text) {
  auto o = r.parse_object(text);
  REQUIRE_MESSAGE(o.ok(), o.status().message());
  return std::move(o).value();
}

template <class T>
std::string error_of(const aura::Result<T>& r) {
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

}  // namespace

TEST_CASE("json reader: typed getters read what the document holds") {
  Reader r;
  Object o =
      must_object(r, R"({"name":"n","n":7,"i":-3,"b":true,"o":{"x":"y"},"a":[1,2],"z":null})");
  CHECK(*o.required_string("name") == "n");
  CHECK(*o.required_u64("n") == 7);
  CHECK(*o.required_i64("i") == -3);
  CHECK(*o.required_bool("b") == true);
  auto inner = o.object("o");
  REQUIRE(inner.ok());
  CHECK(*inner->required_string("x") == "y");
  CHECK(inner->done().is_ok());
  auto a = o.array("a");
  REQUIRE(a.ok());
  CHECK(a->size() == 2);
  CHECK(*a->u64s() == std::vector<uint64_t>{1, 2});
  auto z = o.string_or_null("z");
  REQUIRE(z.ok());
  CHECK_FALSE(z->has_value());
  CHECK(o.done().is_ok());
  CHECK(o.first_name() == "name");
}

TEST_CASE("json reader: optional members are nullopt when absent and typed when present") {
  Reader r;
  Object o = must_object(r, R"({"n":"seven"})");
  auto missing = o.optional_u64("m");
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
  CHECK(error_of(o.optional_u64("n")) == "$.n: not a non-negative integer");
  CHECK_FALSE(o.optional_string("s")->has_value());
  CHECK_FALSE(o.optional_object("s")->has_value());
  CHECK_FALSE(o.optional_array("s")->has_value());
  CHECK_FALSE(o.optional_bool("s")->has_value());
}

TEST_CASE("json reader: a duplicate member is refused at any depth, naming its path") {
  Reader r;
  CHECK(parse_error(r, R"({"a":1,"a":2})") == "$.a: duplicate member");
  CHECK(parse_error(r, R"({"o":{"p":{"k":1,"k":1}}})") == "$.o.p.k: duplicate member");
  CHECK(parse_error(r, R"({"steps":[{},{},{"mode":"a","mode":"b"}]})") ==
        "$.steps[2].mode: duplicate member");
  CHECK(parse_error(r, R"([[{"x":{"y":0,"y":0}}]])") == "$[0][0].x.y: duplicate member");
  // The same name in sibling objects is not a duplicate.
  CHECK(r.parse(R"({"a":{"k":1},"b":{"k":1}})").ok());
}

TEST_CASE("json reader: a wrong type names the member's path and what it is not") {
  Reader r;
  Object o = must_object(
      r, R"({"steps":[{"mode":1}],"n":-1,"f":1.0,"e":1e3,"b":"true","o":[],"a":{},"i":1.5})");
  auto steps = o.array("steps");
  REQUIRE(steps.ok());
  auto step = steps->elements()[0].as_object();
  REQUIRE(step.ok());
  CHECK(error_of(step->required_string("mode")) == "$.steps[0].mode: not a string");
  CHECK(error_of(o.required_u64("n")) == "$.n: not a non-negative integer");
  CHECK(error_of(o.required_u64("f")) == "$.f: not a non-negative integer");
  CHECK(error_of(o.required_u64("e")) == "$.e: not a non-negative integer");
  CHECK(error_of(o.required_i64("i")) == "$.i: not an integer");
  CHECK(error_of(o.required_bool("b")) == "$.b: not true or false");
  CHECK(error_of(o.object("o")) == "$.o: not an object");
  CHECK(error_of(o.array("a")) == "$.a: not an array");
  CHECK(error_of(o.string_or_null("n")) == "$.n: not a string or null");
  CHECK(error_of(o.required_string("absent")) == "$.absent: missing");
}

TEST_CASE("json reader: an enumeration names the value and what is allowed") {
  Reader r;
  Object o = must_object(r, R"({"mode":"flying"})");
  CHECK(error_of(o.required_enum("mode", {"learn", "judge"})) ==
        "$.mode: \"flying\" is not one of learn|judge");
  Object ok = must_object(r, R"({"mode":"judge"})");
  CHECK(*ok.required_enum("mode", {"learn", "judge"}) == "judge");
}

TEST_CASE("json reader: the caller's bounds on strings and arrays are checked") {
  Reader r;
  Object o = must_object(r, R"({"name":"abcdef","list":[1,2,3],"words":["ab","abcd"]})");
  CHECK(o.required_string("name", 6).ok());
  CHECK(error_of(o.required_string("name", 5)) == "$.name: longer than 5 bytes");
  CHECK(o.array("list", 3).ok());
  CHECK(error_of(o.array("list", 2)) == "$.list: more than 2 elements");
  auto words = o.array("words");
  REQUIRE(words.ok());
  CHECK(error_of(words->strings(3)) == "$.words[1]: longer than 3 bytes");
  CHECK(error_of(words->u64s()) == "$.words: element 0 is not a non-negative integer");
}

TEST_CASE("json reader: the document's bounds (bytes, depth, members, elements, strings)") {
  SUBCASE("total bytes") {
    Limits l;
    l.max_bytes = 10;
    Reader r(l);
    CHECK(r.parse(R"({"a":"bc"})").ok());
    CHECK(parse_error(r, R"({"a":"bcd"})") == "$: 11 bytes, more than 10");
  }
  SUBCASE("nesting") {
    Limits l;
    l.max_depth = 3;
    Reader r(l);
    CHECK(r.parse(R"({"a":{"b":[1]}})").ok());
    CHECK(parse_error(r, R"({"a":{"b":[[1]]}})") == "$.a.b[0]: nested deeper than 3");
    // Far deeper than simdjson's own limit is refused too, not a crash.
    Reader deep;
    std::string text(5000, '[');
    text += std::string(5000, ']');
    CHECK(parse_error(deep, text).find("nested deeper than") != std::string::npos);
  }
  SUBCASE("members per object") {
    Limits l;
    l.max_members = 2;
    Reader r(l);
    CHECK(parse_error(r, R"({"o":{"a":1,"b":2,"c":3}})") == "$.o: more than 2 members");
  }
  SUBCASE("elements per array") {
    Limits l;
    l.max_elements = 2;
    Reader r(l);
    CHECK(parse_error(r, R"({"a":[1,2,3]})") == "$.a: more than 2 elements");
  }
  SUBCASE("string and member name lengths") {
    Limits l;
    l.max_string_bytes = 3;
    Reader r(l);
    CHECK(parse_error(r, R"({"a":["abcd"]})") == "$.a[0]: longer than 3 bytes");
    CHECK(parse_error(r, R"({"abcd":1})") == "$.abcd: member name longer than 3 bytes");
  }
}

TEST_CASE("json reader: done() refuses the first member no getter read") {
  Reader r;
  Object o = must_object(r, R"({"v":1,"name":"x","notes":"y","o":{"k":1,"extra":2}})");
  CHECK(o.required_u64("v").ok());
  CHECK(o.required_string("name").ok());
  auto inner = o.object("o");
  REQUIRE(inner.ok());
  CHECK(inner->required_u64("k").ok());
  CHECK(inner->done().message() == "$.o.extra: unknown member");
  CHECK(o.done().message() == "$.notes: unknown member");
  // Reading it (even as an optional member, or any value) accepts it.
  CHECK(o.optional_value("notes").has_value());
  CHECK(o.done().is_ok());
}

TEST_CASE("json reader: invalid JSON and invalid UTF-8 are refused") {
  Reader r;
  CHECK(parse_error(r, "").find("$: not JSON") == 0);
  CHECK(parse_error(r, "{").find("$: not JSON") == 0);
  CHECK(parse_error(r, R"({"a":1,})").find("$: not JSON") == 0);
  CHECK(parse_error(r, R"({'a':1})").find("$: not JSON") == 0);
  CHECK(parse_error(r, R"({"a":01})").find("$: not JSON") == 0);
  CHECK(parse_error(r, R"({"a":1} x)").find("$: not JSON") == 0);
  CHECK(parse_error(r, "{\"a\":\"\xff\"}") == "$: not valid UTF-8");
  CHECK(parse_error(r, "{\"a\":\"\xc3\x28\"}") == "$: not valid UTF-8");
  // An overlong encoding of '/', and a lone surrogate's bytes.
  CHECK(parse_error(r, "{\"a\":\"\xc0\xaf\"}") == "$: not valid UTF-8");
  CHECK(parse_error(r, "{\"a\":\"\xed\xa0\x80\"}") == "$: not valid UTF-8");
  auto root = r.parse_object("[1]");
  CHECK(error_of(root) == "$: not an object");
  // Valid multi-byte UTF-8 is read as its bytes.
  Object o = must_object(r, "{\"a\":\"\xc3\xa9\"}");
  CHECK(*o.required_string("a") == "\xc3\xa9");
}

TEST_CASE("json reader: the member style names members as the lab projections do") {
  Limits l;
  l.style = PathStyle::kMember;
  l.prefix = "attempt.started: ";
  Reader r(l);
  Object o = must_object(r, R"({"scenario":{"id":"s"},"scripts":[7]})");
  auto scenario = o.object("scenario");
  REQUIRE(scenario.ok());
  CHECK(error_of(scenario->required_string("publisher")) ==
        "attempt.started: member \"scenario.publisher\": missing");
  auto scripts = o.array("scripts");
  REQUIRE(scripts.ok());
  CHECK(error_of(scripts->elements()[0].as_object()) ==
        "attempt.started: member \"scripts[0]\": not an object");
  CHECK(parse_error(r, R"({"a":1,"a":1})") == "attempt.started: member \"a\": duplicate member");
  CHECK(parse_error(r, "x").find("attempt.started: payload: not JSON") == 0);
}

TEST_CASE("json reader: the relative style names paths from the document, the root unnamed") {
  Limits l;
  l.style = PathStyle::kRelative;
  l.prefix = "manifest.json: ";
  Reader r(l);
  Object o = must_object(r, R"({"worlds":[{"build":{}}],"n":"x"})");
  auto worlds = o.array("worlds");
  REQUIRE(worlds.ok());
  auto world = worlds->elements()[0].as_object();
  REQUIRE(world.ok());
  CHECK(error_of(world->required_string("id")) == "manifest.json: worlds[0].id: missing");
  CHECK(error_of(o.required_u64("n")) == "manifest.json: n: not a non-negative integer");
  CHECK(error_of(r.parse_object("[1]")) == "manifest.json: not an object");
  CHECK(parse_error(r, R"({"a":{"b":1,"b":2}})") == "manifest.json: a.b: duplicate member");
}

TEST_CASE("json reader: a non-printable member name is shown safely in a path") {
  Reader r;
  CHECK(parse_error(r, "{\"a\\u0001\":1,\"a\\u0001\":2}") == "$.a?: duplicate member");
  Object o = must_object(r, "{\"q\\\"\":1}");
  CHECK(o.done().message() == "$.q?: unknown member");
}

TEST_CASE("json reader: a reader is reused; each parse replaces the last") {
  Reader r;
  for (int i = 0; i < 3; ++i) {
    Object o = must_object(r, R"({"n":)" + std::to_string(i) + "}");
    CHECK(*o.required_u64("n") == uint64_t(i));
  }
  CHECK(parse_error(r, R"({"n":1,"n":1})") == "$.n: duplicate member");
  Object o = must_object(r, R"({"n":9})");
  CHECK(*o.required_u64("n") == 9);
}

TEST_CASE("json reader: minified returns the value's compact text") {
  Reader r;
  Object o = must_object(r, R"({"call": { "name" : "file.read", "params":{"p" : [1, 2]} }})");
  auto call = o.value("call");
  REQUIRE(call.ok());
  CHECK(call->minified() == R"({"name":"file.read","params":{"p":[1,2]}})");
}
