#include "engine/events/payload_codec.h"

#include <algorithm>

namespace aura::events::codec {

JsonWriter header(std::string_view attempt) {
  JsonWriter j;
  j.num("v", kPayloadVersion).str("attempt", attempt);
  return j;
}

void str_or_null(JsonWriter& j, std::string_view name, const std::optional<std::string>& text) {
  if (text) {
    j.str(name, *text);
  } else {
    j.null(name);
  }
}

std::string refs_json(const std::vector<EvidenceRef>& refs) {
  JsonArray a;
  for (const EvidenceRef& r : refs) a.raw(evidence_ref_json(r));
  return a.done();
}

std::string seqs_json(const std::vector<uint64_t>& seqs) {
  JsonArray a;
  for (uint64_t s : seqs) a.raw(std::to_string(s));
  return a.done();
}

std::string strings_json(const std::vector<std::string>& strings) {
  JsonArray a;
  for (const std::string& s : strings) a.str(s);
  return a.done();
}

Result<uint64_t> read_count(const json::Object& o, std::string_view name) {
  uint64_t v = 0;
  AURA_ASSIGN_OR_RETURN(v, o.required_u64(name));
  if (v > uint64_t(INT64_MAX)) return o.error(name, "larger than 2^63-1");
  return v;
}

Result<std::string> read_string(const json::Object& o, std::string_view name) {
  std::string_view v;
  AURA_ASSIGN_OR_RETURN(v, o.required_string(name));
  return std::string(v);
}

Result<std::string> read_enum(const json::Object& o, std::string_view name,
                              std::span<const std::string_view> allowed) {
  std::string_view v;
  AURA_ASSIGN_OR_RETURN(v, o.required_enum(name, allowed));
  return std::string(v);
}

Result<std::string> read_hex(const json::Object& o, std::string_view name) {
  std::string_view v;
  AURA_ASSIGN_OR_RETURN(v, o.required_string(name));
  const bool hex = v.size() == 64 && std::all_of(v.begin(), v.end(), [](char c) {
                     return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
                   });
  if (!hex) return o.error(name, "not 64 lowercase hex digits");
  return std::string(v);
}

Result<std::optional<std::string>> read_string_or_null(const json::Object& o,
                                                       std::string_view name) {
  std::optional<std::string_view> v;
  AURA_ASSIGN_OR_RETURN(v, o.string_or_null(name));
  if (!v) return std::optional<std::string>();
  return std::optional<std::string>(std::string(*v));
}

Result<std::vector<std::string>> read_strings(const json::Array& a) {
  std::vector<std::string_view> views;
  AURA_ASSIGN_OR_RETURN(views, a.strings());
  return std::vector<std::string>(views.begin(), views.end());
}

Result<json::Object> open_attempt(PayloadReader& r, const EventView& e, std::string& attempt) {
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, r.open(e));
  AURA_ASSIGN_OR_RETURN(attempt, read_string(o, "attempt"));
  return o;
}

void write_action_members(JsonWriter& j, const ActionMembers& a) {
  if (a.call) {
    j.raw("call", *a.call);
  } else {
    j.str("script_sha256", a.script_sha256.value_or(""));
  }
  j.num("exit_code", a.exit_code);
  str_or_null(j, "error", a.error);
  j.boolean("truncated", a.truncated).raw("resolved", strings_json(a.resolved));
}

Status read_action_members(const json::Object& o, ActionMembers& a) {
  if (auto call = o.optional_value("call")) {
    a.call = call->minified();
  } else {
    AURA_ASSIGN_OR_RETURN(a.script_sha256, read_hex(o, "script_sha256"));
  }
  AURA_ASSIGN_OR_RETURN(a.exit_code, o.required_i64("exit_code"));
  AURA_ASSIGN_OR_RETURN(a.error, read_string_or_null(o, "error"));
  std::optional<bool> truncated;
  AURA_ASSIGN_OR_RETURN(truncated, o.optional_bool("truncated"));
  a.truncated = truncated.value_or(false);
  std::optional<json::Array> resolved;
  AURA_ASSIGN_OR_RETURN(resolved, o.optional_array("resolved"));
  if (resolved) AURA_ASSIGN_OR_RETURN(a.resolved, read_strings(*resolved));
  return Status::ok();
}

}  // namespace aura::events::codec
