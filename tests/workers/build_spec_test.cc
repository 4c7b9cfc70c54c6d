// The nodes driver's build recipe (workers/nodes/build_spec.h), read by the strict reader: what it
// refuses that a recipe's own rules do not, each named by its JSON path after the recipe's name.
#include "workers/nodes/build_spec.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using aura::workers::nodes::parse_build;
using aura::workers::nodes::parse_build_variants;

namespace {

const std::string kNode = R"({"name":"ctl","roles":["control"],"layers":["worlds/c"])";

std::string refusal(const std::string& json) {
  auto b = parse_build(json, "worlds[0].build");
  if (b.ok()) return "<accepted>";
  CHECK(b.status().code() == aura::ErrorCode::kInvalidArgument);
  return b.status().message();
}

}  // namespace

TEST_CASE("build spec: a recipe and its variants parse") {
  auto b = parse_build(R"({"nodes":[)" + kNode + R"(,"services":[{"name":"web",)" +
                           R"("argv":["/usr/sbin/nginx"],"ready":{"tcp":80}}]}]})",
                       "build");
  REQUIRE_MESSAGE(b.ok(), b.status().message());
  REQUIRE(b->nodes.size() == 1);
  CHECK(b->nodes[0].services[0].ready_tcp == 80);
  auto variants = parse_build_variants(
      R"({"variants":[{"nodes":[)" + kNode + R"(}]},{"nodes":[)" + kNode + R"(}]}]})", "build");
  REQUIRE_MESSAGE(variants.ok(), variants.status().message());
  CHECK(variants->size() == 2);
}

TEST_CASE("build spec: the strict reader's refusals name the JSON path after the recipe's name") {
  std::string deep = R"({"nodes":)" + std::string(16, '[') + std::string(16, ']') + "}";
  std::string deep_path = "nodes";
  for (int i = 0; i < 15; ++i) deep_path += "[0]";
  std::string many = R"({"nodes":[)" + kNode + R"(}],"selectors":{)";
  for (int i = 0; i <= 16; ++i) many += (i ? ",\"s" : "\"s") + std::to_string(i) + "\":{}";
  many += "}}";
  struct Case {
    std::string name, json, message;
  };
  const std::vector<Case> cases = {
      {"a duplicate member deep in a service",
       R"({"nodes":[)" + kNode +
           R"(,"services":[{"name":"web","argv":["/bin/web"],"ready":{"tcp":80,"tcp":81}}]}]})",
       "worlds[0].build: nodes[0].services[0].ready.tcp: duplicate member"},
      {"a wrong type", R"({"nodes":[{"name":"ctl","roles":"control","layers":["worlds/c"]}]})",
       "worlds[0].build: nodes[0].roles: expected an array, found a string"},
      {"nesting past 16 levels", deep, "worlds[0].build: " + deep_path + ": nested deeper than 16"},
      {"a string longer than any a recipe holds",
       R"({"nodes":[{"name":"ctl","roles":["control"],"layers":["worlds/)" + std::string(251, 'c') +
           R"("]}]})",
       "worlds[0].build: nodes[0].layers[0]: longer than 256 bytes"},
      {"more members than any object of a recipe", many,
       "worlds[0].build: selectors: more than 16 members"},
      {"an unknown member", R"({"nodes":[)" + kNode + R"(,"colour":"red"}]})",
       "worlds[0].build: nodes[0].colour: unknown member"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    CHECK(refusal(c.json) == c.message);
  }
}
