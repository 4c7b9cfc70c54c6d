#include "engine/events/payload_reader.h"

#include <algorithm>

namespace aura::events {

namespace {

json::Limits payload_limits() {
  json::Limits l;
  l.style = json::PathStyle::kMember;
  return l;
}

}  // namespace

std::string_view attempt_id_of_stream(std::string_view stream) {
  if (stream.size() != kAttemptStreamPrefix.size() + kAttemptIdHexDigits ||
      !stream.starts_with(kAttemptStreamPrefix)) {
    return {};
  }
  std::string_view id = stream.substr(kAttemptStreamPrefix.size());
  const bool hex = std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
  });
  return hex ? id : std::string_view();
}

PayloadReader::PayloadReader() : reader_(payload_limits()) {}

Result<json::Object> PayloadReader::open(const EventView& event) {
  type_ = std::string(event.type);
  payload_ = event.payload;
  reader_.set_prefix(type_ + ": ");
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, reader_.parse_object(event.payload));
  if (o.first_name() != "v") return o.error("v", "not the first member");
  uint64_t v = 0;
  AURA_ASSIGN_OR_RETURN(v, o.required_u64("v"));
  if (v != kPayloadVersion)
    return o.error("v", "version " + std::to_string(v) + " is not supported");
  if (std::string_view id = attempt_id_of_stream(event.stream); !id.empty()) {
    std::string_view attempt;
    AURA_ASSIGN_OR_RETURN(attempt, o.required_string("attempt"));
    if (attempt != id) {
      return o.error("attempt", "\"" + std::string(attempt.substr(0, 64)) +
                                    "\" is not the stream's " + std::string(id));
    }
  }
  // The refs are read by refs(), with the log's own parser.
  (void)o.optional_value("refs");
  return o;
}

Result<std::vector<EvidenceRef>> PayloadReader::refs() const {
  auto refs = extract_refs(payload_);
  if (!refs.ok()) return refs.status().with_context(type_);
  return refs;
}

}  // namespace aura::events
