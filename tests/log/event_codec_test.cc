#include "engine/log/event_codec.h"

#include <doctest/doctest.h>

#include "engine/events/event_types.h"
#include "engine/log/event_format.h"

using namespace aura;

namespace {
const char* kVectorRecord =
    "010000000000000001000000000000000000000000000000000000000000000000000000000000000000060a2418"
    "1e40000000000a617474656d70742f34320000000f617474656d70742e737461727465640000000d6c6561726e65"
    "723a616c6963650000001a7b227363656e6172696f223a224f31222c2273656564223a377df61d543c52f18b7051"
    "7cbc227c9b9672e7e4310ced08cdb3ab2dfdebb0aa8af2";
const char* kVectorHash = "f61d543c52f18b70517cbc227c9b9672e7e4310ced08cdb3ab2dfdebb0aa8af2";

std::string unhex(std::string_view h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2)
    out.push_back(char(std::stoi(std::string(h.substr(i, 2)), nullptr, 16)));
  return out;
}

EventDraft vector_draft() {
  return {"attempt/42", events::kAttemptStarted, "learner:alice", R"({"scenario":"O1","seed":7})"};
}
}  // namespace

TEST_CASE(
    "event codec: the documented test vector (docs/FORMAT.md), computed independently in Python") {
  Digest h;
  std::string rec = encode_record(1, Digest{}, 1700000000000000ull, vector_draft(), &h);
  CHECK(to_hex(h) == kVectorHash);
  CHECK(to_hex(as_bytes(rec)) == kVectorRecord);
  CHECK(to_hex(event_hash(1, Digest{}, 1700000000000000ull, "attempt/42", events::kAttemptStarted,
                          "learner:alice", R"({"scenario":"O1","seed":7})")) == kVectorHash);
  // The second event of the vector chains on the first.
  CHECK(to_hex(event_hash(2, h, 1700000000000001ull, "attempt/42", "prediction.recorded",
                          "learner:alice", "{}")) ==
        "0a8c0626bf6a85779e0f3c623f39afd0d885688167f74232a4c2341d745ead1c");
}

TEST_CASE("event codec: decode returns the exact fields and hash") {
  auto v = decode_record(unhex(kVectorRecord));
  REQUIRE(v.ok());
  CHECK(v->seq == 1);
  CHECK(v->ts_us == 1700000000000000ull);
  CHECK(v->stream == "attempt/42");
  CHECK(v->type == events::kAttemptStarted);
  CHECK(v->actor == "learner:alice");
  CHECK(v->payload == R"({"scenario":"O1","seed":7})");
  CHECK(to_hex(v->hash) == kVectorHash);
  CHECK(compute_record_hash(unhex(kVectorRecord)) == v->hash);
}

TEST_CASE("event codec: a flipped byte anywhere in the body changes the computed hash") {
  const std::string rec = unhex(kVectorRecord);
  const Digest stored = decode_record(rec)->hash;
  for (size_t i = 1; i < rec.size() - 32; ++i) {
    std::string bad = rec;
    bad[i] ^= 0x01;
    auto v = decode_record(bad);
    if (v.ok()) CHECK(compute_record_hash(bad) != stored);
  }
}

TEST_CASE("event codec: malformed records are refused with a reason") {
  const std::string rec = unhex(kVectorRecord);
  CHECK(decode_record(rec.substr(0, 50)).status().code() == ErrorCode::kCorruption);
  std::string v2 = rec;
  v2[0] = 2;
  CHECK(decode_record(v2).status().message().find("unknown version 2") != std::string::npos);
  std::string longer = rec;
  longer.insert(rec.size() - 32, "x");  // a byte after the payload
  CHECK_FALSE(decode_record(longer).ok());
  std::string biglen = rec;
  biglen[event_format::kStreamLenOffset] = char(0x7f);  // stream length far past the record
  CHECK(decode_record(biglen).status().message().find("stream length") != std::string::npos);
}

TEST_CASE("event codec: drafts are validated field by field") {
  EventDraft d = vector_draft();
  CHECK(validate_draft(d).is_ok());
  struct Case {
    const char* name;
    void (*mutate)(EventDraft&);
    const char* expect;
  } cases[] = {
      {"empty type", [](EventDraft& e) { e.type = ""; }, "type: empty"},
      {"upper-case type", [](EventDraft& e) { e.type = "Attempt"; }, "type: character"},
      {"empty stream", [](EventDraft& e) { e.stream = ""; }, "stream: empty"},
      {"stream with space", [](EventDraft& e) { e.stream = "a b"; }, "stream: character"},
      {"long actor", [](EventDraft& e) { e.actor = std::string(201, 'a'); }, "actor: 201 bytes"},
      {"payload not JSON", [](EventDraft& e) { e.payload = "{oops"; },
       "payload: not valid UTF-8 JSON"},
      {"payload not UTF-8", [](EventDraft& e) { e.payload = "{\"a\":\"\xff\"}"; },
       "payload: not valid UTF-8 JSON"},
      {"payload an array", [](EventDraft& e) { e.payload = "[1]"; }, "payload: not a JSON object"},
      {"payload empty", [](EventDraft& e) { e.payload = ""; }, "payload: not valid"},
      {"payload trailing junk", [](EventDraft& e) { e.payload = "{} {}"; }, "payload: not valid"},
      {"payload too large",
       [](EventDraft& e) {
         e.payload = "{\"a\":\"" + std::string(event_format::kMaxPayloadBytes, 'x') + "\"}";
       },
       "payload: 1048584 bytes, limit 1048576"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    EventDraft e = d;
    c.mutate(e);
    Status s = validate_draft(e);
    CHECK(s.code() == ErrorCode::kInvalidArgument);
    CHECK(s.message().find(c.expect) != std::string::npos);
  }
}
