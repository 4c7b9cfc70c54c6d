#include "app/rpc/frame.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace aura::rpc {
namespace {

constexpr uint8_t kMagic0 = 0x41, kMagic1 = 0x44;  // "AD"

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : int(std::min<int64_t>(left.count(), 1 << 30));
}

// Waits until `fd` is ready for `events` or the deadline passes.
Status wait_ready(int fd, short events, Clock::time_point deadline, std::string_view what) {
  for (;;) {
    pollfd p{fd, events, 0};
    int ms = remaining_ms(deadline);
    int n = ::poll(&p, 1, ms);
    if (n > 0) return Status::ok();
    if (n == 0) return Status::unavailable(std::string(what) + ": timed out");
    if (errno != EINTR) return Status::io(std::string(what) + ": poll: " + std::strerror(errno));
  }
}

// Reads exactly out.size() bytes by the deadline. `closed`, when given, is set on an end of
// stream before the first byte.
Status read_exact(int fd, std::span<uint8_t> out, Clock::time_point deadline,
                  bool* closed = nullptr) {
  size_t done = 0;
  while (done < out.size()) {
    if (Status s = wait_ready(fd, POLLIN, deadline, "daemon protocol: read"); !s.is_ok()) return s;
    ssize_t n = ::recv(fd, out.data() + done, out.size() - done, 0);
    if (n > 0) {
      done += size_t(n);
      continue;
    }
    if (n == 0 && done == 0 && closed) *closed = true;
    if (n == 0) return Status::unavailable("daemon protocol: connection closed");
    if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK) continue;
    return Status::io(std::string("daemon protocol: read: ") + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::kRequest:
      return "request";
    case Kind::kReply:
      return "reply";
    case Kind::kEvent:
      return "event";
    case Kind::kKeepAlive:
      return "keep-alive";
  }
  return "?";
}

size_t max_body(Kind k) {
  switch (k) {
    case Kind::kRequest:
      return kMaxRequestBytes;
    case Kind::kReply:
      return kMaxReplyBytes;
    case Kind::kEvent:
      return kMaxEventBytes;
    case Kind::kKeepAlive:
      return 0;
  }
  return 0;
}

Result<std::string> encode_frame(Kind kind, std::string_view body) {
  if (body.size() > max_body(kind)) {
    return Status::invalid("daemon protocol: a " + std::string(kind_name(kind)) + " body of " +
                           std::to_string(body.size()) + " bytes is over its cap of " +
                           std::to_string(max_body(kind)));
  }
  std::string out;
  out.reserve(kHeaderBytes + body.size());
  uint32_t n = uint32_t(body.size());
  out += char(kMagic0);
  out += char(kMagic1);
  out += char(kVersion);
  out += char(uint8_t(kind));
  out += char(n >> 24);
  out += char((n >> 16) & 0xff);
  out += char((n >> 8) & 0xff);
  out += char(n & 0xff);
  out += body;
  return out;
}

Result<Header> decode_header(std::span<const uint8_t, kHeaderBytes> b) {
  if (b[0] != kMagic0 || b[1] != kMagic1) {
    return Status::invalid("daemon protocol: bad magic (not an AURA daemon frame)");
  }
  if (b[2] != kVersion) {
    return Status::invalid("daemon protocol: version " + std::to_string(b[2]) +
                           " is not supported (this build speaks version " +
                           std::to_string(kVersion) + ")");
  }
  if (b[3] < 1 || b[3] > 4) {
    return Status::invalid("daemon protocol: unknown frame kind " + std::to_string(b[3]));
  }
  Header h;
  h.kind = Kind(b[3]);
  h.length = (uint32_t(b[4]) << 24) | (uint32_t(b[5]) << 16) | (uint32_t(b[6]) << 8) | b[7];
  if (h.length > max_body(h.kind)) {
    return Status::invalid("daemon protocol: a " + std::string(kind_name(h.kind)) + " of " +
                           std::to_string(h.length) + " bytes is over its cap of " +
                           std::to_string(max_body(h.kind)));
  }
  return h;
}

Result<std::optional<Frame>> read_frame(int fd, std::chrono::milliseconds idle,
                                        std::chrono::milliseconds whole) {
  std::array<uint8_t, kHeaderBytes> hb{};
  // The first byte: wait up to `idle`; an end of stream here is the peer's orderly close.
  bool closed = false;
  Status s = read_exact(fd, std::span<uint8_t>(hb.data(), 1), Clock::now() + idle, &closed);
  if (closed) return std::optional<Frame>();
  if (!s.is_ok()) return s;
  auto deadline = Clock::now() + whole;
  if (Status r = read_exact(fd, std::span<uint8_t>(hb.data() + 1, kHeaderBytes - 1), deadline);
      !r.is_ok()) {
    return r;
  }
  auto h = decode_header(hb);
  if (!h.ok()) return h.status();
  Frame f;
  f.kind = h->kind;
  f.body.resize(h->length);
  if (h->length > 0) {
    Status r = read_exact(
        fd, std::span<uint8_t>(reinterpret_cast<uint8_t*>(f.body.data()), f.body.size()), deadline);
    if (!r.is_ok()) return r;
  }
  return std::optional<Frame>(std::move(f));
}

void FrameBuffer::append(const char* bytes, size_t n) {
  if (empty()) {
    buf_.clear();
    start_ = 0;
  }
  buf_.append(bytes, n);
}

Result<std::optional<Frame>> FrameBuffer::take() {
  if (buf_.size() - start_ < kHeaderBytes) return std::optional<Frame>();
  auto h = decode_header(std::span<const uint8_t, kHeaderBytes>(
      reinterpret_cast<const uint8_t*>(buf_.data() + start_), kHeaderBytes));
  if (!h.ok()) return h.status();
  const size_t size = kHeaderBytes + h->length;
  if (buf_.size() - start_ < size) return std::optional<Frame>();
  Frame f;
  f.kind = h->kind;
  f.body.assign(buf_, start_ + kHeaderBytes, h->length);
  start_ += size;
  return std::optional<Frame>(std::move(f));
}

bool FrameBuffer::has_frame() const {
  if (buf_.size() - start_ < kHeaderBytes) return false;
  auto h = decode_header(std::span<const uint8_t, kHeaderBytes>(
      reinterpret_cast<const uint8_t*>(buf_.data() + start_), kHeaderBytes));
  return !h.ok() || buf_.size() - start_ >= kHeaderBytes + h->length;
}

bool FrameReader::ready() {
  if (frames_.has_frame()) return true;
  if (!chunk_) chunk_ = std::make_unique_for_overwrite<char[]>(kChunk);
  ssize_t n;
  do {
    n = ::recv(fd_, chunk_.get(), kChunk, MSG_DONTWAIT);
  } while (n < 0 && errno == EINTR);
  // An end of stream or an error is left for next() to find and report.
  if (n <= 0) return false;
  frames_.append(chunk_.get(), size_t(n));
  return frames_.has_frame();
}

Status FrameReader::fill(Clock::time_point deadline, bool* closed) {
  if (!chunk_) chunk_ = std::make_unique_for_overwrite<char[]>(kChunk);
  for (;;) {
    ssize_t n = ::recv(fd_, chunk_.get(), kChunk, MSG_DONTWAIT);
    if (n > 0) {
      frames_.append(chunk_.get(), size_t(n));
      return Status::ok();
    }
    if (n == 0) {
      *closed = true;
      return Status::unavailable("daemon protocol: connection closed");
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      return Status::io(std::string("daemon protocol: read: ") + std::strerror(errno));
    }
    if (Status s = wait_ready(fd_, POLLIN, deadline, "daemon protocol: read"); !s.is_ok()) {
      return s;
    }
  }
}

Result<std::optional<Frame>> FrameReader::next(std::chrono::milliseconds idle,
                                               std::chrono::milliseconds whole) {
  bool closed = false;
  if (frames_.empty()) {
    Status s = fill(Clock::now() + idle, &closed);
    if (closed) return std::optional<Frame>();  // an orderly close between frames
    if (!s.is_ok()) return s;
  }
  const auto deadline = Clock::now() + whole;
  for (;;) {
    auto f = frames_.take();
    if (!f.ok() || f->has_value()) return f;
    if (Status s = fill(deadline, &closed); !s.is_ok()) return s;
  }
}

Status write_frame(int fd, Kind kind, std::string_view body, std::chrono::milliseconds whole) {
  auto bytes = encode_frame(kind, body);
  if (!bytes.ok()) return bytes.status();
  return write_frames(fd, *bytes, whole);
}

Status write_frames(int fd, std::string_view bytes, std::chrono::milliseconds whole) {
  auto deadline = Clock::now() + whole;
  size_t done = 0;
  // Sent at once when the socket has room (the usual case); waited for only when it has none.
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      done += size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Status s = wait_ready(fd, POLLOUT, deadline, "daemon protocol: write"); !s.is_ok())
        return s;
      continue;
    }
    return Status::io(std::string("daemon protocol: write: ") + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace aura::rpc
