// Constants of the blob store's on-disk layout and of the EvidenceRef JSON form.
// docs/formats/blobs.md describes both, with a test vector.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace aura::blob_format {

// DIR/sha256/<first 2 hex digits>/<remaining 62 hex digits>: the bytes of the blob, nothing else.
inline constexpr std::string_view kShaDir = "sha256";
// DIR/tmp/: unnamed (O_TMPFILE) or uniquely named temporary files; never read back.
inline constexpr std::string_view kTmpDir = "tmp";
inline constexpr size_t kFanoutHexDigits = 2;
inline constexpr size_t kDigestHexDigits = 64;
static_assert(kFanoutHexDigits < kDigestHexDigits);

inline constexpr uint32_t kDirMode = 0750;
// Blobs are immutable once named: stored read-only.
inline constexpr uint32_t kBlobMode = 0440;

// The payload member that lists every blob an event references.
inline constexpr std::string_view kRefsKey = "refs";
// What the fast path looks for: the key with its quotes, as raw bytes.
inline constexpr std::string_view kRefsKeyQuoted = "\"refs\"";
static_assert(kRefsKeyQuoted.size() == kRefsKey.size() + 2);

inline constexpr size_t kMaxRefs = 1024;
inline constexpr size_t kMaxIdBytes = 128;
inline constexpr size_t kMaxKindBytes = 64;

// Characters allowed in an EvidenceRef's id and kind: [A-Za-z0-9._:-].
constexpr bool is_ref_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}
static_assert(is_ref_char('a') && is_ref_char(':') && !is_ref_char(' ') && !is_ref_char('/'));

}  // namespace aura::blob_format
