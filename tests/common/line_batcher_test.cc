// LineBatcher: lines reach the sink whole, in order, in batches; by size at once, by time from
// the flusher, and at destruction. Deadlines here are hang guards.
#include "engine/common/line_batcher.h"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace aura;
using namespace std::chrono_literals;

namespace {

struct Sink {
  std::mutex mu;
  std::string text;
  int calls = 0;
  LineBatcher::Sink fn() {
    return [this](std::string_view lines) {
      std::lock_guard lock(mu);
      text.append(lines);
      ++calls;
    };
  }
  std::string got() {
    std::lock_guard lock(mu);
    return text;
  }
};

}  // namespace

TEST_CASE("line batcher: one write for many lines, and flush() writes what waits") {
  Sink s;
  LineBatcher b(s.fn(), 60s);  // the flusher would wait a minute: only flush() writes here
  for (int i = 0; i < 100; ++i) b.add("line " + std::to_string(i));
  CHECK(s.got().empty());
  b.flush();
  std::string want;
  for (int i = 0; i < 100; ++i) want += "line " + std::to_string(i) + "\n";
  CHECK(s.got() == want);
  CHECK(s.calls == 1);
  b.flush();  // nothing waits: no call
  CHECK(s.calls == 1);
}

TEST_CASE("line batcher: a full batch is written at once") {
  Sink s;
  LineBatcher b(s.fn(), 60s, 64);
  b.add(std::string(40, 'a'));
  CHECK(s.calls == 0);
  b.add(std::string(40, 'b'));  // 82 bytes waiting: over 64
  CHECK(s.calls == 1);
  CHECK(s.got() == std::string(40, 'a') + "\n" + std::string(40, 'b') + "\n");
}

TEST_CASE("line batcher: the flusher writes a line without flush(), and destruction the rest") {
  Sink s;
  {
    LineBatcher b(s.fn(), 20ms);
    b.add("soon");
    const auto guard = std::chrono::steady_clock::now() + 30s;
    while (s.got().empty() && std::chrono::steady_clock::now() < guard) {
      std::this_thread::sleep_for(5ms);
    }
    CHECK(s.got() == "soon\n");
  }
  Sink t;
  {
    LineBatcher b(t.fn(), 60s);
    b.add("last");
  }
  CHECK(t.got() == "last\n");
}

TEST_CASE(
    "line batcher: lines added to a waiting batch, or after a full one, are written by the "
    "flusher") {
  // Only a batch's first line wakes the flusher: the others, and a batch begun just after a
  // full one was written, must still go out by the flusher's own due time.
  Sink s;
  LineBatcher b(s.fn(), 20ms, 64);
  auto wait_for = [&](const std::string& want) {
    const auto guard = std::chrono::steady_clock::now() + 30s;
    while (s.got() != want && std::chrono::steady_clock::now() < guard) {
      std::this_thread::sleep_for(5ms);
    }
    return s.got();
  };
  b.add("one");
  b.add("two");
  CHECK(wait_for("one\ntwo\n") == "one\ntwo\n");
  b.add(std::string(40, 'a'));
  b.add(std::string(40, 'b'));  // over 64: written at once, the flusher not woken
  b.add("late");
  const std::string want =
      "one\ntwo\n" + std::string(40, 'a') + "\n" + std::string(40, 'b') + "\nlate\n";
  CHECK(wait_for(want) == want);
}

TEST_CASE("line batcher: lines from many threads arrive whole, each thread's in order") {
  Sink s;
  {
    LineBatcher b(s.fn(), 1ms, 256);
    std::vector<std::thread> ts;
    for (int t = 0; t < 4; ++t) {
      ts.emplace_back([&b, t] {
        for (int i = 0; i < 2000; ++i) b.add("t" + std::to_string(t) + " " + std::to_string(i));
      });
    }
    for (auto& th : ts) th.join();
  }
  std::istringstream in(s.got());
  std::vector<int> next(4, 0);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    REQUIRE(line.size() >= 4);
    REQUIRE(line[0] == 't');
    int t = line[1] - '0';
    REQUIRE((t >= 0 && t < 4));
    CHECK(line.substr(3) == std::to_string(next[t]));
    ++next[t];
  }
  CHECK(lines == 8000);
}
