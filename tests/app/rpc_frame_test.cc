// The daemon protocol's frames and messages (docs/formats/daemon-protocol.md): the test vector
// byte for byte, header refusals, caps, timeouts and the strict request/reply readers.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <string>
#include <thread>

#include "app/rpc/frame.h"
#include "app/rpc/message.h"

using namespace aura;
using namespace aura::rpc;

namespace {

std::string hex(std::string_view b) {
  static const char* d = "0123456789abcdef";
  std::string o;
  for (unsigned char c : b) {
    o += d[c >> 4];
    o += d[c & 15];
  }
  return o;
}

struct Pair {
  int a = -1, b = -1;
  Pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
    a = fds[0];
    b = fds[1];
  }
  ~Pair() {
    if (a >= 0) ::close(a);
    if (b >= 0) ::close(b);
  }
};

Result<Header> header_of(std::string bytes) {
  std::array<uint8_t, kHeaderBytes> h{};
  for (size_t i = 0; i < kHeaderBytes; ++i) h[i] = uint8_t(bytes[i]);
  return decode_header(h);
}

}  // namespace

TEST_CASE("the documented test vector, byte for byte") {
  Request r;
  r.op = "health";
  r.request_id = "0123456789abcdef";
  std::string body = r.encode();
  CHECK(body == R"({"v":1,"op":"health","request_id":"0123456789abcdef","args":{}})");
  auto f = encode_frame(Kind::kRequest, body);
  REQUIRE(f.ok());
  CHECK(hex(*f) ==
        "414401010000003f7b2276223a312c226f70223a226865616c7468222c22726571756573745f6964223a22"
        "30313233343536373839616263646566222c2261726773223a7b7d7d");
}

TEST_CASE("headers: magic, version, kind and caps are refused before the body") {
  std::string good = *encode_frame(Kind::kRequest, "{}");
  CHECK(header_of(good).ok());
  std::string bad = good;
  bad[0] = 'X';
  CHECK(header_of(bad).status().message().find("magic") != std::string::npos);
  bad = good;
  bad[2] = 2;
  CHECK(header_of(bad).status().message().find("version 2") != std::string::npos);
  bad = good;
  bad[3] = 9;
  CHECK(header_of(bad).status().message().find("kind 9") != std::string::npos);
  // A request length one over its cap.
  bad = good;
  uint32_t n = uint32_t(kMaxRequestBytes + 1);
  bad[4] = char(n >> 24);
  bad[5] = char(n >> 16);
  bad[6] = char(n >> 8);
  bad[7] = char(n);
  CHECK(header_of(bad).status().message().find("over its cap") != std::string::npos);
  // A keep-alive has no body.
  bad = *encode_frame(Kind::kKeepAlive, "");
  bad[7] = 1;
  CHECK(!header_of(bad).ok());
  CHECK(!encode_frame(Kind::kRequest, std::string(kMaxRequestBytes + 1, ' ')).ok());
}

TEST_CASE("read_frame: a frame, an orderly close, a stall inside a frame") {
  Pair p;
  REQUIRE(write_frame(p.a, Kind::kReply, "{\"x\":1}", std::chrono::seconds(1)).is_ok());
  auto f = read_frame(p.b, std::chrono::seconds(1), std::chrono::seconds(1));
  REQUIRE(f.ok());
  REQUIRE(f->has_value());
  CHECK((*f)->kind == Kind::kReply);
  CHECK((*f)->body == "{\"x\":1}");

  // Nothing comes: the idle wait ends with an error, not a frame.
  auto idle = read_frame(p.b, std::chrono::milliseconds(50), std::chrono::seconds(1));
  CHECK(!idle.ok());

  // Half a header, then nothing: the whole-frame deadline ends it.
  std::string half = encode_frame(Kind::kRequest, "{}")->substr(0, 4);
  REQUIRE(::send(p.a, half.data(), half.size(), 0) == 4);
  auto stalled = read_frame(p.b, std::chrono::seconds(1), std::chrono::milliseconds(100));
  CHECK(!stalled.ok());
  CHECK(stalled.status().message().find("timed out") != std::string::npos);

  // The peer closes before a frame: an orderly end (nullopt).
  Pair q;
  ::close(q.a);
  q.a = -1;
  auto closed = read_frame(q.b, std::chrono::seconds(1), std::chrono::seconds(1));
  REQUIRE(closed.ok());
  CHECK(!closed->has_value());
}

TEST_CASE("FrameBuffer: a frame only once whole, byte by byte; a bad header before its body") {
  FrameBuffer b;
  const std::string one = *encode_frame(Kind::kReply, "{\"a\":1}");
  for (size_t i = 0; i + 1 < one.size(); ++i) {
    b.append(one.data() + i, 1);
    auto f = b.take();
    REQUIRE(f.ok());
    CHECK(!f->has_value());
    CHECK(!b.empty());
  }
  b.append(one.data() + one.size() - 1, 1);
  auto f = b.take();
  REQUIRE((f.ok() && f->has_value()));
  CHECK((*f)->body == "{\"a\":1}");
  CHECK(b.empty());
  // A header no frame has: refused with its 8 bytes, whatever body length it claims.
  std::string bad = encode_frame(Kind::kRequest, "{}")->substr(0, kHeaderBytes);
  bad[2] = 9;  // version
  b.append(bad.data(), bad.size());
  auto refused = b.take();
  CHECK(!refused.ok());
  CHECK(refused.status().message().find("version 9") != std::string::npos);
}

TEST_CASE("FrameReader: frames that arrive together, split, after a bad header, and a close") {
  Pair p;
  // Two frames in one write: two frames, in order, the second from what the first read left.
  std::string two = *encode_frame(Kind::kRequest, "{\"n\":1}") + *encode_frame(Kind::kEvent, "e");
  REQUIRE(::send(p.a, two.data(), two.size(), 0) == ssize_t(two.size()));
  FrameReader r(p.b);
  auto f1 = r.next(std::chrono::seconds(1), std::chrono::seconds(1));
  auto f2 = r.next(std::chrono::seconds(1), std::chrono::seconds(1));
  REQUIRE((f1.ok() && f1->has_value() && f2.ok() && f2->has_value()));
  CHECK((*f1)->body == "{\"n\":1}");
  CHECK((*f2)->kind == Kind::kEvent);
  CHECK((*f2)->body == "e");

  // One frame over a 70,000-byte body (more than one read's chunk), sent in three parts.
  std::string big = *encode_frame(Kind::kReply, std::string(70000, 'x'));
  // The sender thread only records what its sends did (doctest's assertions belong to the
  // test's own thread); the test checks it after the join.
  bool sent_whole = true;
  std::thread sender([&] {
    for (size_t at = 0; at < big.size(); at += 30000) {
      size_t n = std::min<size_t>(30000, big.size() - at);
      if (::send(p.a, big.data() + at, n, 0) != ssize_t(n)) {
        sent_whole = false;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  auto f3 = r.next(std::chrono::seconds(5), std::chrono::seconds(5));
  sender.join();
  REQUIRE(sent_whole);
  REQUIRE((f3.ok() && f3->has_value()));
  CHECK((*f3)->body == std::string(70000, 'x'));

  // Half a header, then nothing: the whole-frame deadline ends it.
  std::string half = encode_frame(Kind::kRequest, "{}")->substr(0, 4);
  REQUIRE(::send(p.a, half.data(), half.size(), 0) == 4);
  auto stalled = r.next(std::chrono::seconds(1), std::chrono::milliseconds(100));
  CHECK(!stalled.ok());

  // A header that is not the protocol's is refused before its body.
  Pair q;
  std::string bad = *encode_frame(Kind::kRequest, "{}");
  bad[0] = 'X';
  REQUIRE(::send(q.a, bad.data(), bad.size(), 0) == ssize_t(bad.size()));
  FrameReader rq(q.b);
  auto refused = rq.next(std::chrono::seconds(1), std::chrono::seconds(1));
  CHECK(!refused.ok());
  CHECK(refused.status().message().find("bad magic") != std::string::npos);

  // The peer closes between frames: an orderly end; inside a frame: an error.
  Pair c;
  std::string one = *encode_frame(Kind::kRequest, "{}");
  REQUIRE(::send(c.a, one.data(), one.size(), 0) == ssize_t(one.size()));
  REQUIRE(::send(c.a, one.data(), 5, 0) == 5);
  ::close(c.a);
  c.a = -1;
  FrameReader rc(c.b);
  auto whole = rc.next(std::chrono::seconds(1), std::chrono::seconds(1));
  REQUIRE((whole.ok() && whole->has_value()));
  auto cut = rc.next(std::chrono::seconds(1), std::chrono::seconds(1));
  CHECK(!cut.ok());
  Pair e;
  ::close(e.a);
  e.a = -1;
  FrameReader re(e.b);
  auto end = re.next(std::chrono::seconds(1), std::chrono::seconds(1));
  REQUIRE(end.ok());
  CHECK(!end->has_value());
}

TEST_CASE("FrameReader::ready: frames already sent are seen without waiting; write_frames") {
  Pair p;
  FrameReader r(p.b);
  // Nothing sent: not ready, and asking does not wait.
  auto t0 = std::chrono::steady_clock::now();
  CHECK(!r.ready());
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(1));
  // Three frames in one write_frames: ready before each of the three, not after.
  std::string three = *encode_frame(Kind::kRequest, "{\"n\":1}") +
                      *encode_frame(Kind::kRequest, "{\"n\":2}") +
                      *encode_frame(Kind::kRequest, "{\"n\":3}");
  REQUIRE(write_frames(p.a, three, std::chrono::seconds(1)).is_ok());
  for (int n = 1; n <= 3; ++n) {
    CHECK(r.ready());
    auto f = r.next(std::chrono::seconds(1), std::chrono::seconds(1));
    REQUIRE((f.ok() && f->has_value()));
    CHECK((*f)->body == "{\"n\":" + std::to_string(n) + "}");
  }
  CHECK(!r.ready());
  // Part of a frame is not ready; its rest makes it so.
  std::string one = *encode_frame(Kind::kRequest, "{\"n\":4}");
  REQUIRE(::send(p.a, one.data(), 10, 0) == 10);
  CHECK(!r.ready());
  REQUIRE(::send(p.a, one.data() + 10, one.size() - 10, 0) == ssize_t(one.size() - 10));
  CHECK(r.ready());
  auto f4 = r.next(std::chrono::seconds(1), std::chrono::seconds(1));
  REQUIRE((f4.ok() && f4->has_value()));
  CHECK((*f4)->body == "{\"n\":4}");
  // A bad header is ready at once (next() refuses it without waiting for a body).
  std::string bad = *encode_frame(Kind::kRequest, "{}");
  bad[2] = 9;
  REQUIRE(::send(p.a, bad.data(), kHeaderBytes, 0) == ssize_t(kHeaderBytes));
  CHECK(r.ready());
  CHECK(!r.next(std::chrono::seconds(1), std::chrono::seconds(1)).ok());

  FrameBuffer b;
  CHECK(!b.has_frame());
  b.append(one.data(), one.size() - 1);
  CHECK(!b.has_frame());
  b.append(one.data() + one.size() - 1, 1);
  CHECK(b.has_frame());
  REQUIRE(b.take().ok());
  CHECK(!b.has_frame());
}

TEST_CASE("requests are read strictly, naming the JSON path") {
  auto ok = parse_request(
      R"({"v":1,"op":"attempt.state","request_id":"00000000000000aa",)"
      R"("auth":{"token":"0000000000000000000000000000000000000000000000000000000000000001"},)"
      R"("args":{"attempt":"0123456789abcdef"}})");
  REQUIRE(ok.ok());
  CHECK(ok->op == "attempt.state");
  CHECK(ok->auth == AuthKind::kToken);
  CHECK(ok->args_json == R"({"attempt":"0123456789abcdef"})");

  auto err = [](std::string_view body) {
    auto r = parse_request(body);
    REQUIRE(!r.ok());
    return r.status().message();
  };
  CHECK(err(R"({"op":"health","v":1,"request_id":"00000000000000aa"})").find("first") !=
        std::string::npos);
  CHECK(err(R"({"v":2,"op":"health","request_id":"00000000000000aa"})").find("version 2") !=
        std::string::npos);
  CHECK(err(R"({"v":1,"op":"health","request_id":"00000000000000aa","extra":1})").find("$.extra") !=
        std::string::npos);
  CHECK(err(R"({"v":1,"op":"health","request_id":"00000000000000aa","args":{"a":1,"a":2}})")
            .find("$.args") != std::string::npos);
  CHECK(err(R"({"v":1,"op":"Health","request_id":"00000000000000aa"})").find("$.op") !=
        std::string::npos);
  CHECK(err(R"({"v":1,"op":"health","request_id":"00000000000000AA"})").find("$.request_id") !=
        std::string::npos);
  CHECK(err(R"({"v":1,"op":"health","request_id":"00000000000000aa","auth":{"token":"ab"}})")
            .find("$.auth.token") != std::string::npos);
  CHECK(err(R"({"v":1,"op":"health","request_id":"00000000000000aa","args":[]})").find("$.args") !=
        std::string::npos);
  // Nesting past 32.
  std::string deep = R"({"v":1,"op":"health","request_id":"00000000000000aa","args":)";
  for (int i = 0; i < 40; ++i) deep += "{\"a\":";
  deep += "1";
  for (int i = 0; i < 41; ++i) deep += "}";
  CHECK(!parse_request(deep).ok());
}

TEST_CASE("replies round trip, errors with their fields") {
  Reply r;
  r.request_id = "00000000000000aa";
  r.status = 409;
  ApiError e = api_error(409, "out_of_phase", "probe needs phase inspect");
  e.phase = "observe";
  e.expected = {"predict"};
  e.next = "aura attempt predict";
  r.error = e;
  auto back = parse_reply(r.encode());
  REQUIRE(back.ok());
  REQUIRE(back->error.has_value());
  CHECK(back->status == 409);
  CHECK(back->error->phase == "observe");
  CHECK(back->error->expected == std::vector<std::string>{"predict"});
  CHECK(back->error->next == "aura attempt predict");

  Reply ok;
  ok.request_id = "00000000000000bb";
  ok.body_json = R"({"a":[1,2]})";
  auto b = parse_reply(ok.encode());
  REQUIRE(b.ok());
  CHECK(!b->error);
  CHECK(b->body_json == R"({"a":[1,2]})");
  CHECK(!parse_reply(R"({"v":1,"request_id":"00000000000000bb","status":700,"body":{}})").ok());
}
