#include "engine/world/world_built.h"

#include <span>

#include "engine/blob/evidence_ref.h"

namespace aura::world {

Result<Digest> image_digest(std::string_view sums, const std::vector<std::string>& layers) {
  std::string covered;
  std::vector<bool> used(layers.size(), false);
  size_t at = 0;
  while (at < sums.size()) {
    size_t end = sums.find('\n', at);
    if (end == std::string_view::npos) {
      return Status::corruption("SHA256SUMS: the last line has no newline");
    }
    const std::string_view line = sums.substr(at, end - at + 1);
    at = end + 1;
    if (line.size() < 68 || !is_lower_hex64(line.substr(0, 64)) || line.substr(64, 2) != "  ") {
      return Status::corruption("SHA256SUMS: a line is not \"<64 hex>  <path>\"");
    }
    const std::string_view path = line.substr(66, line.size() - 67);
    for (size_t i = 0; i < layers.size(); ++i) {
      if (path.size() > layers[i].size() && path.starts_with(layers[i]) &&
          path[layers[i].size()] == '/') {
        covered += line;
        used[i] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    if (!used[i]) {
      return Status::corruption("layer " + layers[i] +
                                " covers no file of the package's SHA256SUMS");
    }
  }
  return sha256(covered);
}

Result<events::WorldBuilt> world_built_event(std::string_view attempt, std::string_view world_id,
                                             const world::BuildRecord& record,
                                             std::string_view sums, BlobStore& blobs) {
  const std::string what = "world " + std::string(world_id) + ": build record: ";
  if (record.profile.empty()) return Status::invalid(what + "no sandbox profile");
  if (!record.package_sums_sha256.empty() && record.package_sums_sha256 != to_hex(sha256(sums))) {
    return Status::failed_precondition(
        what + "its files were checked against a SHA256SUMS with SHA-256 " +
        record.package_sums_sha256 + ", not the verified package's " + to_hex(sha256(sums)) +
        ": the package changed while the world was built");
  }
  events::WorldBuilt e;
  e.attempt = std::string(attempt);
  e.world = std::string(world_id);
  for (const auto& [path, digest] : record.binaries) {
    if (!is_lower_hex64(digest)) {
      return Status::invalid(what + "the digest of " + path + " is not 64 lowercase hex");
    }
    e.binaries.emplace_back(path, digest);
  }
  e.layers = record.layers;
  auto image = image_digest(sums, record.layers);
  if (!image.ok()) return Status::invalid(what + image.status().message());
  const auto put = [&](std::string_view bytes) {
    return blobs.put(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  };
  auto profile = put(record.profile);
  if (!profile.ok()) return profile.status().with_context(what + "storing the profile");
  auto sums_blob = put(sums);
  if (!sums_blob.ok()) return sums_blob.status().with_context(what + "storing SHA256SUMS");
  e.profile_sha256 = to_hex(profile->sha256);
  e.image_sha256 = to_hex(*image);
  e.refs = {{"profile", profile->sha256, std::string(kProfileRefKind), profile->bytes},
            {"sums", sums_blob->sha256, std::string(kSumsRefKind), sums_blob->bytes}};
  return e;
}

Status add_world_built_members(JsonWriter& j, std::string_view world_id,
                               const world::BuildRecord& record, std::string_view sums,
                               BlobStore& blobs) {
  events::WorldBuilt e;
  AURA_ASSIGN_OR_RETURN(e, world_built_event("", world_id, record, sums, blobs));
  e.encode_members(j);
  return Status::ok();
}

}  // namespace aura::world
