// Constants of signed scenario packages: the file names, the signed payload's version and
// type, and the limits a loader applies to untrusted trees. See docs/formats/package.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/sign/dsse_format.h"

namespace aura::package_format {

// The signed payload's "version" member; it comes first in the payload.
inline constexpr uint64_t kPayloadVersion = 1;
inline constexpr std::string_view kPayloadType = dsse_format::kPayloadTypePackage;

inline constexpr std::string_view kManifestFile = "manifest.json";
inline constexpr std::string_view kSumsFile = "SHA256SUMS";
inline constexpr std::string_view kSignatureFile = "package.sig.json";

// Limits on a package tree (everything but SHA256SUMS and package.sig.json).
inline constexpr size_t kMaxFiles = 10'000;
inline constexpr uint64_t kMaxTotalBytes = uint64_t{256} << 20;
inline constexpr size_t kMaxManifestBytes = size_t{1} << 20;
inline constexpr size_t kMaxPathBytes = 1024;      // a relative path, '/'-separated
inline constexpr size_t kMaxComponentBytes = 255;  // one path component
inline constexpr size_t kMaxSignatureBytes = 64 << 10;

// One SHA256SUMS line: 64 hex digits, two spaces, the path, a newline.
inline constexpr size_t kSumsLineOverhead = 64 + 2 + 1;
inline constexpr size_t kMaxSumsBytes = kMaxFiles * (kSumsLineOverhead + kMaxPathBytes);

// Manifest field bounds: id [a-z0-9][a-z0-9._-]{0,63}; version 1..32 of [0-9A-Za-z.+-].
inline constexpr size_t kMaxIdBytes = 64;
inline constexpr size_t kMaxVersionBytes = 32;
inline constexpr size_t kMaxFamilyBytes = 128;
inline constexpr size_t kMaxTitleBytes = 512;

static_assert(kMaxManifestBytes <= kMaxTotalBytes);
static_assert(kMaxSignatureBytes <= dsse_format::kMaxEnvelopeBytes);
static_assert(kMaxComponentBytes <= kMaxPathBytes);

}  // namespace aura::package_format
