// Shared helpers for the log tests: a signer, sample events, an open log.
#pragma once

#include <string>

#include "engine/crypto/ed25519.h"
#include "engine/events/event_types.h"
#include "engine/log/event_log.h"
#include "engine/log/log_verifier.h"
#include "engine/sign/signed_note.h"

namespace aura::testing {

inline const NoteSigner& test_signer() {
  static const NoteSigner s("aura.lab/test-signer", Ed25519KeyPair::from_seed(Ed25519Seed{7}));
  return s;
}

inline EventDraft sample(uint64_t i, std::string stream = "") {
  if (stream.empty()) stream = "attempt/" + std::to_string(i % 5);
  return {stream, events::kProbeCompleted, "supervisor",
          R"({"i":)" + std::to_string(i) + R"(,"note":"sample event payload"})"};
}

inline std::unique_ptr<EventLog> open_log(const std::filesystem::path& dir, uint64_t every = 1000,
                                          bool read_only = false, rocksdb::Env* env = nullptr,
                                          const BlobStore* blobs = nullptr) {
  EventLog::Options o;
  o.signer = &test_signer();
  o.blobs = blobs;
  o.checkpoint_every = every;
  o.read_only = read_only;
  o.env = env;
  auto r = EventLog::open(dir, o);
  if (!r.ok()) throw std::runtime_error(r.status().message());
  return std::move(r).value();
}

inline VerifyReport verify(const EventLog& log, const BlobStore* blobs = nullptr) {
  VerifyOptions o;
  o.keys = {test_signer().verifier()};
  o.blobs = blobs;
  o.check_blobs = blobs != nullptr;
  return verify_log(log, o);
}

inline std::string first_problem(const VerifyReport& r) {
  return r.problems.empty() ? "" : r.problems.front().what;
}

}  // namespace aura::testing
