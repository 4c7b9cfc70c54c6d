// Constants of the log's checkpoint note text (C2SP tlog-checkpoint plus one extension line
// carrying the hash-chain head). See docs/formats/checkpoint.md.
#pragma once

#include <cstddef>
#include <string_view>

namespace aura::checkpoint_format {

// Line 4, the only extension line: "chain-head " followed by 64 lowercase hex digits.
inline constexpr std::string_view kChainHeadPrefix = "chain-head ";
inline constexpr size_t kRootBase64Chars = 44;  // base64 of 32 bytes, one '=' of padding
inline constexpr size_t kChainHeadHexChars = 64;
inline constexpr size_t kMaxSizeDigits = 20;  // UINT64_MAX = 18446744073709551615
inline constexpr size_t kMaxOriginBytes = 256;
inline constexpr size_t kLines = 4;  // origin, size, root, chain-head
// Longest valid body: every line at its maximum, plus newlines.
inline constexpr size_t kMaxBodyBytes = kMaxOriginBytes + kMaxSizeDigits + kRootBase64Chars +
                                        kChainHeadPrefix.size() + kChainHeadHexChars + kLines;

static_assert(kRootBase64Chars == (32 + 2) / 3 * 4);
static_assert(kMaxBodyBytes == 399);

}  // namespace aura::checkpoint_format
