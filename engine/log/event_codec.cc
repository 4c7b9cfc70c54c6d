#include "engine/log/event_codec.h"

#include <simdjson.h>

#include <cstring>

#include "engine/log/event_format.h"

namespace aura {
namespace ef = event_format;

namespace {

void put_u32be(std::string& out, uint32_t v) {
  char b[4] = {char(v >> 24), char(v >> 16), char(v >> 8), char(v)};
  out.append(b, 4);
}

uint32_t get_u32be(const char* p) {
  auto u = reinterpret_cast<const uint8_t*>(p);
  return uint32_t(u[0]) << 24 | uint32_t(u[1]) << 16 | uint32_t(u[2]) << 8 | u[3];
}

Digest hash_body(std::string_view body) {
  thread_local Sha256 h;
  return h.update(ef::kHashDomain).update(body).finish();
}

void put_lp(std::string& out, std::string_view x) {
  put_u32be(out, static_cast<uint32_t>(x.size()));
  out.append(x);
}

// Field names use a restricted alphabet so that logs, keys and paths built from
// them stay unambiguous.
Status check_name(std::string_view field, std::string_view v, size_t max, bool lower_only,
                  std::string_view extra) {
  if (v.empty()) return Status::invalid(std::string(field) + ": empty");
  if (v.size() > max) {
    return Status::invalid(std::string(field) + ": " + std::to_string(v.size()) + " bytes, limit " +
                           std::to_string(max));
  }
  for (char c : v) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              (!lower_only && c >= 'A' && c <= 'Z') || extra.find(c) != std::string_view::npos;
    if (!ok) {
      return Status::invalid(std::string(field) + ": character 0x" +
                             to_hex({reinterpret_cast<const uint8_t*>(&c), 1}) + " not allowed");
    }
  }
  return Status::ok();
}

}  // namespace

void put_u64be(std::string& out, uint64_t v) {
  char b[8];
  for (int i = 7; i >= 0; --i, v >>= 8) b[i] = char(v & 0xff);
  out.append(b, 8);
}

uint64_t get_u64be(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | uint8_t(p[i]);
  return v;
}

std::string seq_key(uint64_t seq) {
  std::string k;
  put_u64be(k, seq);
  return k;
}

Status validate_draft(const EventDraft& d) {
  AURA_RETURN_IF_ERROR(check_name("stream", d.stream, ef::kMaxStreamBytes, false, "._:/-"));
  AURA_RETURN_IF_ERROR(check_name("type", d.type, ef::kMaxTypeBytes, true, "._-"));
  AURA_RETURN_IF_ERROR(check_name("actor", d.actor, ef::kMaxActorBytes, false, "._:/@-"));
  if (d.payload.size() > ef::kMaxPayloadBytes) {
    return Status::invalid("payload: " + std::to_string(d.payload.size()) + " bytes, limit " +
                           std::to_string(ef::kMaxPayloadBytes));
  }
  thread_local simdjson::dom::parser parser;
  simdjson::dom::element root;
  // The DOM parser validates UTF-8 and the whole document.
  auto err = parser.parse(d.payload.data(), d.payload.size()).get(root);
  if (err)
    return Status::invalid(std::string("payload: not valid UTF-8 JSON: ") +
                           simdjson::error_message(err));
  if (!root.is_object()) return Status::invalid("payload: not a JSON object");
  return Status::ok();
}

std::string encode_record(uint64_t seq, const Digest& prev_hash, uint64_t ts_us,
                          const EventDraft& d, Digest* hash_out) {
  std::string r;
  r.reserve(ef::kFixedBytes + d.stream.size() + d.type.size() + d.actor.size() + d.payload.size());
  r.push_back(char(ef::kVersion));
  put_u64be(r, seq);
  r.append(reinterpret_cast<const char*>(prev_hash.data()), prev_hash.size());
  put_u64be(r, ts_us);
  put_lp(r, d.stream);
  put_lp(r, d.type);
  put_lp(r, d.actor);
  put_lp(r, d.payload);
  Digest h = hash_body(std::string_view(r).substr(1));
  r.append(reinterpret_cast<const char*>(h.data()), h.size());
  if (hash_out != nullptr) *hash_out = h;
  return r;
}

Digest compute_record_hash(std::string_view record) {
  return hash_body(record.substr(1, record.size() - 1 - ef::kHashBytes));
}

Result<EventView> decode_record(std::string_view r) {
  if (r.size() < ef::kFixedBytes) {
    return Status::corruption("record: " + std::to_string(r.size()) + " bytes, shorter than " +
                              std::to_string(ef::kFixedBytes));
  }
  if (r.size() > ef::kMaxRecordBytes) {
    return Status::corruption("record: " + std::to_string(r.size()) + " bytes, over the limit");
  }
  if (uint8_t(r[0]) != ef::kVersion) {
    return Status::corruption("record: unknown version " + std::to_string(uint8_t(r[0])));
  }
  EventView v;
  v.seq = get_u64be(r.data() + ef::kSeqOffset);
  std::memcpy(v.prev_hash.data(), r.data() + ef::kPrevHashOffset, ef::kHashBytes);
  v.ts_us = get_u64be(r.data() + ef::kTsOffset);
  size_t pos = ef::kStreamLenOffset;
  const size_t body_end = r.size() - ef::kHashBytes;
  std::string_view* fields[4] = {&v.stream, &v.type, &v.actor, &v.payload};
  static constexpr size_t kMax[4] = {ef::kMaxStreamBytes, ef::kMaxTypeBytes, ef::kMaxActorBytes,
                                     ef::kMaxPayloadBytes};
  static constexpr const char* kName[4] = {"stream", "type", "actor", "payload"};
  for (int i = 0; i < 4; ++i) {
    if (pos + 4 > body_end)
      return Status::corruption(std::string("record: truncated at ") + kName[i]);
    uint32_t len = get_u32be(r.data() + pos);
    pos += 4;
    if (len > kMax[i] || len > body_end - pos) {
      return Status::corruption(std::string("record: ") + kName[i] + " length " +
                                std::to_string(len) + " out of bounds");
    }
    *fields[i] = r.substr(pos, len);
    pos += len;
  }
  if (pos != body_end) return Status::corruption("record: trailing bytes after payload");
  std::memcpy(v.hash.data(), r.data() + body_end, ef::kHashBytes);
  return v;
}

Digest event_hash(uint64_t seq, const Digest& prev_hash, uint64_t ts_us, std::string_view stream,
                  std::string_view type, std::string_view actor, std::string_view payload) {
  std::string m(ef::kHashDomain);
  put_u64be(m, seq);
  m.append(reinterpret_cast<const char*>(prev_hash.data()), prev_hash.size());
  put_u64be(m, ts_us);
  put_lp(m, stream);
  put_lp(m, type);
  put_lp(m, actor);
  put_lp(m, payload);
  return sha256(m);
}

}  // namespace aura
