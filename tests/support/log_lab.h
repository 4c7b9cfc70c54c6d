// A real event log and blob store in a fresh temporary folder: DIR/data/log and DIR/data/blobs,
// the log signing checkpoints with the test key and checking refs against the store.
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <memory>
#include <optional>

#include "engine/blob/blob_store.h"
#include "engine/log/event_log.h"
#include "tests/log/log_test_util.h"
#include "tests/support/temp_dir.h"

namespace aura::testing {

struct LogLab {
  TempDir dir;
  std::optional<BlobStore> blobs;
  std::unique_ptr<EventLog> log;

  LogLab() {
    std::filesystem::create_directories(data());
    auto b = BlobStore::open(data() / "blobs");
    REQUIRE(b.ok());
    blobs.emplace(std::move(b).value());
    log = open_log(data() / "log", 1000, false, nullptr, &*blobs);
  }
  std::filesystem::path data() const { return dir / "data"; }
};

}  // namespace aura::testing
