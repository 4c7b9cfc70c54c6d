// A complete, valid manifest.json for tests (parser, package loader, CLI): every section of
// docs/SCENARIOS.md, shaped so the "filetree" world driver also accepts it. Tests derive
// invalid manifests from it by replacing one substring.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace aura::testing {

inline constexpr std::string_view kSampleManifestTemplate = R"({
  "schema": 1,
  "id": "@ID@",
  "version": "@VERSION@",
  "family": "@FAMILY@",
  "title": "@TITLE@",
  "briefing": "web2 serves yesterday's page.\n\tThe other nodes look fine.",
  "driver": "filetree",
  "probe_budget": 12,
  "allow_scripts": false,
  "hypotheses": [
    {"id": "stale-override", "text": "a host override pins web2 to an old app root"},
    {"id": "bad-release", "text": "the current release itself is broken"}
  ],
  "targets": [
    {"name": "web", "type": "role", "kind": "node", "description": "every web node", "max_matches": 3},
    {"name": "stale-app-root", "type": "selector", "kind": "node", "description": "web nodes whose app_root differs from the group default"}
  ],
  "worlds": [
    {"id": "primary", "role": "primary", "description": "the live fleet", "build": {"layers": ["worlds/common", "worlds/primary"], "selectors": {"stale-app-root": {"kind": "stale_override", "var": "app_root", "file": "index.html"}}}},
    {"id": "twin-1", "role": "twin", "description": "the same fault on web3", "build": {"layers": ["worlds/common", "worlds/twin-1"], "selectors": {"stale-app-root": {"kind": "stale_override", "var": "app_root", "file": "index.html"}}}},
    {"id": "control", "role": "control", "build": {"layers": ["worlds/common", "worlds/control"], "selectors": {"stale-app-root": {"kind": "stale_override", "var": "app_root", "file": "index.html"}}}}
  ],
  "probes": [
    {"call": "file.read", "summary": "read a fleet or node file", "cost": 1, "max_output_bytes": 65536,
     "params": {"path": {"type": "path", "prefixes": ["/fleet/", "/nodes/"], "max_bytes": 256}}},
    {"call": "fleet.effective", "summary": "a node's effective settings", "cost": 2,
     "params": {"node": {"type": "target", "target_kind": "node", "description": "the node"}}}
  ],
  "actions": [
    {"call": "vars.unset", "summary": "remove a host override",
     "params": {"node": {"type": "target", "target_kind": "node", "allow_literal": false},
                "key": {"type": "string", "enum": ["app_root", "port"], "max_bytes": 32}}},
    {"call": "file.chmod", "summary": "change a file's mode",
     "params": {"path": {"type": "path", "prefixes": ["/srv/"], "min_bytes": 6},
                "mode": {"type": "mode", "mode_mask": "0755"}}}
  ],
  "checks": [
    {"id": "fleet-healthy", "kind": "postcondition", "description": "every node serves the release",
     "call": "fleet.healthy", "params": {"expect_text": "fleet ok"}, "roles": ["primary", "twin"]},
    {"id": "fleet-converged", "kind": "invariant", "call": "fleet.converged"}
  ],
  "judge": {
    "gold": {"expect": "VERIFIED",
             "probes": [{"call": "file.read", "params": {"path": "/fleet/host_vars/web2.conf"}}],
             "ir": {"v": 1, "note": "an InterventionIR"}},
    "bad": {"expect": "NOT_RECOVERED", "ir": {"v": 1}}
  }
}
)";

// The "build" object of the sample's world with layer worlds/`layer` ("primary", "twin-1",
// "control") as the template spells it: its layers, and the filetree driver's rule for the
// selector term (docs/WORLDS.md, "Targets").
inline std::string sample_build(std::string_view layer) {
  return R"({"layers": ["worlds/common", "worlds/)" + std::string(layer) +
         R"("], "selectors": {"stale-app-root": {"kind": "stale_override", "var": "app_root", )"
         R"("file": "index.html"}}})";
}

// `text` with the one occurrence of `from` replaced by `to`; throws unless there is exactly one.
inline std::string replace_one(std::string text, std::string_view from, std::string_view to) {
  const size_t at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos) {
    throw std::logic_error("replace_one: not exactly one \"" + std::string(from) + "\"");
  }
  return text.replace(at, from.size(), to);
}

// The sample manifest naming the given package fields (they must need no JSON escaping).
inline std::string sample_manifest(std::string_view id = "t0-sample",
                                   std::string_view version = "1.0.0",
                                   std::string_view family = "tutorial/config-drift",
                                   std::string_view title = "A web fleet serves a stale page") {
  std::string m(kSampleManifestTemplate);
  m = replace_one(m, "@ID@", id);
  m = replace_one(m, "@VERSION@", version);
  m = replace_one(m, "@FAMILY@", family);
  return replace_one(m, "@TITLE@", title);
}

}  // namespace aura::testing
