// The API contract (docs/api/openapi.yaml) held against real answers: the members each schema
// of components.schemas lists as `required`, read from the YAML itself (the schema lines this
// file's reader understands: "    Name:" at four spaces, its "      required: [a, b]" at six),
// checked present in a response body. A test that calls check_shape on each kind of answer
// fails when the server stops sending what the contract promises, or the contract promises
// what the server never sent.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "engine/json/json_reader.h"

namespace aura::testing {

// Schema name -> its required members.
inline std::map<std::string, std::vector<std::string>> api_required(
    const std::filesystem::path& openapi) {
  std::ifstream in(openapi);
  REQUIRE_MESSAGE(in.good(), "cannot read " << openapi);
  std::map<std::string, std::vector<std::string>> out;
  std::string line, current;
  bool in_schemas = false;
  while (std::getline(in, line)) {
    if (line == "  schemas:") {
      in_schemas = true;
      continue;
    }
    if (!in_schemas) continue;
    if (line.size() > 2 && line[0] == ' ' && line[1] == ' ' && line[2] != ' ') break;  // next
    if (line.rfind("    ", 0) == 0 && line.size() > 5 && line[4] != ' ' && line.back() == ':') {
      current = line.substr(4, line.size() - 5);
      continue;
    }
    const std::string key = "      required: [";
    if (!current.empty() && line.rfind(key, 0) == 0 && line.back() == ']') {
      std::string list = line.substr(key.size(), line.size() - key.size() - 1);
      std::vector<std::string> names;
      std::stringstream ss(list);
      std::string name;
      while (std::getline(ss, name, ',')) {
        const size_t a = name.find_first_not_of(' '), b = name.find_last_not_of(' ');
        if (a != std::string::npos) names.push_back(name.substr(a, b - a + 1));
      }
      out[current] = names;
    }
  }
  return out;
}

// Every required member of `schema` is in the object `body`.
inline void check_shape(const std::map<std::string, std::vector<std::string>>& contract,
                        const std::string& schema, const std::string& body) {
  CAPTURE(schema);
  auto it = contract.find(schema);
  REQUIRE_MESSAGE(it != contract.end(), "no schema " << schema << " with required members");
  json::Reader reader;
  auto o = reader.parse_object(body);
  REQUIRE_MESSAGE(o.ok(), o.status().message() << " in " << body);
  for (const auto& name : it->second) {
    CHECK_MESSAGE(o->has(name), schema << " lacks required member " << name << ": " << body);
  }
}

// check_shape on each element of the array member `member` of `body`; the count checked.
inline size_t check_each(const std::map<std::string, std::vector<std::string>>& contract,
                         const std::string& schema, const std::string& body,
                         const std::string& member) {
  json::Reader reader;
  auto o = reader.parse_object(body);
  REQUIRE(o.ok());
  auto items = o->array(member);
  REQUIRE_MESSAGE(items.ok(), member << " is not an array in " << body);
  size_t n = 0;
  for (const auto& v : items->elements()) {
    check_shape(contract, schema, v.minified());
    ++n;
  }
  return n;
}

}  // namespace aura::testing
