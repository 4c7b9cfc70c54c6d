#include "engine/crypto/sha256.h"

#include <openssl/evp.h>

#include <cstdlib>

namespace aura {
namespace {

const EVP_MD* sha256_md() {
  // Fetched once: avoids a provider lookup on every hash.
  static const EVP_MD* md = [] {
    EVP_MD* m = EVP_MD_fetch(nullptr, "SHA256", nullptr);
    if (m == nullptr) std::abort();
    return m;
  }();
  return md;
}

EVP_MD_CTX* new_ctx() {
  EVP_MD_CTX* c = EVP_MD_CTX_new();
  if (c == nullptr || EVP_DigestInit_ex(c, sha256_md(), nullptr) != 1) std::abort();
  return c;
}

}  // namespace

Sha256::Sha256() : ctx_(new_ctx()) {}
Sha256::~Sha256() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

Sha256& Sha256::update(std::span<const uint8_t> bytes) {
  if (EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), bytes.data(), bytes.size()) != 1) {
    std::abort();
  }
  return *this;
}

Digest Sha256::finish() {
  Digest d;
  unsigned int len = 0;
  auto* c = static_cast<EVP_MD_CTX*>(ctx_);
  if (EVP_DigestFinal_ex(c, d.data(), &len) != 1 || len != d.size()) std::abort();
  if (EVP_DigestInit_ex(c, sha256_md(), nullptr) != 1) std::abort();
  return d;
}

Digest sha256(std::span<const uint8_t> bytes) {
  thread_local Sha256 h;
  return h.update(bytes).finish();
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

}  // namespace aura
