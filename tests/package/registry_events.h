// The stream lab/scenarios as `aura log dump` prints it, for the black-box tests of
// `aura setup`, `aura scenario load` and `aura scenario sign`.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/cli/cli_util.h"

namespace aura::testing {

// One registry event: its type and actor, and the payload's string members tests look at.
struct RegistryEvent {
  uint64_t seq = 0;
  std::string type, actor, first_member;
  std::string dir, id, version, reason, manifest_sha256, package_digest, publisher, publisher_key,
      command, sums;
  std::string ref_sha256, ref_id, ref_kind;  // of its one manifest ref, if any
  uint64_t ref_bytes = 0;
  std::string requires_json;  // its "requires" member minified; empty when it has none
};

inline std::string string_member(simdjson::dom::object o, const char* key) {
  std::string_view s;
  return o[key].get(s) ? std::string() : std::string(s);
}

// Every event of the stream lab/scenarios in the lab's data folder, in log order.
inline std::vector<RegistryEvent> registry(const Lab& lab) {
  CliResult r = run_aura({"log", "dump", "--data", lab.data().string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  std::vector<RegistryEvent> out;
  for (const std::string& line : r.lines()) {
    Json j(line);
    if (!j.ok() || j.str("stream") != "lab/scenarios") continue;
    simdjson::dom::object payload;
    REQUIRE(j.root()["payload"].get(payload) == simdjson::SUCCESS);
    RegistryEvent e;
    e.seq = j.u64("seq").value_or(0);
    e.type = *j.str("type");
    e.actor = *j.str("actor");
    e.first_member = std::string((*payload.begin()).key);
    for (auto [key, field] : {std::pair<const char*, std::string*>{"dir", &e.dir},
                              {"id", &e.id},
                              {"version", &e.version},
                              {"reason", &e.reason},
                              {"manifest_sha256", &e.manifest_sha256},
                              {"package_digest", &e.package_digest},
                              {"publisher", &e.publisher},
                              {"publisher_key", &e.publisher_key},
                              {"command", &e.command},
                              {"sums", &e.sums}}) {
      *field = string_member(payload, key);
    }
    simdjson::dom::element requires_value;
    if (payload["requires"].get(requires_value) == simdjson::SUCCESS) {
      e.requires_json = simdjson::minify(requires_value);
    }
    simdjson::dom::array refs;
    if (payload["refs"].get(refs) == simdjson::SUCCESS) {
      REQUIRE(refs.size() == 1);
      simdjson::dom::object ref;
      REQUIRE(refs.at(0).get(ref) == simdjson::SUCCESS);
      e.ref_id = string_member(ref, "id");
      e.ref_kind = string_member(ref, "kind");
      e.ref_sha256 = string_member(ref, "sha256");
      REQUIRE(ref["bytes"].get(e.ref_bytes) == simdjson::SUCCESS);
    }
    out.push_back(e);
  }
  return out;
}

// The registry events of `type`.
inline std::vector<RegistryEvent> registry_of_type(const Lab& lab, const std::string& type) {
  std::vector<RegistryEvent> out;
  for (RegistryEvent& e : registry(lab)) {
    if (e.type == type) out.push_back(std::move(e));
  }
  return out;
}

}  // namespace aura::testing
