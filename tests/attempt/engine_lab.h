// A real lab for the attempt engine tests: a copy of the t0-config-drift package signed and
// loaded by the real `aura setup`, then the data folder opened in-process (RocksDB log, blob
// store, lab key, publisher trust store) with an AttemptEngine over the filetree driver.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "engine/attempt/attempt_engine.h"
#include "engine/blob/blob_store.h"
#include "engine/keys/key_store.h"
#include "engine/log/data_dir.h"
#include "engine/log/event_log.h"
#include "engine/package/trust_store.h"
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
  std::optional<DataDir> dir;
  std::optional<BlobStore> blobs;
  std::unique_ptr<EventLog> log;
  std::optional<KeyStore> keys;
  TrustStore trust;
  scenario::Manifest manifest;
  std::unique_ptr<attempt::AttemptEngine> engine;

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
