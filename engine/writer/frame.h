// The evidence frames a runner sends on its end of the writer socket (docs/WRITER.md,
// docs/formats/writer-frame.md). One SOCK_SEQPACKET message is one frame: the version byte, a
// compact JSON header, a '\n', then the frame's inline blob bytes (possibly none). A blob may
// instead arrive as one sealed memfd passed with SCM_RIGHTS alongside a header that says
// "memfd":true. Shared by the writer (which parses and refuses) and the runner side (which
// encodes and sends), so both agree byte for byte; a frame of any other version is refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "engine/common/status.h"

namespace aura::writer {

// The first byte of every frame: the layout below. A change to the layout is a new version, and
// the writer reads only the versions it knows (today this one).
inline constexpr uint8_t kFrameVersion = 1;
inline constexpr size_t kFrameVersionBytes = 1;

// Limits of one connection (a run). A binding may lower them, never raise them.
inline constexpr size_t kMaxFrameBytes = 64 << 10;     // one message: all of it
inline constexpr size_t kMaxHeaderBytes = 4 << 10;     // the JSON header (after the version)
inline constexpr uint64_t kMaxMemfdBytes = 16 << 20;   // one sealed memfd blob
inline constexpr uint32_t kMaxFramesPerRun = 4096;     // frames, the hello included
inline constexpr uint64_t kMaxBytesPerRun = 64 << 20;  // inline and memfd bytes together
inline constexpr size_t kTokenHexDigits = 64;          // 32 random bytes
static_assert(kFrameVersionBytes + kMaxHeaderBytes + 1 <= kMaxFrameBytes,
              "a frame holds its version, the largest header and its newline");

// Each encoder returns the whole frame: kFrameVersion, the header, '\n', the inline bytes.
// {"t":"hello","token":"<64 hex>"}: the first frame of every connection, and only the first.
std::string hello_frame(std::string_view token_hex);

// {"t":"evidence","kind":K,"fields":F} + "\n" + inline bytes. `fields_json` is a JSON object.
std::string evidence_frame(std::string_view kind, std::string_view fields_json,
                           std::string_view inline_bytes);

// {"t":"evidence","kind":K,"fields":F,"memfd":true} + "\n": the blob is the fd sent with it.
std::string evidence_memfd_frame(std::string_view kind, std::string_view fields_json);

// Sends one frame on `fd` (a SOCK_SEQPACKET socket), with `pass_fd` attached by SCM_RIGHTS when
// it is >= 0. kIo with errno text on failure (EPIPE once the writer closed the connection).
Status send_frame(int fd, std::string_view frame, int pass_fd = -1);

// A sealed memfd (write, grow, shrink and seal sealed) holding `bytes`; the caller closes it.
Result<int> sealed_memfd(std::string_view bytes);

}  // namespace aura::writer
