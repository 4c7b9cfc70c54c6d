#include "engine/crypto/ed25519.h"

#include <doctest/doctest.h>

#include "engine/crypto/sha256.h"

using namespace aura;

TEST_CASE("ed25519: RFC 8032 test 1 signature") {
  Ed25519Seed seed =
      *digest_from_hex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
  auto kp = Ed25519KeyPair::from_seed(seed);
  CHECK(to_hex(kp.public_key()) ==
        "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
  auto sig = kp.sign(std::string_view());
  CHECK(to_hex(sig) ==
        "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
        "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b");
  CHECK(ed25519_verify(kp.public_key(), {}, sig));
}

TEST_CASE("ed25519: a flipped message or signature bit fails") {
  auto kp = Ed25519KeyPair::generate();
  auto sig = kp.sign("checkpoint");
  CHECK(ed25519_verify(kp.public_key(), as_bytes("checkpoint"), sig));
  CHECK_FALSE(ed25519_verify(kp.public_key(), as_bytes("checkpoinT"), sig));
  sig[5] ^= 1;
  CHECK_FALSE(ed25519_verify(kp.public_key(), as_bytes("checkpoint"), sig));
  CHECK_FALSE(ed25519_verify(kp.public_key(), as_bytes("checkpoint"), std::span(sig).first(63)));
}

TEST_CASE("base64: standard padded, strict decode") {
  CHECK(base64_encode(std::string_view("hello")) == "aGVsbG8=");
  CHECK(base64_decode("aGVsbG8=") == std::optional<std::string>("hello"));
  CHECK_FALSE(base64_decode("aGVsbG8").has_value());    // missing padding
  CHECK_FALSE(base64_decode("aGVs bG8=").has_value());  // stray space
  CHECK_FALSE(base64_decode("aGVsbG8-").has_value());   // URL alphabet
}
