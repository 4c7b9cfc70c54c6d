#include "engine/events/gate_events.h"

#include "engine/common/json_writer.h"
#include "engine/events/attempt_events.h"
#include "engine/events/payload_codec.h"

namespace aura::events {

using namespace codec;

// ---- gate.started ----

std::string GateStarted::encode() const {
  return header(attempt)
      .num("revision", revision)
      .str("ir_sha256", ir_sha256)
      .boolean("stop_at_first_failure", stop_at_first_failure)
      .raw("environment",
           JsonWriter()
               .str("kernel_release", environment.kernel_release)
               .str("lab_build_digest", environment.lab_build_digest)
               .str("sandbox_profile_digest", environment.sandbox_profile_digest)
               .str("capability_snapshot_digest", environment.capability_snapshot_digest)
               .done())
      .raw("capabilities", capabilities)
      .done();
}

Result<GateStarted> GateStarted::decode(PayloadReader& r, const EventView& e) {
  GateStarted p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open_attempt(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.revision, read_count(o, "revision"));
  AURA_ASSIGN_OR_RETURN(p.ir_sha256, read_hex(o, "ir_sha256"));
  AURA_ASSIGN_OR_RETURN(p.stop_at_first_failure, o.required_bool("stop_at_first_failure"));
  json::Object env;
  AURA_ASSIGN_OR_RETURN(env, o.object("environment"));
  AURA_ASSIGN_OR_RETURN(p.environment.kernel_release, read_string(env, "kernel_release"));
  AURA_ASSIGN_OR_RETURN(p.environment.lab_build_digest, read_string(env, "lab_build_digest"));
  AURA_ASSIGN_OR_RETURN(p.environment.sandbox_profile_digest,
                        read_string(env, "sandbox_profile_digest"));
  AURA_ASSIGN_OR_RETURN(p.environment.capability_snapshot_digest,
                        read_hex(env, "capability_snapshot_digest"));
  json::Value caps;
  AURA_ASSIGN_OR_RETURN(caps, o.value("capabilities"));
  AURA_RETURN_IF_ERROR(caps.as_object().status());
  p.capabilities = caps.minified();
  return p;
}

// ---- gate.action ----

std::string GateAction::encode() const {
  JsonWriter j = header(attempt);
  j.num("gate", gate)
      .str("property", property)
      .str("world", world)
      .str("stage", stage)
      .num("index", index);
  write_action_members(j, *this);
  return j.raw("refs", refs_json(refs)).done();
}

Result<GateAction> GateAction::decode(PayloadReader& r, const EventView& e) {
  GateAction p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open_attempt(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.gate, read_count(o, "gate"));
  AURA_ASSIGN_OR_RETURN(p.property, read_enum(o, "property", kProperties));
  AURA_ASSIGN_OR_RETURN(p.world, read_string(o, "world"));
  AURA_ASSIGN_OR_RETURN(p.stage, read_enum(o, "stage", kGateActionStages));
  AURA_ASSIGN_OR_RETURN(p.index, read_count(o, "index"));
  AURA_RETURN_IF_ERROR(read_action_members(o, p));
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  return p;
}

// ---- gate.fact ----

std::string GateFact::encode() const {
  JsonWriter j = header(attempt);
  j.num("gate", gate)
      .str("property", property)
      .str("world", world)
      .str("stage", stage)
      .str("check", check)
      .boolean("ok", ok)
      .str("observed", observed);
  if (value) j.str("value", *value);
  if (!refs.empty()) j.raw("refs", refs_json(refs));
  return j.done();
}

Result<GateFact> GateFact::decode(PayloadReader& r, const EventView& e) {
  GateFact p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, open_attempt(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.gate, read_count(o, "gate"));
  AURA_ASSIGN_OR_RETURN(p.property, read_enum(o, "property", kProperties));
  AURA_ASSIGN_OR_RETURN(p.world, read_string(o, "world"));
  AURA_ASSIGN_OR_RETURN(p.stage, read_enum(o, "stage", kGateStages));
  AURA_ASSIGN_OR_RETURN(p.check, read_string(o, "check"));
  AURA_ASSIGN_OR_RETURN(p.ok, o.required_bool("ok"));
  AURA_ASSIGN_OR_RETURN(p.observed, read_string(o, "observed"));
  std::optional<std::string_view> value;
  AURA_ASSIGN_OR_RETURN(value, o.optional_string("value"));
  if (value) p.value = std::string(*value);
  AURA_ASSIGN_OR_RETURN(p.refs, r.refs());
  return p;
}

}  // namespace aura::events
