// Typed payloads of the scenario registry's events (stream lab/scenarios, docs/ATTEMPTS.md "The
// scenario registry"): one encoder and one strict decoder each, on PayloadReader.
#pragma once

#include <string>
#include <vector>

#include "engine/blob/evidence_ref.h"
#include "engine/common/status.h"
#include "engine/events/event_types.h"
#include "engine/events/payload_reader.h"
#include "engine/log/event.h"

namespace aura::events {

struct ScenarioLoaded {
  static constexpr std::string_view kType = kScenarioLoaded;
  std::string dir, id, version, family, title, package_digest, manifest_sha256, publisher;
  std::vector<EvidenceRef> refs;  // the manifest bytes: id "manifest", kind "scenario.manifest"

  std::string encode() const;
  static Result<ScenarioLoaded> decode(PayloadReader& r, const EventView& e);
};

struct ScenarioRejected {
  static constexpr std::string_view kType = kScenarioRejected;
  std::string dir, reason;

  std::string encode() const;
  static Result<ScenarioRejected> decode(PayloadReader& r, const EventView& e);
};

}  // namespace aura::events
