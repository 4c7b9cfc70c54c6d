#include "engine/sign/dsse.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/sign/dsse_format.h"

using namespace aura;

namespace {

constexpr std::string_view kReceipt = dsse_format::kPayloadTypeReceipt;
constexpr std::string_view kSnapshot = dsse_format::kPayloadTypeSnapshot;

// The AURA vector documented in docs/formats/dsse.md (key from docs/formats/keys.md).
constexpr std::string_view kAuraSkey =
    "PRIVATE+KEY+aura.lab/example+7797854e+AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";
constexpr std::string_view kAuraEnvelope =
    R"({"payloadType":"application/vnd.aura.receipt+json","payload":"eyJoZWxsbyI6IndvcmxkIn0=",)"
    R"("signatures":[{"keyid":"aura.lab/example+7797854e","sig":"ggTrkOZQNd24C3uxRBY+1RaPzLmq+)"
    R"(y4ujnNOiN9jZNM5TaFis/uWTp+5IrWWT7HtCMZp+Xf3isEeN+k0AZJNCg=="}]})";

NoteSigner aura_signer() {
  auto s = parse_signer_key(kAuraSkey);
  REQUIRE(s.ok());
  return *s;
}

std::string replace(std::string s, std::string_view from, std::string_view to) {
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("dsse pae: the DSSE specification vector") {
  CHECK(dsse_pae("http://example.com/HelloWorld", "hello world") ==
        "DSSEv1 29 http://example.com/HelloWorld 11 hello world");
  CHECK(dsse_pae("", "") == "DSSEv1 0  0 ");
  CHECK(dsse_pae(kReceipt, R"({"hello":"world"})") ==
        R"(DSSEv1 33 application/vnd.aura.receipt+json 17 {"hello":"world"})");
}

TEST_CASE(
    "dsse: signing the documented payload with the documented key gives the documented "
    "envelope, which opens") {
  const NoteSigner s = aura_signer();
  CHECK(dsse_sign(kReceipt, R"({"hello":"world"})", s) == kAuraEnvelope);
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  auto p = dsse_open(kAuraEnvelope, kReceipt, known);
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  CHECK(*p == R"({"hello":"world"})");
}

TEST_CASE("dsse: sign then open returns exactly the payload bytes, binary included") {
  const NoteSigner s("aura.lab/test", Ed25519KeyPair::generate());
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  const std::string payload("\x00\x01\xff{\"a\":1}\n", 11);
  auto p = dsse_open(dsse_sign(kReceipt, payload, s), kReceipt, known);
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  CHECK(*p == payload);
  auto empty = dsse_open(dsse_sign(kReceipt, "", s), kReceipt, known);
  REQUIRE(empty.ok());
  CHECK(empty->empty());
}

TEST_CASE("dsse: an envelope signed for one payload type does not open as another") {
  const NoteSigner s = aura_signer();
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  auto r = dsse_open(kAuraEnvelope, kSnapshot, known);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "dsse: payloadType is \"application/vnd.aura.receipt+json\", expected "
        "\"application/vnd.aura.snapshot+json\"");
  // Relabelling the envelope does not help: the signature covers the type through PAE.
  const std::string relabelled = replace(std::string(kAuraEnvelope), kReceipt, kSnapshot);
  auto r2 = dsse_open(relabelled, kSnapshot, known);
  REQUIRE_FALSE(r2.ok());
  CHECK(r2.status().code() == ErrorCode::kCorruption);
}

TEST_CASE("dsse: a tampered payload is refused") {
  const NoteSigner s = aura_signer();
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  // {"hello":"world"} -> {"hello":"World"}
  const std::string tampered =
      replace(std::string(kAuraEnvelope), "eyJoZWxsbyI6IndvcmxkIn0=", "eyJoZWxsbyI6IldvcmxkIn0=");
  auto r = dsse_open(tampered, kReceipt, known);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "dsse: invalid signature for key aura.lab/example+7797854e");
}

TEST_CASE("dsse: a tampered signature is refused") {
  const NoteSigner s = aura_signer();
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  CHECK_FALSE(dsse_open(replace(std::string(kAuraEnvelope), "ggTr", "ggTs"), kReceipt, known).ok());
  CHECK_FALSE(
      dsse_open(replace(std::string(kAuraEnvelope), "AZJNCg==", "AZJNCA=="), kReceipt, known).ok());
}

TEST_CASE(
    "dsse: signatures only by unknown keys are refused; an unknown one beside a known one "
    "is ignored") {
  const NoteSigner lab = aura_signer();
  const NoteSigner other("aura.lab/other", Ed25519KeyPair::generate());
  const std::vector<NoteVerifierKey> only_other = {other.verifier()};
  auto r = dsse_open(kAuraEnvelope, kReceipt, only_other);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() == "dsse: no signature by a known key");
  CHECK_FALSE(dsse_open(kAuraEnvelope, kReceipt, std::span<const NoteVerifierKey>()).ok());

  // Add a second signature entry from an unknown key id with junk bytes.
  const std::string two = replace(std::string(kAuraEnvelope), "\"signatures\":[",
                                  R"("signatures":[{"keyid":"someone+00000000","sig":"AAAA"},)");
  const std::vector<NoteVerifierKey> known = {lab.verifier()};
  CHECK(dsse_open(two, kReceipt, known).ok());
}

TEST_CASE("dsse: a signature without keyid counts if a known key verifies it") {
  const NoteSigner s = aura_signer();
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  const std::string no_keyid =
      replace(std::string(kAuraEnvelope), R"("keyid":"aura.lab/example+7797854e",)", "");
  auto p = dsse_open(no_keyid, kReceipt, known);
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  const NoteSigner other("aura.lab/other", Ed25519KeyPair::generate());
  const std::vector<NoteVerifierKey> only_other = {other.verifier()};
  CHECK_FALSE(dsse_open(no_keyid, kReceipt, only_other).ok());
}

TEST_CASE("dsse: a payload type with characters JSON must escape round-trips") {
  const NoteSigner s("aura.lab/test", Ed25519KeyPair::generate());
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  const std::string type = "weird\"type\\with\ncontrols";
  auto p = dsse_open(dsse_sign(type, "x", s), type, known);
  REQUIRE_MESSAGE(p.ok(), p.status().message());
  CHECK(*p == "x");
}

TEST_CASE("dsse: malformed envelopes are refused") {
  const NoteSigner s = aura_signer();
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  const std::string env(kAuraEnvelope);
  const std::string sig_obj =
      R"({"keyid":"aura.lab/example+7797854e","sig":"ggTrkOZQNd24C3uxRBY+1RaPzLmq+y4ujnNOiN9jZNM5)"
      R"(TaFis/uWTp+5IrWWT7HtCMZp+Xf3isEeN+k0AZJNCg=="})";
  std::string many = R"({"payloadType":"application/vnd.aura.receipt+json","payload":)"
                     R"("eyJoZWxsbyI6IndvcmxkIn0=","signatures":[)";
  for (int i = 0; i < 17; ++i) many += (i ? "," : "") + sig_obj;
  many += "]}";
  const std::vector<std::string> bad = {
      "",
      "not json",
      "[]",
      env.substr(0, env.size() - 1),  // truncated
      env + "x",                      // trailing junk
      replace(env, R"("payloadType":"application/vnd.aura.receipt+json",)", ""),
      replace(env, R"("payload":"eyJoZWxsbyI6IndvcmxkIn0=",)", ""),
      replace(env, R"(,"signatures":[)" + sig_obj + "]", ""),
      replace(env, "\"signatures\":[" + sig_obj + "]", R"("signatures":[])"),
      replace(env, "\"signatures\":[" + sig_obj + "]", R"("signatures":{})"),
      replace(env, "\"signatures\":[" + sig_obj + "]", R"("signatures":["x"])"),
      replace(env, "\"signatures\":[" + sig_obj + "]",
              R"("signatures":[{"keyid":"aura.lab/example+7797854e"}])"),
      replace(env, R"("keyid":"aura.lab/example+7797854e")", R"("keyid":7)"),
      replace(env, R"("keyid":)", R"("extra":1,"keyid":)"),
      replace(env, "eyJoZWxsbyI6IndvcmxkIn0=", "eyJoZWxsbyI6IndvcmxkIn0"),   // no padding
      replace(env, "eyJoZWxsbyI6IndvcmxkIn0=", "eyJoZWxsbyI6IndvcmxkIn1="),  // non-canonical
      replace(env, R"("payloadType":"application/vnd.aura.receipt+json")", R"("payloadType":1)"),
      replace(env, "{\"payloadType\"", R"({"payload":"eA==","payloadType")"),  // duplicate
      replace(env, "{\"payloadType\"", R"({"unknown":true,"payloadType")"),
      replace(env, "AZJNCg==", "AZJNCg"),
      many,
  };
  for (const std::string& e : bad) {
    auto r = dsse_open(e, kReceipt, known);
    CHECK_MESSAGE(!r.ok(), e);
    if (!r.ok()) CHECK_MESSAGE(r.status().code() == ErrorCode::kInvalidArgument, e);
  }
}

TEST_CASE("dsse: an envelope over the size limit is refused before parsing") {
  const NoteSigner s = aura_signer();
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  std::string big(kAuraEnvelope);
  big.append(dsse_format::kMaxEnvelopeBytes, ' ');
  auto r = dsse_open(big, kReceipt, known);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("exceeds the limit") != std::string::npos);
}
