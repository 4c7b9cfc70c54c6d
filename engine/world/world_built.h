// The `world.built` event: what the supervisor records when a world is built (the world's
// sandbox profile as a blob, the programs it runs, the package layers it was made from and their
// image digest, with the package's SHA256SUMS as a blob), and the image digest receipts recompute
// from it. Layout: docs/ATTEMPTS.md (events) and docs/formats/receipt.md ("environment").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/common/json_writer.h"
#include "engine/common/status.h"
#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "engine/events/world_events.h"
#include "engine/world/world_driver.h"

namespace aura::world {

inline constexpr std::string_view kWorldBuiltType = events::kWorldBuilt;
inline constexpr std::string_view kProfileRefKind = events::kProfileRefKind;
inline constexpr std::string_view kSumsRefKind = events::kSumsRefKind;

// The world image digest: SHA-256 of the lines of `sums` (a package's SHA256SUMS) whose path is
// under one of `layers` ("<layer>/..."), in the order the file lists them. kCorruption when
// `sums` has a line that is not "<64 hex>  <path>", or a layer covers no line.
Result<Digest> image_digest(std::string_view sums, const std::vector<std::string>& layers);

// The world.built event of `attempt`'s world `world_id` (for a gate world, the caller sets its
// `gate`): world, profile_sha256, binaries, layers, image_sha256 and refs (the profile text, kind
// sandbox.profile; the package's SHA256SUMS, kind scenario.sums), storing both blobs.
// kInvalidArgument when the record is unusable (no profile, a binary digest that is not 64
// lowercase hex, a layer that covers nothing in `sums`).
Result<events::WorldBuilt> world_built_event(std::string_view attempt, std::string_view world_id,
                                             const world::BuildRecord& record,
                                             std::string_view sums, BlobStore& blobs);

// world_built_event's members after "v", "attempt" (and "gate", "property"), added to `j`.
Status add_world_built_members(JsonWriter& j, std::string_view world_id,
                               const world::BuildRecord& record, std::string_view sums,
                               BlobStore& blobs);

}  // namespace aura::world
