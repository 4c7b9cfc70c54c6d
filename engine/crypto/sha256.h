// SHA-256 behind one interface, computed by OpenSSL's libcrypto (which uses the
// CPU's SHA extensions where present). Everything in AURA hashes through here.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace aura {

using Digest = std::array<uint8_t, 32>;

inline std::span<const uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}
inline std::string_view as_chars(std::span<const uint8_t> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// Incremental SHA-256. Not thread-safe; one per thread. finish() resets it for reuse.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  Sha256& update(std::span<const uint8_t> bytes);
  Sha256& update(std::string_view bytes) { return update(as_bytes(bytes)); }
  Digest finish();

 private:
  void* ctx_;  // SHA256_CTX
};

// One-shot SHA-256. Thread-safe (uses a per-thread context).
Digest sha256(std::span<const uint8_t> bytes);
inline Digest sha256(std::string_view bytes) { return sha256(as_bytes(bytes)); }

std::string to_hex(std::span<const uint8_t> bytes);
// Parses exactly 64 lowercase or uppercase hex digits.
std::optional<Digest> digest_from_hex(std::string_view hex);
// True for exactly 64 lowercase hex digits: a digest as the lab writes it.
bool is_lower_hex64(std::string_view s);

}  // namespace aura
