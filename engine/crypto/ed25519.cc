#include "engine/crypto/ed25519.h"

#include <sodium.h>

#include <cstdlib>

namespace aura {

void crypto_init() {
  static const bool ok = sodium_init() >= 0;
  if (!ok) std::abort();
}

Ed25519KeyPair Ed25519KeyPair::generate() {
  crypto_init();
  Ed25519Seed seed;
  randombytes_buf(seed.data(), seed.size());
  Ed25519KeyPair kp = from_seed(seed);
  sodium_memzero(seed.data(), seed.size());
  return kp;
}

Ed25519KeyPair Ed25519KeyPair::from_seed(const Ed25519Seed& seed) {
  crypto_init();
  Ed25519KeyPair kp;
  crypto_sign_seed_keypair(kp.public_.data(), kp.secret_.data(), seed.data());
  return kp;
}

Ed25519KeyPair::~Ed25519KeyPair() { sodium_memzero(secret_.data(), secret_.size()); }

Ed25519Seed Ed25519KeyPair::seed() const {
  Ed25519Seed s;
  crypto_sign_ed25519_sk_to_seed(s.data(), secret_.data());
  return s;
}

Ed25519Signature Ed25519KeyPair::sign(std::span<const uint8_t> message) const {
  Ed25519Signature sig;
  crypto_sign_detached(sig.data(), nullptr, message.data(), message.size(), secret_.data());
  return sig;
}

Ed25519Signature Ed25519KeyPair::sign(std::string_view message) const {
  return sign({reinterpret_cast<const uint8_t*>(message.data()), message.size()});
}

bool ed25519_verify(const Ed25519PublicKey& key, std::span<const uint8_t> message,
                    std::span<const uint8_t> signature) {
  crypto_init();
  if (signature.size() != crypto_sign_BYTES) return false;
  return crypto_sign_verify_detached(signature.data(), message.data(), message.size(),
                                     key.data()) == 0;
}

std::string base64_encode(std::span<const uint8_t> bytes) {
  crypto_init();
  const size_t len = sodium_base64_ENCODED_LEN(bytes.size(), sodium_base64_VARIANT_ORIGINAL);
  std::string out(len, '\0');
  sodium_bin2base64(out.data(), len, bytes.data(), bytes.size(), sodium_base64_VARIANT_ORIGINAL);
  out.resize(len - 1);  // drop the terminating NUL
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  crypto_init();
  std::string out(text.size() / 4 * 3 + 3, '\0');
  size_t out_len = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                        text.size(), nullptr, &out_len, &end,
                        sodium_base64_VARIANT_ORIGINAL) != 0) {
    return std::nullopt;
  }
  if (end != text.data() + text.size()) return std::nullopt;
  out.resize(out_len);
  return out;
}

void random_bytes(std::span<uint8_t> out) {
  crypto_init();
  randombytes_buf(out.data(), out.size());
}

}  // namespace aura
