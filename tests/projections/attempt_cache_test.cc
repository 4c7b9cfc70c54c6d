// app::AttemptCache (the daemon's learner reads) against the definitions it stands in for, over
// the synthetic lab story on a real log: opened between every append of the story (so each
// attempt is folded in many small steps), then given access, its state equals
// attempt::replay_attempt's and its access decisions check_access's — for the attempt's own
// token, a revoked one, another attempt's, an unknown attempt and a malformed id.
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "app/lab/access.h"
#include "engine/attempt/attempt_state.h"
#include "tests/projections/lab_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;

namespace {

void same_as_definitions(app::AttemptCache& cache, const EventLog& log, const std::string& id,
                         const std::string& token) {
  CAPTURE(id);
  auto cached = cache.open(id, token);
  Status access = app::check_access(log, id, token);
  CHECK_MESSAGE(cached.status().code() == access.code(), cached.status().message());
  if (!cached.ok()) return;
  auto replayed = attempt::replay_attempt(log, id);
  REQUIRE(replayed.ok());
  CHECK(cached->events == replayed->events);
  CHECK(cached->last_seq == replayed->last_seq);
  CHECK(cached->phase == replayed->phase);
  CHECK(cached->unlocked == replayed->unlocked);
  CHECK(cached->revision == replayed->revision);
  CHECK(cached->verdict == replayed->verdict);
  CHECK(cached->receipt_sha256 == replayed->receipt_sha256);
}

}  // namespace

TEST_CASE("attempt cache: folded step by step between appends, it answers as a full replay") {
  testing::TempDir dir;
  testing::StoryLog s(dir.path(), 1);
  app::AttemptCache cache(*s.log);
  std::vector<std::string> ids;
  for (const auto& plan : s.story.attempts)
    if (!plan.probe_without_output) ids.push_back(plan.id);  // the engine never writes that one
  REQUIRE(ids.size() >= 2);
  const app::NewToken nobody = app::new_token();
  // One event at a time; every attempt opened after each (refused: no access granted yet, but
  // folded up to the head).
  for (size_t i = 0; i < s.story.drafts.size(); ++i) {
    testing::append_story(*s.log, s.story, i, 1, 1);
    for (const auto& id : ids) {
      auto r = cache.open(id, nobody.token);
      CHECK((r.status().code() == ErrorCode::kFailedPrecondition ||
             r.status().code() == ErrorCode::kNotFound));
    }
  }
  std::map<std::string, app::NewToken> tokens;
  for (const auto& id : ids) {
    tokens[id] = app::new_token();
    REQUIRE(app::grant_access(*s.log, id, tokens[id].sha256).is_ok());
  }
  for (const auto& id : ids) {
    same_as_definitions(cache, *s.log, id, tokens[id].token);
    CHECK(cache.open(id, tokens[id].token).ok());
    same_as_definitions(cache, *s.log, id, nobody.token);
  }
  // Another attempt's token opens nothing here.
  CHECK(cache.open(ids[0], tokens[ids[1]].token).status().code() == ErrorCode::kFailedPrecondition);
  // A new token revokes the cached one.
  const app::NewToken again = app::new_token();
  REQUIRE(app::grant_access(*s.log, ids[0], again.sha256).is_ok());
  CHECK(cache.open(ids[0], tokens[ids[0]].token).status().code() == ErrorCode::kFailedPrecondition);
  same_as_definitions(cache, *s.log, ids[0], again.token);
  // Unknown and malformed attempts.
  CHECK(cache.open("0000000000000000", again.token).status().code() == ErrorCode::kNotFound);
  CHECK(cache.open("NOT-AN-ID", again.token).status().code() == ErrorCode::kInvalidArgument);
  // A cache that starts over past its bound answers the same.
  app::AttemptCache tiny(*s.log, 1);
  for (const auto& id : ids) same_as_definitions(tiny, *s.log, id, tokens[id].token);
  same_as_definitions(tiny, *s.log, ids[0], again.token);
}
