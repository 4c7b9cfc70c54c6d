#include "engine/events/access_events.h"

#include "engine/events/payload_codec.h"

namespace aura::events {

std::string AttemptAccess::encode() const {
  return codec::header(attempt).str("token_sha256", token_sha256).done();
}

Result<AttemptAccess> AttemptAccess::decode(PayloadReader& r, const EventView& e) {
  AttemptAccess p;
  json::Object o;
  AURA_ASSIGN_OR_RETURN(o, codec::open_attempt(r, e, p.attempt));
  AURA_ASSIGN_OR_RETURN(p.token_sha256, codec::read_hex(o, "token_sha256"));
  AURA_RETURN_IF_ERROR(o.done());
  return p;
}

}  // namespace aura::events
