#include "engine/crypto/sha256.h"

#include <doctest/doctest.h>

#include <string>

using aura::sha256;
using aura::to_hex;

TEST_CASE("sha256: known answers (FIPS 180-2)") {
  CHECK(to_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(to_hex(sha256("abc")) ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(to_hex(sha256(std::string(1000000, 'a'))) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: incremental equals one-shot and resets after finish") {
  aura::Sha256 h;
  h.update("ab").update("c");
  CHECK(h.finish() == sha256("abc"));
  CHECK(h.update("abc").finish() == sha256("abc"));
}

TEST_CASE("hex: digest round-trips and malformed hex is refused") {
  auto d = sha256("x");
  CHECK(aura::digest_from_hex(to_hex(d)) == d);
  CHECK_FALSE(aura::digest_from_hex("abc").has_value());
  CHECK_FALSE(aura::digest_from_hex(std::string(64, 'g')).has_value());
}

TEST_CASE("is_lower_hex64: 64 lowercase hex digits only") {
  CHECK(aura::is_lower_hex64(std::string(64, 'f')));
  CHECK_FALSE(aura::is_lower_hex64(std::string(64, 'F')));
  CHECK_FALSE(aura::is_lower_hex64(std::string(63, 'f')));
  CHECK_FALSE(aura::is_lower_hex64(std::string(63, 'f') + "g"));
}
