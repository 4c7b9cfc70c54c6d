// The daemon protocol's frames (docs/formats/daemon-protocol.md): an 8-byte header ("AD",
// version, kind, big-endian body length) and a body capped by kind. Blocking reads and writes
// on a socket with a deadline; the header is checked before any body byte is read.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/common/status.h"

namespace aura::rpc {

inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHeaderBytes = 8;

enum class Kind : uint8_t { kRequest = 1, kReply = 2, kEvent = 3, kKeepAlive = 4 };
std::string_view kind_name(Kind k);

// A receipt of 1 MiB to verify (the largest body the front takes) and its envelope.
inline constexpr size_t kMaxRequestBytes = (size_t(1) << 20) + 64 * 1024;
inline constexpr size_t kMaxReplyBytes = size_t(8) << 20;
inline constexpr size_t kMaxEventBytes = size_t(1) << 20;
size_t max_body(Kind k);

struct Header {
  Kind kind = Kind::kRequest;
  uint32_t length = 0;
};

// The frame's bytes. The body must fit its kind's cap (checked by the caller's own bounds; a
// body over the cap is refused here too, as kInvalidArgument).
Result<std::string> encode_frame(Kind kind, std::string_view body);

// Checks magic, version, kind and the length against the kind's cap. Errors name the field.
Result<Header> decode_header(std::span<const uint8_t, kHeaderBytes> bytes);

struct Frame {
  Kind kind = Kind::kRequest;
  std::string body;
};

using Clock = std::chrono::steady_clock;

// Reads one frame from `fd`. Waits up to `idle` for its first byte, then up to `whole` for the
// rest. nullopt: the peer closed the connection before a frame began (an orderly end). A header
// that fails decode_header is kInvalidArgument (the caller closes); a timeout, a close inside a
// frame or a socket error is kUnavailable or kIo naming what happened.
Result<std::optional<Frame>> read_frame(int fd, std::chrono::milliseconds idle,
                                        std::chrono::milliseconds whole);

// The frames of one connection, read through a buffer: one read takes what the peer has sent
// (often a whole frame, or several), so a frame costs about one wait and one read instead of
// one per part. Same rules and errors as read_frame. Not thread-safe.
// The frames in the bytes read so far from one connection: the protocol's framing with no I/O,
// shared by FrameReader (blocking) and the front's asynchronous daemon link. A header is checked
// as soon as its 8 bytes are there, before any of its body is waited for.
class FrameBuffer {
 public:
  void append(const char* bytes, size_t n);
  // No byte of a frame is waiting.
  bool empty() const { return start_ == buf_.size(); }
  // The next whole frame; nullopt while more bytes are needed; kInvalidArgument for a header
  // that decode_header refuses.
  Result<std::optional<Frame>> take();
  // take() would not wait for more bytes: a whole frame is there, or a header it refuses.
  bool has_frame() const;

 private:
  std::string buf_;
  size_t start_ = 0;  // where the unread bytes of buf_ begin
};

class FrameReader {
 public:
  explicit FrameReader(int fd) : fd_(fd) {}
  Result<std::optional<Frame>> next(std::chrono::milliseconds idle,
                                    std::chrono::milliseconds whole);
  // next() would answer without waiting: a whole frame was already read, or is there to be read
  // at once (one read that does not wait). A pipelining peer's requests are answered together.
  bool ready();

 private:
  // Reads what is there (at least one byte) by `deadline`; `*closed` on an end of stream.
  Status fill(Clock::time_point deadline, bool* closed);
  static constexpr size_t kChunk = 64 * 1024;
  int fd_;
  std::unique_ptr<char[]> chunk_;  // what one read takes (not zeroed: a read fills it)
  FrameBuffer frames_;
};

// Writes a whole frame within `whole` (MSG_NOSIGNAL: a closed peer is an error, not a signal).
Status write_frame(int fd, Kind kind, std::string_view body, std::chrono::milliseconds whole);
// Writes bytes already framed (one or several whole frames) within `whole`, as write_frame.
Status write_frames(int fd, std::string_view bytes, std::chrono::milliseconds whole);

}  // namespace aura::rpc
