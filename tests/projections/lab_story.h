// A synthetic lab history for the lab projection tests, made by the lab's one history generator
// (app/lab/synthetic_history.h, every payload through the event catalog's encoders): the
// scenario registry (loaded, reloaded, rejected), capability measurements and attempts of every
// shape (verified with a receipt, a script authorised, a second IR revision, a failed action, a
// probe without output, judge mode, abandoned), interleaved command by command as the engine
// appends them, plus events in other streams the projections must ignore.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "app/lab/synthetic_history.h"
#include "engine/blob/blob_store.h"
#include "engine/log/event_log.h"

namespace aura::testing {

// What one attempt of the story does, and so what its projected rows must say.
using AttemptPlan = app::SyntheticAttempt;

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
