// What a learner must never be shown of a scenario, for tests that scan every answer a learner
// gets (through the daemon, through HTTP): each world's description and build recipe, each
// check's call parameters, the judge cases' IRs and their texts.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/json/json_reader.h"
#include "engine/scenario/manifest.h"

namespace aura::testing {

// What a learner must never be shown of a scenario, as it would appear in an answer: each
// world's description and build recipe, each check's call parameters, the judge cases' texts.
inline std::vector<std::string> hidden_strings(const scenario::Manifest& m) {
  std::vector<std::string> out;
  for (const auto& w : m.worlds) {
    out.push_back(w.description);
    out.push_back(w.build_json);
    out.push_back(w.id == "primary" ? "worlds/primary" : "worlds/" + w.id);
  }
  for (const auto& c : m.checks) {
    if (c.params_json != "{}") out.push_back(c.params_json);
  }
  for (const auto& j : m.judge) {
    out.push_back(j.ir_json);
    json::Reader reader;
    auto ir = reader.parse_object(j.ir_json);
    REQUIRE(ir.ok());
    out.push_back(std::string(*ir->required_string("claim")));
    out.push_back(std::string(*ir->required_string("falsifier")));
  }
  return out;
}

inline scenario::Manifest t0_manifest() {
  const char* dir = std::getenv("AURA_SCENARIOS");
  REQUIRE_MESSAGE(dir != nullptr, "AURA_SCENARIOS is not set");
  std::ifstream in(std::filesystem::path(dir) / "t0-config-drift" / "manifest.json");
  std::stringstream s;
  s << in.rdbuf();
  auto m = scenario::parse_manifest(s.str());
  REQUIRE(m.ok());
  return *m;
}

}  // namespace aura::testing
