// Helpers for the lab projection tests: a log holding the synthetic lab story with its blobs,
// and whole-database snapshots (every projection's canonical dump, every query's result).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "engine/blob/blob_store.h"
#include "projections/lab/lab_projections.h"
#include "tests/log/log_test_util.h"
#include "tests/projections/lab_story.h"
#include "tests/projections/projection_test_util.h"

namespace aura::testing {

// A log in DIR/log with its blobs in DIR/blobs (the data folder layout) and the story's drafts.
struct StoryLog {
  StoryLog(const std::filesystem::path& dir, int rounds)
      : blobs(must(BlobStore::open(dir / "blobs"))),
        log(open_log(dir / "log", 1000, false, nullptr, &blobs)),
        story(make_lab_story(blobs, rounds)) {}

  void append_all_of_story(size_t group = 64) {
    append_story(*log, story, 0, story.drafts.size(), group);
  }

  BlobStore blobs;
  std::unique_ptr<EventLog> log;
  LabStory story;
};

inline std::unique_ptr<lab::LabProjections> open_lab(const EventLog& log,
                                                     const std::filesystem::path& file) {
  return must(lab::LabProjections::open(log, file));
}

// "== <name>\n<canonical dump>" for every projection, in order.
inline std::string dump_all(lab::LabProjections& p) {
  std::string out;
  for (const auto& projection : p.projections()) {
    out +=
        "== " + std::string(projection->name()) + "\n" + must(canonical_dump(p.db(), *projection));
  }
  return out;
}

// Every query's answer: the registry, the attempt list, each attempt in full, the capability
// panel and the labs.
inline std::string query_all(lab::LabProjections& p) {
  std::string out = lab::rows_json(must(p.scenarios())) + "\n";
  const lab::Rows attempts = must(p.attempts());
  out += lab::rows_json(attempts) + "\n";
  for (size_t r = 0; r < attempts.rows.size(); ++r) {
    auto detail = must(p.attempt(attempts.get(r, "attempt")->s));
    if (!detail) throw std::runtime_error("attempt listed but not found");
    out += detail->json() + "\n";
  }
  out += lab::rows_json(must(p.capabilities())) + "\n";
  out += lab::rows_json(must(p.labs())) + "\n";
  return out;
}

}  // namespace aura::testing
