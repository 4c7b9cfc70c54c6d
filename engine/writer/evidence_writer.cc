#include "engine/writer/evidence_writer.h"

#include <fcntl.h>
#include <poll.h>
#include <simdjson.h>
#include <sodium.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>

#include "engine/blob/evidence_ref.h"
#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/common/text.h"
#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"

namespace aura::writer {
namespace {

constexpr EvidenceKindSpec kKinds[] = {
    {"probe.output", EvidenceKindSpec::Blob::kRequired,
     "a probe's output: fields {stream: stdout|stderr, truncated: bool}, the bytes as the blob"},
    {"action.output", EvidenceKindSpec::Blob::kRequired,
     "an action's or script's output: fields {stream: stdout|stderr, truncated: bool}"},
    {"runner.note", EvidenceKindSpec::Blob::kNone,
     "a line the runner wants on record: fields {text: 1..1024 bytes}"},
};

bool is_hex(std::string_view s, size_t n) {
  return s.size() == n && std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// Every fd a message carried; closed when this goes out of scope unless taken.
struct ReceivedFds {
  std::vector<int> fds;
  ~ReceivedFds() {
    for (int fd : fds) ::close(fd);
  }
  int take_only() {
    int fd = fds.front();
    fds.clear();
    return fd;
  }
};

struct Frame {
  std::string bytes;  // as received (at most kMaxFrameBytes)
  size_t size = 0;    // the real size, larger than bytes.size() when truncated
  bool truncated = false;
  bool control_truncated = false;
  ReceivedFds fds;
  bool foreign_control = false;  // a control message other than SCM_RIGHTS
};

// Receives one message. kIo for a socket error; EOF is size 0 with no bytes.
Status receive(int fd, Frame& f) {
  f.bytes.resize(kMaxFrameBytes);
  iovec iov{f.bytes.data(), f.bytes.size()};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = ::recvmsg(fd, &msg, MSG_TRUNC | MSG_CMSG_CLOEXEC);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::io("receive frame: " + file_io::errno_text(errno));
  f.size = size_t(n);
  f.truncated = (msg.msg_flags & MSG_TRUNC) != 0 || f.size > kMaxFrameBytes;
  f.bytes.resize(std::min(f.size, kMaxFrameBytes));
  f.control_truncated = (msg.msg_flags & MSG_CTRUNC) != 0;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < count; ++i) {
        int got;
        std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        f.fds.fds.push_back(got);
      }
    } else {
      f.foreign_control = true;
    }
  }
  return Status::ok();
}

// Reads a sealed memfd's bytes, or says why it is not acceptable.
Result<std::string> read_sealed_memfd(int fd, uint64_t limit) {
  const int seals = ::fcntl(fd, F_GET_SEALS);
  if (seals < 0) return Status::invalid("the fd passed is not a memfd (it cannot be sealed)");
  const int needed = F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK;
  if ((seals & needed) != needed) {
    return Status::invalid("the memfd passed is not sealed against write, grow and shrink");
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::invalid("the fd passed is not a regular memfd");
  }
  if (uint64_t(st.st_size) > limit) {
    return Status::invalid("the memfd holds " + std::to_string(st.st_size) + " bytes; at most " +
                           std::to_string(limit) + " are accepted");
  }
  std::string out(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = ::pread(fd, out.data() + done, out.size() - done, off_t(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Status::invalid("the memfd could not be read");
    done += size_t(n);
  }
  return out;
}

// The members of an object, refusing duplicates and any name not in `allowed`.
Status check_members(simdjson::dom::object o, std::initializer_list<std::string_view> allowed,
                     std::string_view where) {
  std::vector<std::string_view> seen;
  for (auto [key, value] : o) {
    (void)value;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      return Status::invalid(std::string(where) + ": unknown member \"" + safe_text(key, 64) +
                             "\"");
    }
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      return Status::invalid(std::string(where) + ": duplicate member \"" + std::string(key) +
                             "\"");
    }
    seen.push_back(key);
  }
  return Status::ok();
}

// Validates a kind's fields and returns them re-encoded (what the event records).
Result<std::string> check_fields(std::string_view kind, simdjson::dom::object fields) {
  JsonWriter w;
  if (kind == "probe.output" || kind == "action.output") {
    AURA_RETURN_IF_ERROR(check_members(fields, {"stream", "truncated"}, "fields"));
    std::string_view stream;
    bool truncated = false;
    if (fields["stream"].get_string().get(stream) || (stream != "stdout" && stream != "stderr")) {
      return Status::invalid("fields.stream: must be \"stdout\" or \"stderr\"");
    }
    if (fields["truncated"].get_bool().get(truncated)) {
      return Status::invalid("fields.truncated: must be a boolean");
    }
    w.str("stream", stream).boolean("truncated", truncated);
  } else if (kind == "runner.note") {
    AURA_RETURN_IF_ERROR(check_members(fields, {"text"}, "fields"));
    std::string_view text;
    if (fields["text"].get_string().get(text)) return Status::invalid("fields.text: not a string");
    const std::string wrong = check_learner_text(text, 1024);
    if (!wrong.empty()) return Status::invalid("fields.text: " + wrong);
    w.str("text", text);
  } else {
    return Status::invalid("no schema for kind " + std::string(kind));
  }
  return w.done();
}

// The frame's first byte must be kFrameVersion. A frame of the unversioned layout (a runner
// built before the version byte) starts with the header's '{' and is named as such.
Status check_version(std::string_view bytes) {
  if (bytes.empty()) return Status::invalid("an empty frame carries no version");
  const auto version = uint8_t(bytes[0]);
  if (version == kFrameVersion) return Status::ok();
  const std::string reads =
      "; this writer reads version " + std::to_string(kFrameVersion) + " only";
  if (version == '{') return Status::invalid("no frame version: the frame starts with '{'" + reads);
  return Status::invalid("unknown frame version " + std::to_string(version) + reads);
}

class Connection {
 public:
  Connection(int fd, const RunBinding& b, RunTokens& tokens, EventLog& log, BlobStore& blobs)
      : fd_(fd), b_(b), tokens_(tokens), log_(log), blobs_(blobs) {}

  Result<ConnectionReport> run(std::chrono::steady_clock::time_point deadline) {
    while (true) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) {
        r_.timed_out = true;
        ::shutdown(fd_, SHUT_RDWR);
        return r_;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, int(std::min<int64_t>(left + 1, 60'000)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return Status::io("poll writer socket: " + file_io::errno_text(errno));
      if (ready == 0) continue;
      Frame f;
      AURA_RETURN_IF_ERROR(receive(fd_, f));
      if (f.size == 0 && f.fds.fds.empty()) {
        // EOF (a zero-length SEQPACKET message cannot carry a frame either).
        return r_;
      }
      r_.frames++;
      r_.bytes += f.bytes.size();
      Status verdict = accept(f);
      if (verdict.code() == ErrorCode::kIo) return verdict;  // the host failed, not the runner
      if (!verdict.is_ok()) {
        AURA_RETURN_IF_ERROR(reject(f, verdict.message()));
        ::shutdown(fd_, SHUT_RDWR);
        return r_;
      }
    }
  }

 private:
  // kInvalidArgument: the frame is refused for the reason given. kIo: a host failure.
  Status accept(Frame& f) {
    if (f.truncated) {
      return Status::invalid("frame of " + std::to_string(f.size) + " bytes is over the limit of " +
                             std::to_string(kMaxFrameBytes));
    }
    if (f.control_truncated) return Status::invalid("truncated control message");
    if (f.foreign_control) return Status::invalid("a control message other than SCM_RIGHTS");
    if (r_.frames > b_.max_frames) {
      return Status::invalid("over the run's cap of " + std::to_string(b_.max_frames) + " frames");
    }
    if (r_.bytes > b_.max_bytes) {
      return Status::invalid("over the run's cap of " + std::to_string(b_.max_bytes) + " bytes");
    }
    // The version first: nothing after it is read under a layout this writer does not know.
    AURA_RETURN_IF_ERROR(check_version(f.bytes));
    const size_t nl = f.bytes.find('\n', kFrameVersionBytes);
    if (nl == std::string::npos || nl - kFrameVersionBytes > kMaxHeaderBytes) {
      return Status::invalid("no header line within " + std::to_string(kMaxHeaderBytes) + " bytes");
    }
    const std::string_view header(f.bytes.data() + kFrameVersionBytes, nl - kFrameVersionBytes);
    const std::string_view inline_bytes(f.bytes.data() + nl + 1, f.bytes.size() - nl - 1);
    simdjson::dom::object o;
    if (parser_.parse(header.data(), header.size()).get_object().get(o)) {
      return Status::invalid("the header is not a JSON object");
    }
    std::string_view t;
    if (o["t"].get_string().get(t)) return Status::invalid("the header has no \"t\"");
    if (!hello_done_) {
      if (t != "hello") return Status::invalid("the first frame must be hello");
      AURA_RETURN_IF_ERROR(check_members(o, {"t", "token"}, "hello"));
      std::string_view token;
      if (o["token"].get_string().get(token) || !is_hex(token, kTokenHexDigits)) {
        return Status::invalid("hello.token: not 64 lowercase hex digits");
      }
      if (!inline_bytes.empty() || !f.fds.fds.empty()) {
        return Status::invalid("hello carries bytes or an fd");
      }
      AURA_RETURN_IF_ERROR(tokens_.claim(token, b_.run_id));
      hello_done_ = true;
      return Status::ok();
    }
    if (t == "hello") return Status::invalid("a second hello");
    if (t != "evidence") return Status::invalid("unknown frame type \"" + safe_text(t, 32) + "\"");
    AURA_RETURN_IF_ERROR(check_members(o, {"t", "kind", "fields", "memfd"}, "evidence"));
    std::string_view kind;
    if (o["kind"].get_string().get(kind)) return Status::invalid("evidence.kind: not a string");
    if (std::find(b_.kinds.begin(), b_.kinds.end(), kind) == b_.kinds.end()) {
      return Status::invalid("evidence kind \"" + safe_text(kind, 64) +
                             "\" is not granted to this run");
    }
    const EvidenceKindSpec* spec = find_evidence_kind(kind);
    simdjson::dom::object fields;
    if (o["fields"].get_object().get(fields)) {
      return Status::invalid("evidence.fields: not an object");
    }
    std::string fields_json;
    AURA_ASSIGN_OR_RETURN(fields_json, check_fields(kind, fields));
    bool memfd = false;
    if (auto m = o["memfd"]; m.error() != simdjson::NO_SUCH_FIELD) {
      if (m.get_bool().get(memfd) || !memfd) return Status::invalid("evidence.memfd: must be true");
    }

    std::optional<std::string> blob;
    if (memfd) {
      if (f.fds.fds.size() != 1) {
        return Status::invalid("a memfd frame must carry exactly one fd, not " +
                               std::to_string(f.fds.fds.size()));
      }
      if (!inline_bytes.empty()) return Status::invalid("a memfd frame carries inline bytes too");
      const uint64_t room = b_.max_bytes - std::min(b_.max_bytes, r_.bytes);
      std::string bytes;
      AURA_ASSIGN_OR_RETURN(bytes,
                            read_sealed_memfd(f.fds.fds.front(),
                                              std::min({kMaxMemfdBytes, room, b_.max_blob_bytes})));
      r_.bytes += bytes.size();
      blob = std::move(bytes);
    } else {
      if (!f.fds.fds.empty()) return Status::invalid("an fd the frame did not announce");
      if (spec->blob == EvidenceKindSpec::Blob::kRequired)
        blob = std::string(inline_bytes);
      else if (!inline_bytes.empty())
        return Status::invalid("kind " + std::string(kind) + " carries no bytes");
    }
    if (blob && spec->blob == EvidenceKindSpec::Blob::kNone) {
      return Status::invalid("kind " + std::string(kind) + " carries no blob");
    }
    if (blob && blob->size() > b_.max_blob_bytes) {
      return Status::invalid("a blob of " + std::to_string(blob->size()) +
                             " bytes is over the run's output bound of " +
                             std::to_string(b_.max_blob_bytes));
    }

    // Accepted: the blob first, then the event that references it.
    AcceptedFrame accepted{std::string(kind), std::string(fields_json), false, {}, 0};
    JsonWriter payload;
    payload.num("v", 1)
        .str("attempt", b_.attempt)
        .str("run", b_.run_id)
        .str("world", b_.world)
        .str("kind", kind)
        .num("frame", uint64_t(r_.frames))
        .raw("fields", fields_json);
    if (blob) {
      auto stored =
          blobs_.put(std::span(reinterpret_cast<const uint8_t*>(blob->data()), blob->size()));
      if (!stored.ok()) return Status::io(stored.status().message());
      accepted.has_blob = true;
      accepted.blob = stored->sha256;
      accepted.blob_bytes = stored->bytes;
      JsonArray refs;
      refs.raw(evidence_ref_json({"frame-" + std::to_string(r_.frames), stored->sha256,
                                  std::string(kind), stored->bytes}));
      payload.raw("refs", refs.done());
    }
    auto appended = log_.append({b_.stream(), events::kRunnerEvidence, b_.actor(), payload.done()});
    if (!appended.ok()) return Status::io(appended.status().message());
    r_.accepted++;
    r_.seqs.push_back(appended->seq);
    r_.frames_accepted.push_back(std::move(accepted));
    return Status::ok();
  }

  Status reject(const Frame& f, const std::string& reason) {
    r_.rejected = true;
    r_.reason = reason;
    auto appended = log_.append({b_.stream(), events::kEvidenceRejected, "supervisor",
                                 JsonWriter()
                                     .num("v", 1)
                                     .str("attempt", b_.attempt)
                                     .str("run", b_.run_id)
                                     .str("world", b_.world)
                                     .num("frame", uint64_t(r_.frames))
                                     .str("reason", safe_text(reason, 1024))
                                     .num("size", uint64_t(f.size))
                                     .str("sha256", to_hex(sha256(f.bytes)))
                                     .num("fds", uint64_t(f.fds.fds.size()))
                                     .done()});
    if (!appended.ok()) return appended.status();
    r_.seqs.push_back(appended->seq);
    return Status::ok();
  }

  int fd_;
  const RunBinding& b_;
  RunTokens& tokens_;
  EventLog& log_;
  BlobStore& blobs_;
  simdjson::dom::parser parser_;
  bool hello_done_ = false;
  ConnectionReport r_;
};

}  // namespace

const EvidenceKindSpec* find_evidence_kind(std::string_view kind) {
  for (const auto& k : kKinds)
    if (k.name == kind) return &k;
  return nullptr;
}

std::vector<std::string_view> evidence_kind_names() {
  std::vector<std::string_view> out;
  for (const auto& k : kKinds) out.push_back(k.name);
  return out;
}

Status RunBinding::validate() const {
  if (!is_hex(run_id, 16)) return Status::invalid("run id must be 16 lowercase hex digits");
  if (!is_hex(attempt, 16)) return Status::invalid("attempt id must be 16 lowercase hex digits");
  if (world.empty() || world.size() > 64 || !is_valid_utf8(world)) {
    return Status::invalid("world id must be 1..64 bytes");
  }
  for (const auto& k : kinds) {
    if (find_evidence_kind(k) == nullptr) {
      return Status::invalid("evidence kind \"" + k + "\" can never be granted to a runner");
    }
  }
  if (max_frames > kMaxFramesPerRun || max_bytes > kMaxBytesPerRun ||
      max_blob_bytes > kMaxMemfdBytes) {
    return Status::invalid("a binding may lower the per-run caps, never raise them");
  }
  return Status::ok();
}

Result<std::string> RunTokens::issue(const std::string& run_id) {
  if (sodium_init() < 0) return Status::unavailable("libsodium failed to initialise");
  std::lock_guard lock(mu_);
  if (token_of_run_.count(run_id)) return Status::failed_precondition("run already has a token");
  uint8_t raw[kTokenHexDigits / 2];
  randombytes_buf(raw, sizeof raw);
  std::string token = to_hex(std::span<const uint8_t>(raw, sizeof raw));
  by_token_[token] = Entry{run_id, false, false};
  token_of_run_[run_id] = token;
  return token;
}

Status RunTokens::claim(std::string_view token, const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto it = by_token_.find(token);
  if (it == by_token_.end()) return Status::invalid("unknown token");
  Entry& e = it->second;
  if (e.run_id != run_id) return Status::invalid("the token belongs to another run");
  if (e.ended) return Status::invalid("the token's run has ended");
  if (e.used) return Status::invalid("the token was already used");
  e.used = true;
  return Status::ok();
}

void RunTokens::end(const std::string& run_id) {
  std::lock_guard lock(mu_);
  auto it = token_of_run_.find(run_id);
  if (it != token_of_run_.end()) by_token_[it->second].ended = true;
}

Result<ConnectionReport> serve_connection(int fd, const RunBinding& binding, RunTokens& tokens,
                                          EventLog& log, BlobStore& blobs,
                                          std::chrono::steady_clock::time_point deadline) {
  AURA_RETURN_IF_ERROR(binding.validate());
  Connection c(fd, binding, tokens, log, blobs);
  return c.run(deadline);
}

}  // namespace aura::writer
