// The writer socket with a real runner process on the other end (fork), a real RocksDB log and
// blob store: what a run may send is recorded under its binding; every hostile frame is refused,
// closes the connection and is recorded as evidence.rejected without its bytes; the log still
// verifies.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <functional>
#include <optional>

#include "engine/blob/blob_store.h"
#include "engine/blob/evidence_ref.h"
#include "engine/events/event_types.h"
#include "engine/writer/evidence_writer.h"
#include "engine/writer/frame.h"
#include "tests/log/log_test_util.h"
#include "tests/support/wait_until.h"
#include "tests/writer/writer_lab.h"

using namespace aura;
using namespace aura::writer;
using aura::testing::WriterLab;

namespace {

constexpr std::string_view kSecret = "SECRET-BYTES-NEVER-LOGGED";

std::string probe_fields(bool truncated = false) {
  return std::string(R"({"stream":"stdout","truncated":)") + (truncated ? "true" : "false") + "}";
}

void send(int fd, std::string_view frame, int pass_fd = -1) {
  (void)send_frame(fd, frame, pass_fd);
}

// A hand-made frame: the version byte, then `rest` as it is.
std::string versioned(std::string_view rest, uint8_t version = kFrameVersion) {
  return std::string(1, char(version)) + std::string(rest);
}

// Sends `frame` with every fd of `fds` attached in one SCM_RIGHTS message.
void send_fds(int fd, std::string_view frame, const std::vector<int>& fds) {
  iovec iov{const_cast<char*>(frame.data()), frame.size()};
  std::vector<char> control(CMSG_SPACE(fds.size() * sizeof(int)));
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control.data();
  msg.msg_controllen = control.size();
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
  std::memcpy(CMSG_DATA(c), fds.data(), fds.size() * sizeof(int));
  (void)::sendmsg(fd, &msg, MSG_NOSIGNAL);
}

// `n` fresh pipe ends.
std::vector<int> pipe_fds(size_t n) {
  std::vector<int> out;
  while (out.size() < n) {
    int p[2];
    if (::pipe(p) != 0) break;
    out.push_back(p[0]);
    out.push_back(p[1]);
  }
  out.resize(std::min(out.size(), n));
  return out;
}

}  // namespace

TEST_CASE("writer: a run's evidence is recorded under its binding, never a frame's claims") {
  WriterLab lab;
  const std::string memfd_bytes = "memfd output\n" + std::string(100000, 'm');
  const auto r = lab.run([&](int fd) {
    send(fd, hello_frame(lab.token));
    send(fd, evidence_frame("probe.output", probe_fields(), "inline output\n"));
    send(fd, evidence_frame("runner.note", R"({"text":"starting the probe"})", ""));
    auto m = sealed_memfd(memfd_bytes);
    if (m.ok()) send(fd, evidence_memfd_frame("probe.output", probe_fields(true)), *m);
  });
  CHECK_FALSE(r.rejected);
  CHECK(r.accepted == 3);
  CHECK(r.frames == 4);
  const auto evs = lab.events();
  REQUIRE(evs.size() == 3);
  for (const auto& e : evs) {
    CHECK(e.type == events::kRunnerEvidence);
    CHECK(e.actor == "runner:00000000000000a1");
    CHECK(e.payload.find(
              R"("attempt":"0123456789abcdef","run":"00000000000000a1","world":"primary")") !=
          std::string::npos);
  }
  // The blobs are stored and referenced.
  auto refs = extract_refs(evs[2].payload);
  REQUIRE(refs.ok());
  REQUIRE(refs->size() == 1);
  CHECK((*refs)[0].kind == "probe.output");
  auto stored = lab.blobs->get((*refs)[0].sha256);
  REQUIRE(stored.ok());
  CHECK(*stored == memfd_bytes);
  CHECK(evs[2].payload.find(R"("truncated":true)") != std::string::npos);
  lab.check_log_verifies();
}

TEST_CASE("writer: every hostile frame is refused, closes the connection and is recorded") {
  struct Case {
    std::string name;
    std::function<void(int fd, const std::string& token)> body;
    std::string reason;  // a part of the recorded reason
  };
  const std::string secret(kSecret);
  const std::vector<Case> cases = {
      {"a forged token",
       [](int fd, const std::string&) { send(fd, hello_frame(std::string(64, 'f'))); },
       "unknown token"},
      {"a malformed token", [](int fd, const std::string&) { send(fd, hello_frame("not-hex")); },
       "64 lowercase hex"},
      {"no hello first",
       [](int fd, const std::string&) {
         send(fd, evidence_frame("probe.output", probe_fields(), "x"));
       },
       "first frame must be hello"},
      {"a second hello",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, hello_frame(t));
       },
       "a second hello"},
      {"a kind not granted",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, evidence_frame("action.output", probe_fields(), "x"));
       },
       "not granted"},
      {"a gate fact",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, evidence_frame(events::kGateFact, R"({"check":"fleet-healthy","ok":true})", ""));
       },
       "not granted"},
      {"an oversized frame",
       [secret](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, evidence_frame("probe.output", probe_fields(), secret + std::string(70000, 'x')));
       },
       "over the limit"},
      {"malformed JSON",
       [secret](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, versioned(R"({"t":"evidence","kind":)" + secret + "\n"));
       },
       "not a JSON object"},
      {"no header line",
       [secret](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, versioned(secret));
       },
       "no header line"},
      {"a field claiming the run was sandboxed",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, evidence_frame("probe.output",
                                 R"({"stream":"stdout","truncated":false,"sandboxed":true})", "x"));
       },
       "unknown member \"sandboxed\""},
      {"a header claiming resource figures",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(
             fd,
             versioned(
                 R"({"t":"evidence","kind":"probe.output","fields":{"stream":"stdout","truncated":false},"cpu_ns":1})"
                 "\n"));
       },
       "unknown member \"cpu_ns\""},
      {"a duplicate member",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd,
              versioned(R"({"t":"evidence","kind":"probe.output","kind":"runner.note","fields":{}})"
                        "\n"));
       },
       "duplicate member"},
      {"an unannounced fd",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         int p[2];
         if (::pipe(p) == 0) send(fd, evidence_frame("probe.output", probe_fields(), "x"), p[0]);
       },
       "did not announce"},
      {"a pipe passed as the memfd",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         int p[2];
         if (::pipe(p) == 0) send(fd, evidence_memfd_frame("probe.output", probe_fields()), p[0]);
       },
       "not a memfd"},
      {"an unsealed memfd",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         int m = ::memfd_create("x", MFD_ALLOW_SEALING);
         if (m >= 0 && ::write(m, "abc", 3) == 3) {
           send(fd, evidence_memfd_frame("probe.output", probe_fields()), m);
         }
       },
       "not sealed"},
      // Four fds: more than the writer's control buffer holds (room for one, rounded up).
      {"a truncated control message",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send_fds(fd, evidence_memfd_frame("probe.output", probe_fields()), pipe_fds(4));
       },
       "truncated control message"},
      {"two fds for one memfd",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send_fds(fd, evidence_memfd_frame("probe.output", probe_fields()), pipe_fds(2));
       },
       "exactly one fd"},
      {"a hello of another version",
       [](int fd, const std::string& t) { send(fd, versioned(hello_frame(t).substr(1), 2)); },
       "unknown frame version 2; this writer reads version 1 only"},
      {"a hello without a version byte (the unversioned layout)",
       [](int fd, const std::string& t) { send(fd, hello_frame(t).substr(1)); },
       "no frame version: the frame starts with '{'"},
      {"evidence of another version after a good hello",
       [secret](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, versioned(evidence_frame("probe.output", probe_fields(), secret).substr(1), 0));
       },
       "unknown frame version 0"},
      {"a frame of the version byte alone",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, versioned(""));
       },
       "no header line"},
      {"a note with a control character",
       [](int fd, const std::string& t) {
         send(fd, hello_frame(t));
         send(fd, evidence_frame("runner.note", R"({"text":"a\u0001b"})", ""));
       },
       "control character"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    WriterLab lab;
    const auto r = lab.run([&](int fd) {
      c.body(fd, lab.token);
      // After a refusal the connection is shut: a further frame fails or goes nowhere.
      send(fd, evidence_frame("probe.output", probe_fields(), "after"));
    });
    CHECK(r.rejected);
    CHECK_MESSAGE(r.reason.find(c.reason) != std::string::npos, r.reason);
    const auto evs = lab.events();
    REQUIRE(!evs.empty());
    CHECK(evs.back().type == events::kEvidenceRejected);
    CHECK(evs.back().actor == "supervisor");
    CHECK(evs.back().payload.find(R"("sha256":")") != std::string::npos);
    CHECK(evs.back().payload.find(R"("size":)") != std::string::npos);
    for (const auto& e : evs) CHECK(e.payload.find(secret) == std::string::npos);
    // Nothing after the refused frame was recorded.
    size_t rejected = 0;
    for (const auto& e : evs) rejected += e.type == events::kEvidenceRejected;
    CHECK(rejected == 1);
    CHECK(evs.back().payload.find("after") == std::string::npos);
    lab.check_log_verifies();
  }
}

TEST_CASE("writer: tokens are one-time and bound to their run") {
  WriterLab lab;
  // Run 1 uses its token.
  auto r = lab.run([&](int fd) { send(fd, hello_frame(lab.token)); });
  CHECK_FALSE(r.rejected);
  SUBCASE("a replayed token on the same run") {
    r = lab.run([&](int fd) { send(fd, hello_frame(lab.token)); });
    CHECK(r.rejected);
    CHECK(r.reason.find("already used") != std::string::npos);
  }
  SUBCASE("a token after its run ended") {
    lab.tokens.end(lab.binding.run_id);
    r = lab.run([&](int fd) { send(fd, hello_frame(lab.token)); });
    CHECK(r.rejected);
    CHECK(r.reason.find("has ended") != std::string::npos);
  }
  SUBCASE("a token of another run, for another attempt") {
    RunBinding other = lab.binding;
    other.run_id = "00000000000000b2";
    other.attempt = "fedcba9876543210";
    REQUIRE(lab.tokens.issue(other.run_id).ok());
    r = lab.run([&](int fd) { send(fd, hello_frame(lab.token)); }, aura::testing::kHangGuard,
                other);
    CHECK(r.rejected);
    CHECK(r.reason.find("another run") != std::string::npos);
  }
  lab.check_log_verifies();
}

TEST_CASE("writer: frames and bytes per run are capped") {
  WriterLab lab;
  SUBCASE("frames") {
    lab.binding.max_frames = 3;
    auto r = lab.run([&](int fd) {
      send(fd, hello_frame(lab.token));
      for (int i = 0; i < 5; ++i) send(fd, evidence_frame("runner.note", R"({"text":"n"})", ""));
    });
    CHECK(r.rejected);
    CHECK(r.accepted == 2);
    CHECK(r.reason.find("cap of 3 frames") != std::string::npos);
  }
  SUBCASE("bytes") {
    lab.binding.max_bytes = 100000;
    auto r = lab.run([&](int fd) {
      send(fd, hello_frame(lab.token));
      for (int i = 0; i < 5; ++i)
        send(fd, evidence_frame("probe.output", probe_fields(), std::string(30000, 'b')));
    });
    CHECK(r.rejected);
    CHECK(r.accepted == 3);
    CHECK(r.reason.find("cap of 100000 bytes") != std::string::npos);
  }
  SUBCASE("a binding cannot grant what no runner may send, nor raise the caps") {
    RunBinding b = lab.binding;
    b.kinds.push_back(events::kGateFact);
    CHECK(b.validate().message().find("can never be granted") != std::string::npos);
    b = lab.binding;
    b.max_bytes = kMaxBytesPerRun + 1;
    CHECK_FALSE(b.validate().is_ok());
  }
}

TEST_CASE("writer: the header limit counts the JSON after the version byte") {
  // A runner.note header padded with JSON whitespace to `bytes` bytes.
  auto note_header = [](size_t bytes) {
    std::string h = R"({"t":"evidence","kind":"runner.note","fields":{"text":"n"})";
    h.append(bytes - h.size() - 1, ' ');
    return h + "}";
  };
  WriterLab lab;
  SUBCASE("at the limit: accepted") {
    auto r = lab.run([&](int fd) {
      send(fd, hello_frame(lab.token));
      send(fd, versioned(note_header(kMaxHeaderBytes) + "\n"));
    });
    CHECK_MESSAGE(!r.rejected, r.reason);
    CHECK(r.accepted == 1);
  }
  SUBCASE("one byte over: refused") {
    auto r = lab.run([&](int fd) {
      send(fd, hello_frame(lab.token));
      send(fd, versioned(note_header(kMaxHeaderBytes + 1) + "\n"));
    });
    CHECK(r.rejected);
    CHECK(r.reason == "no header line within 4096 bytes");
  }
}

TEST_CASE("writer: a blob over the run's output bound is refused, inline or memfd, and recorded") {
  WriterLab lab;
  lab.binding.max_blob_bytes = 1000;  // a probe's max_output_bytes
  auto events_of = [&](const std::string& type) {
    int n = 0;
    for (const auto& e : lab.events()) n += e.type == type;
    return n;
  };
  SUBCASE("at the bound: accepted") {
    auto r = lab.run([&](int fd) {
      send(fd, hello_frame(lab.token));
      send(fd, evidence_frame("probe.output", probe_fields(true), std::string(1000, 'a')));
    });
    CHECK_FALSE(r.rejected);
    CHECK(r.accepted == 1);
    REQUIRE(r.frames_accepted.size() == 1);
    CHECK(r.frames_accepted[0].blob_bytes == 1000);
  }
  SUBCASE("one byte over, inline: refused, the run's rejection recorded without the bytes") {
    auto r = lab.run([&](int fd) {
      send(fd, hello_frame(lab.token));
      // It claims nothing was cut: the bound is the writer's, not the runner's word.
      send(fd, evidence_frame("probe.output", probe_fields(false),
                              std::string(kSecret) + std::string(1001 - kSecret.size(), 'a')));
    });
    CHECK(r.rejected);
    CHECK(r.accepted == 0);
    CHECK(r.reason == "a blob of 1001 bytes is over the run's output bound of 1000");
    CHECK(events_of(events::kEvidenceRejected) == 1);
    CHECK(events_of(events::kRunnerEvidence) == 0);
    for (const auto& e : lab.events()) CHECK(e.payload.find(kSecret) == std::string::npos);
  }
  SUBCASE("over, as a sealed memfd: refused before it is read") {
    auto r = lab.run([&](int fd) {
      send(fd, hello_frame(lab.token));
      auto memfd = sealed_memfd(std::string(5000, 'm'));
      if (!memfd.ok()) return;
      send(fd, evidence_memfd_frame("probe.output", probe_fields()), *memfd);
    });
    CHECK(r.rejected);
    CHECK(r.reason.find("holds 5000 bytes; at most 1000 are accepted") != std::string::npos);
    CHECK(events_of(events::kEvidenceRejected) == 1);
  }
  SUBCASE("a flood of frames each within the bound stops at the run's frame cap") {
    lab.binding.max_frames = 2;  // a runner call: the hello and one evidence frame
    auto r = lab.run([&](int fd) {
      send(fd, hello_frame(lab.token));
      for (int i = 0; i < 50; ++i)
        send(fd, evidence_frame("probe.output", probe_fields(), std::string(900, 'f')));
    });
    CHECK(r.rejected);
    CHECK(r.accepted == 1);
    CHECK(r.reason.find("cap of 2 frames") != std::string::npos);
    CHECK(events_of(events::kRunnerEvidence) == 1);
    CHECK(events_of(events::kEvidenceRejected) == 1);
  }
  SUBCASE("a binding cannot raise the blob bound past one memfd") {
    RunBinding b = lab.binding;
    b.max_blob_bytes = kMaxMemfdBytes + 1;
    CHECK_FALSE(b.validate().is_ok());
  }
  lab.check_log_verifies();
}

TEST_CASE("writer: a runner killed mid-run leaves only whole frames; a silent one times out") {
  WriterLab lab;
  auto r = lab.run([&](int fd) {
    send(fd, hello_frame(lab.token));
    send(fd, evidence_frame("runner.note", R"({"text":"one"})", ""));
    send(fd, evidence_frame("runner.note", R"({"text":"two"})", ""));
    ::raise(SIGKILL);
  });
  CHECK_FALSE(r.rejected);
  CHECK_FALSE(r.timed_out);
  CHECK(r.accepted == 2);
  CHECK(lab.events().size() == 2);

  WriterLab quiet;
  r = quiet.run(
      [&](int fd) {
        send(fd, hello_frame(quiet.token));
        ::pause();
      },
      std::chrono::milliseconds(300));
  CHECK(r.timed_out);
  CHECK(r.accepted == 0);
  lab.check_log_verifies();
}
