#include "engine/events/world_events.h"

#include "engine/events/attempt_events.h"
#include "engine/events/payload_codec.h"

namespace aura::events {

using namespace codec;

// ---- world.built ----

void WorldBuilt::encode_members(JsonWriter& j) const {
  JsonWriter bins;
  for (const auto& [path, digest] : binaries) bins.str(path, digest);
  j.str("world", world)
      .str("profile_sha256", profile_sha256)
      .raw("binaries", bins.done())
      .raw("layers", strings_json(layers))
      .str("image_sha256", image_sha256)
      .raw("refs", refs_json(refs));
}

std::string WorldBuilt::encode() const {
  JsonWriter j = header(attempt);
  if (gate) j.num("gate", gate->gate).str("property", gate->property);
  encode_members(j);
  return j.done();
}

Result<WorldBuilt> WorldBuilt::decode(PayloadReader& r, const EventView& e) {
  WorldBuilt p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open_attempt(r, e, p.attempt));
  std::optional<uint64_t> gate;
  AURA_ASSIGN_OR_RETURN(gate, o.optional_u64("gate"));
  if (gate) {
    Gate g{*gate, ""};
    AURA_ASSIGN_OR_RETURN(g.property, read_enum(o, "property", kProperties));
    p.gate = std::move(g);
  }
  AURA_ASSIGN_OR_RETURN(p.world, read_string(o, "world"));
  AURA_ASSIGN_OR_RETURN(p.profile_sha256, read_hex(o, "profile_sha256"));
  json::Object bins;
  AURA_ASSIGN_OR_RETURN(bins, o.object("binaries"));
  for (std::string_view path : bins.names()) {
    std::string digest;
    AURA_ASSIGN_OR_RETURN(digest, read_hex(bins, path));
    p.binaries.emplace_back(std::string(path), std::move(digest));
  }
  json::Array layers;
  AURA_ASSIGN_OR_RETURN(layers, o.array("layers"));
  AURA_ASSIGN_OR_RETURN(p.layers, read_strings(layers));
  AURA_ASSIGN_OR_RETURN(p.image_sha256, read_hex(o, "image_sha256"));
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  return p;
}

// ---- world.reset ----

std::string WorldReset::encode() const {
  return header(attempt).str("reason", reason).str("world", world).str("previous", previous).done();
}

Result<WorldReset> WorldReset::decode(PayloadReader& r, const EventView& e) {
  WorldReset p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open_attempt(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.reason, read_string(o, "reason"));
  AURA_ASSIGN_OR_RETURN(p.world, read_string(o, "world"));
  AURA_ASSIGN_OR_RETURN(p.previous, read_string(o, "previous"));
  return p;
}

}  // namespace aura::events
