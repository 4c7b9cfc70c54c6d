// Ed25519 signing and verification (libsodium), base64 and randomness.
// Callers sign bytes that already include a context naming what is signed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace aura {

using Ed25519PublicKey = std::array<uint8_t, 32>;
using Ed25519Seed = std::array<uint8_t, 32>;
using Ed25519Signature = std::array<uint8_t, 64>;

// A key pair. The secret half never leaves this object except through seed().
class Ed25519KeyPair {
 public:
  static Ed25519KeyPair generate();
  static Ed25519KeyPair from_seed(const Ed25519Seed& seed);
  ~Ed25519KeyPair();

  Ed25519KeyPair(const Ed25519KeyPair&) = default;
  Ed25519KeyPair& operator=(const Ed25519KeyPair&) = default;

  const Ed25519PublicKey& public_key() const { return public_; }
  Ed25519Seed seed() const;
  Ed25519Signature sign(std::span<const uint8_t> message) const;
  Ed25519Signature sign(std::string_view message) const;

 private:
  Ed25519KeyPair() = default;
  std::array<uint8_t, 64> secret_{};  // libsodium's seed || public key
  Ed25519PublicKey public_{};
};

bool ed25519_verify(const Ed25519PublicKey& key, std::span<const uint8_t> message,
                    std::span<const uint8_t> signature);

// Standard base64 alphabet with padding (RFC 4648 §4).
std::string base64_encode(std::span<const uint8_t> bytes);
inline std::string base64_encode(std::string_view s) {
  return base64_encode({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}
// Strict: rejects other alphabets, missing padding and any trailing bytes.
std::optional<std::string> base64_decode(std::string_view text);

void random_bytes(std::span<uint8_t> out);

// Must be called once before any function here; safe to call again. Aborts if
// libsodium cannot initialise (no entropy source): fail closed.
void crypto_init();

}  // namespace aura
