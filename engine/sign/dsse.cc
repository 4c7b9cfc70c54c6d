#include "engine/sign/dsse.h"

#include <simdjson.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "engine/crypto/ed25519.h"
#include "engine/crypto/sha256.h"
#include "engine/sign/dsse_format.h"

namespace aura {
namespace {

namespace df = dsse_format;

void append_json_string(std::string& out, std::string_view s) {
  out.push_back('"');
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out.append(buf);
    } else {
      out.push_back(c);
    }
  }
  out.push_back('"');
}

// For error messages: untrusted text, shortened and reduced to printable ASCII.
std::string printable(std::string_view s) {
  constexpr size_t kMax = 80;
  std::string out = "\"";
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    const auto u = static_cast<unsigned char>(s[i]);
    out.push_back(u >= 0x20 && u < 0x7f && s[i] != '"' ? s[i] : '?');
  }
  if (s.size() > kMax) out.append("...");
  out.push_back('"');
  return out;
}

std::string note_key_label(const NoteVerifierKey& k) {
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", k.key_id);
  return k.name + "+" + hex;
}

struct EnvelopeSig {
  std::optional<std::string> keyid;
  std::string sig;  // decoded
};

struct Envelope {
  std::optional<std::string> payload_type;
  std::optional<std::string> payload;  // decoded
  std::vector<EnvelopeSig> sigs;
};

// Calls `on_member(key, value)` for each member of `obj`, refusing duplicates and members
// not in `allowed` (a duplicate could make two parsers see different envelopes).
template <class F>
Status for_each_member(simdjson::dom::object obj, std::span<const std::string_view> allowed,
                       std::string_view where, F on_member) {
  std::vector<std::string_view> seen;
  for (auto field : obj) {
    if (std::find(allowed.begin(), allowed.end(), field.key) == allowed.end()) {
      return Status::invalid("dsse: " + std::string(where) + " has unknown member " +
                             printable(field.key));
    }
    if (std::find(seen.begin(), seen.end(), field.key) != seen.end()) {
      return Status::invalid("dsse: " + std::string(where) + " has duplicate member " +
                             printable(field.key));
    }
    seen.push_back(field.key);
    AURA_RETURN_IF_ERROR(on_member(field.key, field.value));
  }
  return Status::ok();
}

Result<std::string_view> get_string(simdjson::dom::element e, std::string_view what) {
  std::string_view s;
  if (e.get_string().get(s) != simdjson::SUCCESS) {
    return Status::invalid("dsse: " + std::string(what) + " is not a string");
  }
  return s;
}

Result<std::string> get_base64(simdjson::dom::element e, std::string_view what) {
  auto s = get_string(e, what);
  if (!s.ok()) return s.status();
  auto bytes = base64_decode(*s);
  if (!bytes) return Status::invalid("dsse: " + std::string(what) + " is not canonical base64");
  return std::move(*bytes);
}

// {"keyid": optional string, "sig": base64}
Result<EnvelopeSig> parse_signature(simdjson::dom::element e) {
  static constexpr std::string_view kMembers[] = {"keyid", "sig"};
  simdjson::dom::object obj;
  if (e.get_object().get(obj) != simdjson::SUCCESS) {
    return Status::invalid("dsse: a signature is not an object");
  }
  EnvelopeSig sig;
  bool have_sig = false;
  AURA_RETURN_IF_ERROR(for_each_member(
      obj, kMembers, "signature", [&](std::string_view key, simdjson::dom::element v) -> Status {
        if (key == "keyid") {
          auto s = get_string(v, "keyid");
          if (!s.ok()) return s.status();
          if (s->size() > df::kMaxKeyIdBytes) return Status::invalid("dsse: keyid is too long");
          sig.keyid = std::string(*s);
          return Status::ok();
        }
        auto bytes = get_base64(v, "sig");
        if (!bytes.ok()) return bytes.status();
        sig.sig = std::move(*bytes);
        have_sig = true;
        return Status::ok();
      }));
  if (!have_sig) return Status::invalid("dsse: a signature has no sig");
  return sig;
}

// Parses the envelope's structure; checks nothing about keys or types.
Result<Envelope> parse_envelope(std::string_view json) {
  static constexpr std::string_view kMembers[] = {"payloadType", "payload", "signatures"};
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  if (auto err = parser.parse(json.data(), json.size()).get(doc)) {
    return Status::invalid(std::string("dsse: envelope is not JSON: ") +
                           simdjson::error_message(err));
  }
  simdjson::dom::object top;
  if (doc.get_object().get(top) != simdjson::SUCCESS) {
    return Status::invalid("dsse: envelope is not a JSON object");
  }
  Envelope env;
  bool have_sigs = false;
  AURA_RETURN_IF_ERROR(for_each_member(
      top, kMembers, "envelope", [&](std::string_view key, simdjson::dom::element v) -> Status {
        if (key == "payloadType") {
          auto s = get_string(v, "payloadType");
          if (!s.ok()) return s.status();
          if (s->size() > df::kMaxPayloadTypeBytes) {
            return Status::invalid("dsse: payloadType is too long");
          }
          env.payload_type = std::string(*s);
        } else if (key == "payload") {
          auto bytes = get_base64(v, "payload");
          if (!bytes.ok()) return bytes.status();
          env.payload = std::move(*bytes);
        } else {
          simdjson::dom::array arr;
          if (v.get_array().get(arr) != simdjson::SUCCESS) {
            return Status::invalid("dsse: signatures is not an array");
          }
          if (arr.size() == 0 || arr.size() > df::kMaxSignatures) {
            return Status::invalid("dsse: signatures must hold 1.." +
                                   std::to_string(df::kMaxSignatures) + " entries, not " +
                                   std::to_string(arr.size()));
          }
          for (simdjson::dom::element e : arr) {
            auto sig = parse_signature(e);
            if (!sig.ok()) return sig.status();
            env.sigs.push_back(std::move(*sig));
          }
          have_sigs = true;
        }
        return Status::ok();
      }));
  if (!env.payload_type) return Status::invalid("dsse: envelope has no payloadType");
  if (!env.payload) return Status::invalid("dsse: envelope has no payload");
  if (!have_sigs) return Status::invalid("dsse: envelope has no signatures");
  return env;
}

}  // namespace

std::string dsse_pae(std::string_view payload_type, std::string_view body) {
  std::string out;
  out.reserve(df::kPaePrefix.size() + payload_type.size() + body.size() + 48);
  out.append(df::kPaePrefix).append(" ").append(std::to_string(payload_type.size()));
  out.append(" ").append(payload_type).append(" ").append(std::to_string(body.size()));
  out.append(" ").append(body);
  return out;
}

std::string dsse_sign(std::string_view payload_type, std::string_view payload,
                      const NoteSigner& signer) {
  const Ed25519Signature sig = signer.sign(dsse_pae(payload_type, payload));
  std::string out = "{\"payloadType\":";
  append_json_string(out, payload_type);
  out.append(",\"payload\":\"").append(base64_encode(payload));
  out.append("\",\"signatures\":[{\"keyid\":");
  append_json_string(out, note_key_label(signer.verifier()));
  out.append(",\"sig\":\"").append(base64_encode(sig)).append("\"}]}");
  return out;
}

Result<std::string> dsse_open(std::string_view envelope_json,
                              std::string_view expected_payload_type,
                              std::span<const NoteVerifierKey> known) {
  if (envelope_json.size() > df::kMaxEnvelopeBytes) {
    return Status::invalid("dsse: envelope of " + std::to_string(envelope_json.size()) +
                           " bytes exceeds the limit of " + std::to_string(df::kMaxEnvelopeBytes));
  }
  auto env = parse_envelope(envelope_json);
  if (!env.ok()) return env.status();

  // The payload type is the signature's context: a receipt's signature must never make a
  // snapshot manifest or a package verify.
  if (*env->payload_type != expected_payload_type) {
    return Status::invalid("dsse: payloadType is " + printable(*env->payload_type) + ", expected " +
                           printable(expected_payload_type));
  }

  const std::string pae = dsse_pae(expected_payload_type, *env->payload);
  const auto verifies = [&](const NoteVerifierKey& k, const std::string& sig) {
    return ed25519_verify(k.key, as_bytes(pae), as_bytes(sig));
  };
  bool verified = false;
  for (const EnvelopeSig& sig : env->sigs) {
    if (!sig.keyid || sig.keyid->empty()) {
      // No key hint: it counts if some known key verifies it and is ignored otherwise.
      for (const NoteVerifierKey& k : known) verified = verified || verifies(k, sig.sig);
      continue;
    }
    for (const NoteVerifierKey& k : known) {
      if (note_key_label(k) != *sig.keyid) continue;
      if (!verifies(k, sig.sig)) {
        return Status::corruption("dsse: invalid signature for key " + note_key_label(k));
      }
      verified = true;
    }
  }
  if (!verified) return Status::corruption("dsse: no signature by a known key");
  // Exactly the bytes the signature covered; the caller parses these and nothing else.
  return std::move(*env->payload);
}

}  // namespace aura
