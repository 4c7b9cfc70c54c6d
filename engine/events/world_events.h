// Typed payloads of the events that record an attempt's worlds (docs/ATTEMPTS.md, "Events"):
// world.built (the live world, and each world the gate builds) and world.reset. ONE encoder and
// ONE strict decoder each, on PayloadReader. How a world.built is made from a driver's build
// record, and the image digest receipts recompute from it: engine/world/world_built.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/blob/evidence_ref.h"
#include "engine/common/json_writer.h"
#include "engine/common/status.h"
#include "engine/events/event_types.h"
#include "engine/events/payload_reader.h"
#include "engine/log/event.h"

namespace aura::events {

// The kinds of world.built's two refs.
inline constexpr std::string_view kProfileRefKind = "sandbox.profile";
inline constexpr std::string_view kSumsRefKind = "scenario.sums";

struct WorldBuilt {
  static constexpr std::string_view kType = kWorldBuilt;
  // For a world the gate builds: the gate.started's seq and the property it is built for.
  struct Gate {
    uint64_t gate = 0;
    std::string property;  // kProperties
  };
  std::string attempt;
  std::optional<Gate> gate;  // none: the live world
  std::string world;         // the manifest world id
  std::string profile_sha256;
  std::vector<std::pair<std::string, std::string>> binaries;  // path, SHA-256 (64 hex), in order
  std::vector<std::string> layers;                            // package folders
  std::string image_sha256;
  // id "profile", kind kProfileRefKind (the profile text); id "sums", kind kSumsRefKind.
  std::vector<EvidenceRef> refs;

  std::string encode() const;
  // The members after "v", "attempt" (and "gate", "property"): world ... refs.
  void encode_members(JsonWriter& j) const;
  static Result<WorldBuilt> decode(PayloadReader& r, const EventView& e);
};

struct WorldReset {
  static constexpr std::string_view kType = kWorldReset;
  std::string attempt, reason;  // reason may be empty
  std::string world = "live";
  // What became of the old world: "destroyed", "there was none", or "it could not be opened
  // (REASON); what it left was discarded".
  std::string previous;

  std::string encode() const;
  static Result<WorldReset> decode(PayloadReader& r, const EventView& e);
};

}  // namespace aura::events
