#include "engine/crypto/sha256.h"

// The low-level SHA-256 calls: deprecated in OpenSSL 3 in favour of EVP, but they use the
// same CPU SHA extensions without EVP's per-call dispatch, which dominates for the short
// inputs the log hashes by the million (Merkle nodes are 33 and 65 bytes).
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include <cstdlib>
#include <new>

namespace aura {

Sha256::Sha256() : ctx_(new SHA256_CTX) { SHA256_Init(static_cast<SHA256_CTX*>(ctx_)); }
Sha256::~Sha256() { delete static_cast<SHA256_CTX*>(ctx_); }

Sha256& Sha256::update(std::span<const uint8_t> bytes) {
  SHA256_Update(static_cast<SHA256_CTX*>(ctx_), bytes.data(), bytes.size());
  return *this;
}

Digest Sha256::finish() {
  Digest d;
  auto* c = static_cast<SHA256_CTX*>(ctx_);
  SHA256_Final(d.data(), c);
  SHA256_Init(c);
  return d;
}

Digest sha256(std::span<const uint8_t> bytes) {
  // Not OpenSSL's one-shot SHA256(): in OpenSSL 3 it fetches a provider on every call.
  SHA256_CTX c;
  SHA256_Init(&c);
  SHA256_Update(&c, bytes.data(), bytes.size());
  Digest d;
  SHA256_Final(d.data(), &c);
  return d;
}
std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(bytes.size() * 2, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    out[2 * i] = kDigits[bytes[i] >> 4];
    out[2 * i + 1] = kDigits[bytes[i] & 0xf];
  }
  return out;
}

std::optional<Digest> digest_from_hex(std::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  Digest d;
  for (size_t i = 0; i < 32; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    d[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return d;
}

bool is_lower_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace aura
