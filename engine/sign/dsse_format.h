// Constants of DSSE envelopes (github.com/secure-systems-lab/dsse, protocol v1) as AURA uses
// them: Ed25519 signatures over PAE, key ids in note-key form. See docs/formats/dsse.md.
#pragma once

#include <cstddef>
#include <string_view>

namespace aura::dsse_format {

// PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body.
inline constexpr std::string_view kPaePrefix = "DSSEv1";

// One payload type per thing signed, so a signature for one never verifies as another.
inline constexpr std::string_view kPayloadTypeReceipt = "application/vnd.aura.receipt+json";
inline constexpr std::string_view kPayloadTypeSnapshot = "application/vnd.aura.snapshot+json";
inline constexpr std::string_view kPayloadTypePackage = "application/vnd.aura.package+json";

// Bounds applied to untrusted envelopes.
inline constexpr size_t kMaxEnvelopeBytes = 16 << 20;
inline constexpr size_t kMaxPayloadTypeBytes = 256;
inline constexpr size_t kMaxSignatures = 16;
inline constexpr size_t kMaxKeyIdBytes = 512;

static_assert(kMaxSignatures >= 1);

}  // namespace aura::dsse_format
