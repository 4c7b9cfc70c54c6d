// A real lab for the attempt engine tests: a copy of the t0-config-drift package signed and
// loaded by the real `aura setup`, then the data folder opened in-process by the session every
// front end opens (app/lab/session.h: RocksDB log, blob store, lab key, publisher trust store,
// drivers wired to the lab's supervisor state) with receipts bound to a fixed build digest.
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "app/lab/session.h"
#include "engine/scenario/manifest.h"
#include "tests/cli/cli_util.h"

namespace aura::testing {

inline constexpr std::string_view kT0 = "t0-config-drift";

// Copies the t0 package (without signature files) to `dest` (its scenarios folder).
void copy_t0_package(const std::filesystem::path& scenarios_dir);

class EngineLab {
 public:
  EngineLab();
  ~EngineLab();

  Lab lab;
  std::filesystem::path package_dir;  // the signed copy
  scenario::Manifest manifest;
  std::unique_ptr<app::Session> session;
  // The open session's parts (null while closed).
  EventLog* log = nullptr;
  BlobStore* blobs = nullptr;
  KeyStore* keys = nullptr;
  attempt::AttemptEngine* engine = nullptr;

  // Closes the data folder (so the `aura` binary can open it) and reopens it.
  void close();
  void reopen();

  const scenario::JudgeCase& judge(std::string_view name) const;
  // Starts an attempt (REQUIREd), records a prediction and runs the judge case's probes.
  std::string start_and_probe(std::string_view judge_case, std::string_view learner = "alice",
                              std::string_view mode = "learn");
  // Then submits its IR and walks apply, ack and verify (each REQUIREd).
  std::string up_to_gate(std::string_view judge_case, std::string_view learner = "alice",
                         std::string_view mode = "learn");
};

}  // namespace aura::testing
