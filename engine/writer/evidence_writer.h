// The narrow writer: the only way a runner's evidence reaches the log. The supervisor makes one
// SOCK_SEQPACKET socketpair per run and binds the connection to the run (stream, actor, attempt,
// world, granted evidence kinds); nothing a frame says can change that binding. A one-time token
// in the first frame ties the connection to its run. Every frame is bounded and checked against
// the schema of its kind; the first bad frame closes the connection and is itself recorded as
// `evidence.rejected` (reason, size, SHA-256 -- never the bytes). Contract: docs/WRITER.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/log/event_log.h"
#include "engine/writer/frame.h"

namespace aura::writer {

// What a runner may send under one evidence kind. Only kinds in this table can be granted; gate
// facts, verify facts, receipts, attempt transitions and the supervisor's own run facts are not
// in it and never can be.
struct EvidenceKindSpec {
  std::string_view name;
  enum class Blob { kNone, kRequired } blob;
  std::string_view summary;
};
const EvidenceKindSpec* find_evidence_kind(std::string_view kind);
std::vector<std::string_view> evidence_kind_names();

// The run a connection belongs to: chosen by the supervisor when it made the socketpair.
struct RunBinding {
  std::string run_id;              // 16 lowercase hex
  std::string attempt;             // 16 lowercase hex
  std::string world;               // the manifest world id
  std::vector<std::string> kinds;  // granted evidence kinds (each in the table above)
  uint32_t max_frames = kMaxFramesPerRun;
  uint64_t max_bytes = kMaxBytesPerRun;
  // One blob's bytes: a runner call's is the catalog entry's max_output_bytes. A blob over it is
  // refused (and so the run's evidence), whatever the runner says about truncation.
  uint64_t max_blob_bytes = kMaxMemfdBytes;

  std::string stream() const { return "attempt/" + attempt; }
  std::string actor() const { return "runner:" + run_id; }
  // kInvalidArgument naming what is wrong: ids, a kind not grantable, limits above the maxima.
  Status validate() const;
};

// One-time tokens, one per run. Thread-safe.
class RunTokens {
 public:
  // A fresh random token for `run_id` (64 lowercase hex); refused for a run that has one.
  Result<std::string> issue(const std::string& run_id);
  // Claims `token` for `run_id`: ok once; refused, with the reason, for an unknown token, another
  // run's token, a token already used, or one of a run that ended.
  Status claim(std::string_view token, const std::string& run_id);
  // The run ended: its token is useless from now on.
  void end(const std::string& run_id);

 private:
  struct Entry {
    std::string run_id;
    bool used = false;
    bool ended = false;
  };
  std::mutex mu_;
  std::map<std::string, Entry, std::less<>> by_token_;
  std::map<std::string, std::string> token_of_run_;
};

// One accepted frame, as the supervisor's own code may read it back.
struct AcceptedFrame {
  std::string kind;
  std::string fields_json;  // the frame's checked "fields" object
  bool has_blob = false;
  Digest blob{};  // in the blob store
  uint64_t blob_bytes = 0;
};

struct ConnectionReport {
  uint32_t frames = 0;                         // frames received, the refused one included
  uint64_t bytes = 0;                          // inline and memfd bytes received
  uint32_t accepted = 0;                       // runner.evidence events appended
  bool rejected = false;                       // a frame was refused and the connection closed
  std::string reason;                          // why, when rejected
  bool timed_out = false;                      // the deadline passed with the connection still open
  std::vector<uint64_t> seqs;                  // every event appended for this connection, in order
  std::vector<AcceptedFrame> frames_accepted;  // in order
};

// Serves the connection `fd` (the supervisor's end) until the runner closes it, a frame is
// refused, or `deadline` passes. Accepted frames become `runner.evidence` events (actor
// runner:<run>, the binding's stream) with their blob stored first; a refused frame becomes an
// `evidence.rejected` event (actor supervisor) and the connection is shut down. Errors only for
// the host's failures (the log or blob store refusing a write); a hostile runner cannot make one.
// Does not close `fd`.
Result<ConnectionReport> serve_connection(int fd, const RunBinding& binding, RunTokens& tokens,
                                          EventLog& log, BlobStore& blobs,
                                          std::chrono::steady_clock::time_point deadline);

}  // namespace aura::writer
