// A scenario manifest built directly in C++ for the call and InterventionIR validator tests (no
// dependency on the manifest parser): a web fleet with node, service and path targets and an
// action catalog that exercises every parameter type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/scenario/manifest.h"

namespace aura::testing {

inline scenario::ParamSchema param(std::string name, scenario::ParamType type,
                                   bool required = true) {
  scenario::ParamSchema p;
  p.name = std::move(name);
  p.type = type;
  p.required = required;
  return p;
}

inline scenario::ParamSchema target_param(std::string name, std::string kind, bool allow_literal,
                                          uint32_t max_literal_bytes = 128) {
  auto p = param(std::move(name), scenario::ParamType::kTarget);
  p.target_kind = std::move(kind);
  p.allow_literal = allow_literal;
  p.max_literal_bytes = max_literal_bytes;
  return p;
}

inline scenario::CallSpec call_spec(std::string name, std::vector<scenario::ParamSchema> params) {
  scenario::CallSpec spec;
  spec.name = std::move(name);
  spec.summary = "test call " + spec.name;
  spec.params = std::move(params);
  return spec;
}

inline scenario::TargetTerm term(std::string name, std::string kind, bool selector) {
  scenario::TargetTerm t;
  t.name = std::move(name);
  t.kind = std::move(kind);
  t.selector = selector;
  t.max_matches = 3;
  return t;
}

inline scenario::CheckSpec check(std::string id, scenario::CheckKind kind) {
  scenario::CheckSpec c;
  c.id = std::move(id);
  c.kind = kind;
  c.call = "fleet.health";
  c.params_json = "{}";
  return c;
}

// Actions:
//   vars.unset      node: target(node, no literal), key: string enum {app_root, port}
//   file.chmod      path: path under /fleet/ or /nodes/ (<= 64 bytes), mode: mode (mask 0755),
//                   recursive: boolean (optional)
//   service.restart service: target(service, literal <= 16 bytes), delay_s: integer [0, 60]
//                   (optional), note: string 1..32 bytes (optional)
//   journal.undo    no parameters
// Probes: file.read path: path under /fleet/.
inline scenario::Manifest test_manifest(bool allow_scripts = false) {
  using scenario::ParamType;
  scenario::Manifest m;
  m.id = "t0-config-drift";
  m.version = "1.0.0";
  m.family = "tutorial/config-drift";
  m.title = "A web fleet serves a stale page from one node";
  m.briefing = "web2 serves yesterday's page";
  m.driver = "filetree";
  m.hypotheses = {{"stale-override", "a host override pins web2 to an old root"},
                  {"bad-release", "the release itself is broken"}};
  m.allow_scripts = allow_scripts;
  m.targets = {term("web", "node", false), term("stale-app-root", "node", true),
               term("app", "service", false), term("broken-units", "service", true)};

  auto key = param("key", ParamType::kString);
  key.enum_values = {"app_root", "port"};
  auto path = param("path", ParamType::kPath);
  path.path_prefixes = {"/fleet/", "/nodes/"};
  path.max_bytes = 64;
  auto mode = param("mode", ParamType::kMode);
  mode.mode_mask = 0755;
  auto delay = param("delay_s", ParamType::kInteger, false);
  delay.min = 0;
  delay.max = 60;
  auto note = param("note", ParamType::kString, false);
  note.min_bytes = 1;
  note.max_bytes = 32;
  m.actions = {
      call_spec("vars.unset", {target_param("node", "node", false), key}),
      call_spec("file.chmod", {path, mode, param("recursive", ParamType::kBoolean, false)}),
      call_spec("service.restart", {target_param("service", "service", true, 16), delay, note}),
      call_spec("journal.undo", {}),
  };
  auto read_path = param("path", ParamType::kPath);
  read_path.path_prefixes = {"/fleet/"};
  m.probes = {call_spec("file.read", {read_path})};
  m.checks = {check("fleet-healthy", scenario::CheckKind::kPostcondition),
              check("web-content", scenario::CheckKind::kPostcondition),
              check("fleet-converged", scenario::CheckKind::kInvariant)};
  return m;
}

}  // namespace aura::testing
