#include "engine/events/registry_events.h"

#include <algorithm>

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

// A list of capability ids: strings of [a-z0-9_-], 1..64 bytes. The catalog itself is the
// manifest's to check (engine/scenario/capability_ids.h); an id this build does not know stays
// readable, and the panel shows it as never measured.
Status read_capability_ids(const json::Object& o, std::string_view name,
                           std::vector<std::string>& out) {
  json::Array list;
  AURA_ASSIGN_OR_RETURN(list, o.array(name));
  for (const json::Value& v : list.elements()) {
    std::string_view id;
    AURA_ASSIGN_OR_RETURN(id, v.as_string(64));
    const bool word = !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    });
    if (!word) return v.error("not a capability id ([a-z0-9_-], 1..64 bytes)");
    out.emplace_back(id);
  }
  return Status::ok();
}

std::string capability_ids_json(const std::vector<std::string>& ids) {
  JsonArray list;
  for (const std::string& id : ids) list.str(id);
  return list.done();
}

}  // namespace

std::string ScenarioLoaded::encode() const {
  JsonArray list;
  for (const EvidenceRef& r : refs) list.raw(evidence_ref_json(r));
  JsonWriter w;
  w.num("v", kPayloadVersion)
      .str("dir", dir)
      .str("id", id)
      .str("version", version)
      .str("family", family)
      .str("title", title)
      .str("package_digest", package_digest)
      .str("manifest_sha256", manifest_sha256)
      .str("publisher", publisher)
      .raw("refs", list.done());
  if (requirements == Requirements::kNotDeclared) w.null("requires");
  if (requirements == Requirements::kDeclared) {
    w.raw("requires", JsonWriter()
                          .raw("capabilities", capability_ids_json(required_capabilities))
                          .raw("optional", capability_ids_json(optional_capabilities))
                          .done());
  }
  return w.done();
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
  if (auto req = o.optional_value("requires")) {
    if (req->is_null()) {
      p.requirements = Requirements::kNotDeclared;
    } else {
      json::Object ro;
      AURA_ASSIGN_OR_RETURN(ro, req->as_object());
      AURA_RETURN_IF_ERROR(read_capability_ids(ro, "capabilities", p.required_capabilities));
      AURA_RETURN_IF_ERROR(read_capability_ids(ro, "optional", p.optional_capabilities));
      p.requirements = Requirements::kDeclared;
    }
  }
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
