#include "engine/events/registry_events.h"

#include "engine/common/json_writer.h"
#include "engine/events/attempt_events.h"

namespace aura::events {

namespace {

Status read_into(const json::Object& o, std::string_view name, std::string& out) {
  std::string_view v;
  AURA_ASSIGN_OR_RETURN(v, o.required_string(name));
  out = std::string(v);
  return Status::ok();
}

Status read_dir(const json::Object& o, std::string& dir) {
  AURA_RETURN_IF_ERROR(read_into(o, "dir", dir));
  if (dir.empty()) return o.error("dir", "empty");
  return Status::ok();
}

}  // namespace

std::string ScenarioLoaded::encode() const {
  JsonArray list;
  for (const EvidenceRef& r : refs) list.raw(evidence_ref_json(r));
  return JsonWriter()
      .num("v", kPayloadVersion)
      .str("dir", dir)
      .str("id", id)
      .str("version", version)
      .str("family", family)
      .str("title", title)
      .str("package_digest", package_digest)
      .str("manifest_sha256", manifest_sha256)
      .str("publisher", publisher)
      .raw("refs", list.done())
      .done();
}

Result<ScenarioLoaded> ScenarioLoaded::decode(PayloadReader& r, const EventView& e) {
  ScenarioLoaded p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, r.open(e));
  AURA_RETURN_IF_ERROR(read_dir(o, p.dir));
  AURA_RETURN_IF_ERROR(read_into(o, "id", p.id));
  AURA_RETURN_IF_ERROR(read_into(o, "version", p.version));
  AURA_RETURN_IF_ERROR(read_into(o, "family", p.family));
  AURA_RETURN_IF_ERROR(read_into(o, "title", p.title));
  std::string_view hex;
  AURA_ASSIGN_OR_RETURN(hex, read_sha256_hex(o, "package_digest"));
  p.package_digest = std::string(hex);
  AURA_ASSIGN_OR_RETURN(hex, read_sha256_hex(o, "manifest_sha256"));
  p.manifest_sha256 = std::string(hex);
  AURA_RETURN_IF_ERROR(read_into(o, "publisher", p.publisher));
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  return p;
}

std::string ScenarioRejected::encode() const {
  return JsonWriter().num("v", kPayloadVersion).str("dir", dir).str("reason", reason).done();
}

Result<ScenarioRejected> ScenarioRejected::decode(PayloadReader& r, const EventView& e) {
  ScenarioRejected p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, r.open(e));
  AURA_RETURN_IF_ERROR(read_dir(o, p.dir));
  AURA_RETURN_IF_ERROR(read_into(o, "reason", p.reason));
  return p;
}

Result<CapabilitiesMeasured> CapabilitiesMeasured::decode(PayloadReader& r, const EventView& e) {
  CapabilitiesMeasured p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, r.open(e));
  AURA_RETURN_IF_ERROR(read_into(o, "host", p.host));
  AURA_RETURN_IF_ERROR(read_into(o, "kernel_release", p.kernel_release));
  json::Array list;
  AURA_ASSIGN_OR_RETURN(list, o.array("capabilities"));
  for (const json::Value& v : list.elements()) {
    json::Object c;
    AURA_ASSIGN_OR_RETURN(c, v.as_object());
    Capability cap;
    AURA_RETURN_IF_ERROR(read_into(c, "name", cap.name));
    if (cap.name.empty()) return c.error("name", "empty");
    AURA_ASSIGN_OR_RETURN(cap.available, c.required_bool("available"));
    AURA_RETURN_IF_ERROR(read_into(c, "reason", cap.reason));
    p.capabilities.push_back(std::move(cap));
  }
  return p;
}

}  // namespace aura::events
