// Typed payloads of the lab registries' events: the scenario registry (stream lab/scenarios,
// docs/ATTEMPTS.md "The scenario registry") and the capability panel (stream lab/capabilities,
// docs/CAPABILITIES.md). One encoder and one strict decoder each, on PayloadReader.
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

  // What the package's manifest requires of the machine ("requires"), read by the capability
  // panel (docs/CAPABILITIES.md, "Labs"). Member "requires": {"capabilities":[ids],
  // "optional":[ids]}, or null when the manifest declares none. Events written before the member
  // existed lack it and still decode (kNotRecorded); the payload version stays 1, since readers
  // tolerate members they do not know.
  enum class Requirements { kNotRecorded, kNotDeclared, kDeclared };
  Requirements requirements = Requirements::kNotRecorded;
  std::vector<std::string> required_capabilities, optional_capabilities;  // kDeclared only

  std::string encode() const;
  static Result<ScenarioLoaded> decode(PayloadReader& r, const EventView& e);
};

struct ScenarioRejected {
  static constexpr std::string_view kType = kScenarioRejected;
  std::string dir, reason;

  std::string encode() const;
  static Result<ScenarioRejected> decode(PayloadReader& r, const EventView& e);
};

struct CapabilitiesMeasured {
  static constexpr std::string_view kType = kCapabilitiesMeasured;
  struct Capability {
    std::string name;  // non-empty
    bool available = false;
    std::string reason;
  };
  std::string host, kernel_release;
  std::vector<Capability> capabilities;

  // The encoder is events::encode(const CapabilitiesMeasured&), capability_events.h.
  static Result<CapabilitiesMeasured> decode(PayloadReader& r, const EventView& e);
};

}  // namespace aura::events
