// Byte-level constants of C2SP signed notes (c2sp.org/signed-note) and of the key strings
// that name note keys (golang.org/x/mod/sumdb/note encoding). See docs/formats/keys.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace aura::note_format {

// Signature type byte for Ed25519 (signed-note "Signature types"). It is hashed into the key
// ID and prefixes the public key and seed in key strings.
inline constexpr uint8_t kSigTypeEd25519 = 0x01;

inline constexpr size_t kKeyIdBytes = 4;        // big-endian uint32 prefix of a signature
inline constexpr size_t kKeyIdHexChars = 8;     // in key strings, lowercase
inline constexpr size_t kEd25519KeyBytes = 32;  // public key or seed
inline constexpr size_t kEd25519SigBytes = 64;
inline constexpr size_t kSignatureBlobBytes = kKeyIdBytes + kEd25519SigBytes;

// "— " opens every signature line: U+2014 EM DASH (UTF-8 E2 80 94) and a space.
inline constexpr std::string_view kSigLinePrefix = "\xE2\x80\x94 ";
// Prefix of a private key string: "PRIVATE+KEY+<name>+<id>+<base64(0x01 || seed)>".
inline constexpr std::string_view kPrivateKeyPrefix = "PRIVATE+KEY+";

// Bounds applied by parsers to untrusted input. The spec asks verifiers to accept at least
// 16 signatures; 100 matches the Go reference implementation.
inline constexpr size_t kMaxKeyNameBytes = 256;
inline constexpr size_t kMaxNoteBytes = 1 << 20;  // the whole signed note
inline constexpr size_t kMaxSignatureLines = 100;
inline constexpr size_t kMaxKeyStringBytes = 1024;

static_assert(kSigLinePrefix.size() == 4);
static_assert(kSignatureBlobBytes == 68);
static_assert(kMaxSignatureLines >= 16, "signed-note: verifiers MUST accept 16 signatures");

}  // namespace aura::note_format
