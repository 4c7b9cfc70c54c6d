// json::first_syntax_error: the line and column of the first byte a JSON parser cannot accept,
// checked on valid documents (none), on each kind of mistake a person makes by hand, and on a
// hostile depth; and the strict reader naming that place in its refusal.
#include "engine/json/json_syntax.h"

#include <doctest/doctest.h>

#include <string>

#include "engine/json/json_reader.h"

using namespace aura;
using aura::json::first_syntax_error;

namespace {

std::string at(std::string_view text) {
  auto p = first_syntax_error(text);
  if (!p) return "none";
  return std::to_string(p->line) + ":" + std::to_string(p->column);
}

}  // namespace

TEST_CASE("json syntax: valid documents have no error") {
  for (std::string_view ok :
       {"{}", "[]", " 0 ", "-0.5e+3", "\"a\\u00e9\\n\"", "true", "null",
        "{\"a\":[1,{\"b\":false}],\"c\":\"x\"}\n", "[[[[]]]]", "{\"\":\"\"}"}) {
    CAPTURE(ok);
    CHECK(at(ok) == "none");
  }
}

TEST_CASE("json syntax: the first wrong byte, by line and column") {
  CHECK(at("") == "1:1");                              // nothing at all
  CHECK(at("{\n  \"v\": 1,\n  \"x\" 2\n}") == "3:7");  // a missing colon
  CHECK(at("{\n  \"v\": 1,\n}") == "3:1");             // a trailing comma
  CHECK(at("{'v': 1}") == "1:2");                      // single quotes
  CHECK(at("[1, 2,, 3]") == "1:7");                    // an empty element
  CHECK(at("{\"a\": tru}") == "1:10");                 // a misspelt literal
  CHECK(at("{\"a\": 01}") == "1:8");                   // a leading zero
  CHECK(at("{\"a\": \"x\ny\"}") == "1:9");             // a raw newline in a string
  CHECK(at("{\"a\": \"\\q\"}") == "1:9");              // a bad escape
  CHECK(at("{\"a\": 1} {}") == "1:10");                // two documents
  CHECK(at("[1, 2") == "1:6");                         // cut short
  CHECK(at("{\"a\": 1]") == "1:8");                    // the wrong closer
}

TEST_CASE("json syntax: deep nesting is scanned without recursion") {
  const std::string deep = std::string(200000, '[') + "1" + std::string(199999, ']');
  CHECK(at(deep) == "1:400001");  // one closer short: the end
}

TEST_CASE("json syntax: the strict reader names where the text stopped being JSON") {
  json::Reader reader;
  auto r = reader.parse_object("{\n  \"v\": 1,\n  \"x\" 2\n}");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("not JSON (") != std::string::npos);
  CHECK(r.status().message().find("at line 3, column 7") != std::string::npos);
}
