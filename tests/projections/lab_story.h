// A synthetic lab history for the lab projection tests, following docs/ATTEMPTS.md: the scenario
// registry (loaded, reloaded, rejected) and attempts of every shape (verified with a receipt, a
// script authorised, a second IR revision, a failed action, a probe without output, judge mode,
// abandoned), interleaved command by command as the engine would append them, plus events in
// other streams the projections must ignore.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/log/event_log.h"

namespace aura::testing {

// What one attempt of the story does, and so what its projected rows must say.
struct AttemptPlan {
  std::string id;                // 16 lowercase hex
  std::string mode = "learn";    // learn | judge
  std::string verdict;           // VERIFIED | RECOVERED_UNPROVEN | NOT_RECOVERED; empty: abandoned
  bool script = false;           // the IR carries a script, authorised before apply
  bool second_revision = false;  // the contract is revised once (revision 2)
  bool failed_action = false;    // the apply action exits 1 with an error
  bool probe_without_output = false;  // probe 2 completes with no ref (no evidence row)
  bool coach = false;                 // a coach.used event in the stream
  int probes = 2;
};

struct LabStory {
  std::vector<EventDraft> drafts;  // for an empty log: drafts[i] gets seq i + 1
  std::vector<AttemptPlan> attempts;
  // Stream and type of every event, with the seq it gets, for tests that look one up.
  uint64_t find(std::string_view stream, std::string_view type, int nth = 0) const;
};

// Stores the story's blobs in `blobs` and returns the story: `rounds` copies of six attempt
// shapes (distinct IDs per round), interleaved.
LabStory make_lab_story(BlobStore& blobs, int rounds = 1);

// Appends drafts[from, from + count) in append_all groups of at most `group` events.
void append_story(EventLog& log, const LabStory& story, size_t from, size_t count,
                  size_t group = 64);

}  // namespace aura::testing
