// The fair-share rule of the front's connections and streams (app/serve/fair_share.h): who a
// full resource takes a place back from for a newcomer, and who it refuses.
#include "app/serve/fair_share.h"

#include <doctest/doctest.h>

using aura::serve::FairShare;

TEST_CASE("fair share: the heaviest holder with two more than the asker gives one back") {
  FairShare s(6, 5);
  for (int i = 0; i < 4; ++i) s.add("a");
  s.add("b");
  s.add("b");
  CHECK(s.full());
  CHECK(s.held() == 6);
  CHECK(s.held_by("a") == 4);
  // A newcomer: both hold two more than it; the heaviest first.
  CHECK(s.over_share("c") == std::vector<std::string>{"a", "b"});
  // b (2) may take from a (4), not a from b; nobody from itself.
  CHECK(s.over_share("b") == std::vector<std::string>{"a"});
  CHECK(s.over_share("a").empty());
  // Equal heavy holders: in address order, so the choice is stable.
  FairShare t(4, 4);
  t.add("y");
  t.add("y");
  t.add("x");
  t.add("x");
  CHECK(t.over_share("z") == std::vector<std::string>{"x", "y"});
  CHECK(t.over_share("x").empty());
}

TEST_CASE("fair share: a client's own cap, and places given back") {
  FairShare s(10, 2);
  s.add("a");
  CHECK_FALSE(s.client_full("a"));
  s.add("a");
  CHECK(s.client_full("a"));
  CHECK_FALSE(s.client_full("b"));
  s.remove("a");
  CHECK_FALSE(s.client_full("a"));
  s.remove("a");
  s.remove("a");  // one more than it held: nothing to give back, no underflow
  CHECK(s.held() == 0);
  CHECK(s.held_by("a") == 0);
  CHECK(s.over_share("b").empty());
}
