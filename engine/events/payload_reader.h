// Reads the payload of a catalog event strictly: a JSON object with no duplicate member at any
// depth, whose first member is "v":1, and, in an attempt stream, whose "attempt" is the stream's
// ID. Errors name the event type and the member as the projections always have
// ("attempt.predicted: member \"confidence\": not a non-negative integer", docs/PROJECTIONS.md).
// Members the contract does not list are tolerated: no event contract (docs/ATTEMPTS.md) refuses
// them; a decoder that must refuse them calls Object::done().
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/evidence_ref.h"
#include "engine/common/status.h"
#include "engine/json/json_reader.h"
#include "engine/log/event.h"

namespace aura::events {

// The version every payload of this catalog carries as its first member.
inline constexpr uint64_t kPayloadVersion = 1;

// Streams: an attempt's is this prefix and 16 lowercase hex digits; the lab's registries.
inline constexpr std::string_view kAttemptStreamPrefix = "attempt/";
inline constexpr size_t kAttemptIdHexDigits = 16;
inline constexpr std::string_view kScenarioStream = "lab/scenarios";
inline constexpr std::string_view kCapabilityStream = "lab/capabilities";
inline constexpr std::string_view kSupervisorStream = "lab/supervisor";

// The attempt ID if `stream` is an attempt stream by the contract, else empty. Streams named
// attempt/<anything else> (the demo's "attempt/demo-…") are not attempt streams.
std::string_view attempt_id_of_stream(std::string_view stream);

// A reader for one event's payload after another. Keep one per user and reuse it: the parser
// keeps its buffers; what open() returns is valid until the next open() and while the event's
// bytes live.
class PayloadReader {
 public:
  PayloadReader();

  // The payload's members, checked as above.
  Result<json::Object> open(const EventView& event);
  // The refs of the payload last opened (docs/formats/blobs.md), read with extract_refs exactly
  // as the log validated them; none when it lists no "refs".
  Result<std::vector<EvidenceRef>> refs() const;

 private:
  json::Reader reader_;
  std::string type_;
  std::string_view payload_;
};

}  // namespace aura::events
