// The engine daemon, as a real process (`aura daemon`) on a fresh lab, through its socket with
// the real client: every op class, the credential checks done by the daemon itself, streams that
// resume from a log seq, peers it refuses, the judge queue, and a whole t0 attempt whose every
// answer is scanned for what a learner must never see (the scenario's worlds, its checks'
// parameters, its judge cases, another attempt's data).
#include <doctest/doctest.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "app/rpc/client.h"
#include "app/rpc/frame.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "engine/json/json_reader.h"
#include "engine/keys/key_store.h"
#include "engine/merkle/merkle.h"
#include "engine/scenario/manifest.h"
#include "tests/app/daemon_proc.h"
#include "tests/app/learner_secrets.h"
#include "tests/cli/cli_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

using aura::testing::DaemonProc;
using aura::testing::env;
using aura::testing::hidden_strings;
using aura::testing::member;
using aura::testing::quoted;
using aura::testing::t0_manifest;

namespace {

// The status of one call made as the front's user (aura-web, created when missing, as `aura
// setup` would), from a child that drops to it; 0 when no reply came.
int status_as_front(DaemonProc& d, const std::string& op, const std::string& args,
                    rpc::AuthKind auth = rpc::AuthKind::kNone, const std::string& secret = "") {
  if (::getpwnam("aura-web") == nullptr) {
    REQUIRE(std::system("useradd --system --no-create-home --shell /usr/sbin/nologin aura-web") ==
            0);
  }
  const passwd* web = ::getpwnam("aura-web");
  REQUIRE(web != nullptr);
  ::chmod(d.dir.path().c_str(), 0755);  // the socket's folder is the front's to reach
  int p[2];
  REQUIRE(::pipe(p) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(p[0]);
    int status = 0;
    if (::setgid(web->pw_gid) == 0 && ::setuid(web->pw_uid) == 0) {
      status = d.call(op, args, auth, secret, 30s).status;
    }
    (void)!::write(p[1], &status, sizeof status);
    ::_exit(0);
  }
  ::close(p[1]);
  int status = 0;
  if (::read(p[0], &status, sizeof status) != sizeof status) status = -1;
  ::close(p[0]);
  ::waitpid(child, nullptr, 0);
  return status;
}

// A raw connection to the daemon's socket (REQUIREd), for bytes the client would never send.
int connect_raw(const fs::path& socket) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket.c_str(), sizeof addr.sun_path - 1);
  REQUIRE(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  return fd;
}

}  // namespace

TEST_CASE("public reads, malformed args, unknown ops; the daemon keeps serving") {
  DaemonProc d;
  auto h = d.call("health");
  CHECK(h.status == 200);
  CHECK(member(h.body_json, "status") == "ok");
  auto caps = d.call("capabilities");
  CHECK(caps.status == 200);
  CHECK(caps.body_json.find("\"o2-service-chain\"") != std::string::npos);
  CHECK(caps.body_json.find("\"sched_ext\"") != std::string::npos);
  auto list = d.call("scenarios.list");
  CHECK(list.status == 200);
  CHECK(list.body_json.find("t0-config-drift") != std::string::npos);
  auto t0 = d.call("scenarios.get", R"({"scenario":"t0"})");
  REQUIRE(t0.status == 200);
  CHECK(member(t0.body_json, "id") == "t0-config-drift");
  for (const auto& s : hidden_strings(t0_manifest())) {
    CHECK_MESSAGE(t0.body_json.find(s) == std::string::npos, "scenarios.get shows: " << s);
  }
  CHECK(d.call("scenarios.get", R"({"scenario":"nope"})").status == 404);

  // Malformed: a missing member, a wrong type, an unknown member, each named by its path.
  auto bad = d.call("attempt.create", R"({})");
  CHECK(bad.status == 400);
  REQUIRE(bad.error);
  CHECK(bad.error->message.find("scenario") != std::string::npos);
  bad = d.call("attempt.create", R"({"scenario":7})");
  CHECK(bad.status == 400);
  bad = d.call("attempt.create", R"({"scenario":"t0","x":1})");
  CHECK(bad.status == 400);
  CHECK(bad.error->message.find("x") != std::string::npos);
  bad = d.call("attempt.create", R"({"scenario":"t0","learner":"Root!"})");
  CHECK(bad.status == 400);
  auto unknown = d.call("no.such.op");
  CHECK(unknown.status == 404);
  CHECK(!unknown.error->expected.empty());
  CHECK(d.call("health").status == 200);

  // Pipelined: requests sent in one write without waiting are answered in their order, each
  // by its own reply, a malformed one in its place; the connection then serves on.
  {
    const int fd = connect_raw(d.socket);
    struct Sent {
      std::string id;
      int status;
    };
    std::vector<Sent> sent;
    std::string bytes;
    auto add = [&](const std::string& op, const std::string& args, int status) {
      rpc::Request r{op, rpc::new_request_id(), rpc::AuthKind::kNone, "", args};
      sent.push_back({r.request_id, status});
      bytes += *rpc::encode_frame(rpc::Kind::kRequest, r.encode());
    };
    for (int i = 0; i < 40; ++i) {
      add("health", "{}", 200);
      add("scenarios.get", R"({"scenario":"nope"})", 404);
      add("attempt.state", R"({"attempt":"not-an-id"})", 400);
    }
    sent.push_back({std::string(16, '0'), 400});  // no request_id: 400, answered as all zeros
    bytes += *rpc::encode_frame(rpc::Kind::kRequest, R"({"v":1,"op":"health"})");
    add("health", "{}", 200);
    REQUIRE(rpc::write_frames(fd, bytes, 10s).is_ok());
    rpc::FrameReader frames(fd);
    for (size_t i = 0; i < sent.size(); ++i) {
      auto f = frames.next(30s, 30s);
      REQUIRE((f.ok() && f->has_value()));
      auto reply = rpc::parse_reply((*f)->body);
      REQUIRE(reply.ok());
      CHECK_MESSAGE(reply->request_id == sent[i].id, "reply " << i);
      CHECK_MESSAGE(reply->status == sent[i].status, "reply " << i);
    }
    rpc::Request again{"health", rpc::new_request_id(), rpc::AuthKind::kNone, "", "{}"};
    REQUIRE(rpc::write_frame(fd, rpc::Kind::kRequest, again.encode(), 10s).is_ok());
    auto f = frames.next(30s, 30s);
    REQUIRE((f.ok() && f->has_value()));
    CHECK(rpc::parse_reply((*f)->body)->request_id == again.request_id);
    ::close(fd);
  }
  // A header the daemon refuses (another version, a 4 GiB length, a bad magic) gets a 400
  // naming it before the connection closes, as the protocol promises.
  for (const auto& [what, header] :
       {std::pair<const char*, std::string>{"version", std::string("AD\x02\x01\0\0\0\x02", 8)},
        {"4 GiB", std::string("AD\x01\x01\xff\xff\xff\xff", 8)},
        {"magic", std::string("XY\x01\x01\0\0\0\x02", 8)}}) {
    INFO(what);
    const int fd = connect_raw(d.socket);
    REQUIRE(rpc::write_frames(fd, header + "{}", 10s).is_ok());
    rpc::FrameReader frames(fd);
    auto f = frames.next(30s, 30s);
    REQUIRE((f.ok() && f->has_value()));
    auto reply = rpc::parse_reply((*f)->body);
    REQUIRE(reply.ok());
    CHECK(reply->status == 400);
    REQUIRE(reply->error);
    CHECK(reply->error->message.find("daemon protocol") != std::string::npos);
    auto after = frames.next(30s, 30s);  // then the connection ends
    CHECK((after.ok() && !after->has_value()));
    ::close(fd);
  }
  CHECK(d.stop() == 0);
}

TEST_CASE("credentials are checked by the daemon: none, another attempt's, revoked, operator") {
  DaemonProc d;
  auto a = d.call("attempt.create", R"({"scenario":"t0"})");
  auto b = d.call("attempt.create", R"({"scenario":"t0","learner":"bea"})");
  REQUIRE(a.status == 201);
  REQUIRE(b.status == 201);
  const std::string ida = member(a.body_json, "attempt"), capa = member(a.body_json, "token");
  const std::string idb = member(b.body_json, "attempt"), capb = member(b.body_json, "token");
  CHECK(capa.size() == 64);
  CHECK(capa != capb);
  const std::string args_a = "{\"attempt\":" + quoted(ida) + "}";
  CHECK(d.call("attempt.state", args_a, rpc::AuthKind::kToken, capa).status == 200);
  // From the front, no token: 401. Root on the machine (the CLI) needs none.
  CHECK(status_as_front(d, "attempt.state", args_a) == 401);
  CHECK(status_as_front(d, "attempt.state", args_a, rpc::AuthKind::kToken, capb) == 403);
  CHECK(status_as_front(d, "attempt.state", args_a, rpc::AuthKind::kToken, capa) == 200);
  CHECK(d.call("attempt.state", args_a).status == 200);
  // B's token does not open A, and an unknown attempt reads the same as a wrong one.
  CHECK(d.call("attempt.state", args_a, rpc::AuthKind::kToken, capb).status == 403);
  CHECK(d.call("attempt.state", R"({"attempt":"0123456789abcdef"})", rpc::AuthKind::kToken, capa)
            .status == 403);
  // The token is never stored: not in the log's files.
  std::string all;
  for (const auto& e : fs::recursive_directory_iterator(d.dir / "data")) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    all += s.str();
  }
  CHECK(all.find(capa) == std::string::npos);
  // Replacing it revokes the old one.
  auto rot = d.call("attempt.token", args_a, rpc::AuthKind::kToken, capa);
  REQUIRE(rot.status == 200);
  std::string capa2 = member(rot.body_json, "token");
  CHECK(d.call("attempt.state", args_a, rpc::AuthKind::kToken, capa).status == 403);
  CHECK(d.call("attempt.state", args_a, rpc::AuthKind::kToken, capa2).status == 200);
  // Operator ops: from the front, no token 401, a wrong one 403, the file's 200; the file is
  // read each time. Root on the machine (the CLI) needs none.
  CHECK(status_as_front(d, "operator.checkpoint", "{}") == 401);
  CHECK(status_as_front(d, "operator.checkpoint", "{}", rpc::AuthKind::kOperator,
                        std::string(40, 'x')) == 403);
  CHECK(status_as_front(d, "operator.checkpoint", "{}", rpc::AuthKind::kOperator,
                        std::string(40, 'k')) == 200);
  CHECK(d.call("operator.checkpoint").status == 200);
  CHECK(
      d.call("operator.checkpoint", "{}", rpc::AuthKind::kOperator, std::string(40, 'x')).status ==
      403);
  CHECK(
      d.call("operator.checkpoint", "{}", rpc::AuthKind::kOperator, std::string(40, 'k')).status ==
      200);
  std::ofstream(d.dir / "operator.token") << std::string(48, 'n') << "\n";
  CHECK(
      d.call("operator.checkpoint", "{}", rpc::AuthKind::kOperator, std::string(40, 'k')).status ==
      403);
  CHECK(d.call("operator.verify", "{}", rpc::AuthKind::kOperator, std::string(48, 'n')).status ==
        200);
  // Verifying while appends go on (each replacement of a token is one): every verification
  // holds; none mistakes an append made during it for corruption.
  {
    std::atomic<bool> stop{false};
    std::string cap_now = capa2;
    std::thread appender([&] {
      while (!stop) {
        auto r = d.call("attempt.token", args_a, rpc::AuthKind::kToken, cap_now);
        if (r.status == 200) cap_now = member(r.body_json, "token");
      }
    });
    int held = 0;
    for (int i = 0; i < 20; ++i) {
      auto v = d.call("operator.verify", "{}", rpc::AuthKind::kOperator, std::string(48, 'n'));
      CHECK_MESSAGE(member(v.body_json, "ok") == "true", v.body_json);
      held += member(v.body_json, "ok") == "true";
    }
    stop = true;
    appender.join();
    CHECK(held == 20);
    capa2 = cap_now;
  }
  // A snapshot while the daemon holds the data folder: a signed copy beside it.
  auto snap = d.call("operator.snapshot", "{}", rpc::AuthKind::kOperator, std::string(48, 'n'));
  REQUIRE(snap.status == 200);
  CHECK(fs::exists(fs::path(member(snap.body_json, "path")) / "log"));
  // A folder of one's choosing only from root: the front (even with the operator token) may not
  // make the daemon write as root where it likes.
  const std::string chosen = quoted((d.dir / "chosen-snapshot").string());
  CHECK(status_as_front(d, "operator.snapshot", "{\"out\":" + chosen + "}",
                        rpc::AuthKind::kOperator, std::string(48, 'n')) == 403);
  CHECK(!fs::exists(d.dir / "chosen-snapshot"));
  CHECK(d.call("operator.snapshot", R"({"out":"relative/path"})").status == 400);
  auto mine = d.call("operator.snapshot", "{\"out\":" + chosen + "}");
  REQUIRE(mine.status == 200);
  CHECK(fs::exists(d.dir / "chosen-snapshot" / "log"));
  // The token never reaches the daemon's log.
  CHECK(d.log_text().find(std::string(40, 'k')) == std::string::npos);
  CHECK(d.log_text().find(capa2) == std::string::npos);
}

TEST_CASE("a peer that is neither root nor the front's user gets no answer") {
  DaemonProc d;
  const passwd* nobody = ::getpwnam("nobody");
  REQUIRE(nobody != nullptr);
  // The socket's folder is closed to others; reach the socket through an open copy of its fd.
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (::setgid(nobody->pw_gid) != 0 || ::setuid(nobody->pw_uid) != 0) ::_exit(2);
    auto c = rpc::Client::connect(d.socket);
    // EACCES on the folder (0750 root) or a closed connection: no reply either way.
    if (!c.ok()) ::_exit(0);
    rpc::Request r;
    r.op = "health";
    r.request_id = rpc::new_request_id();
    ::_exit(c->call(r, 5s).ok() ? 1 : 0);
  }
  int st = 0;
  ::waitpid(child, &st, 0);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 0);
  CHECK(d.call("health").status == 200);
}

TEST_CASE("a whole t0 attempt through the daemon; nothing hidden in any answer; streams resume") {
  DaemonProc d;
  const scenario::Manifest m = t0_manifest();
  const scenario::JudgeCase* gold = m.find_judge("gold");
  REQUIRE(gold != nullptr);
  std::vector<std::string> answers;  // every body a learner was sent
  auto other = d.call("attempt.create", R"({"scenario":"t0","learner":"other"})");
  REQUIRE(other.status == 201);
  const std::string other_id = member(other.body_json, "attempt");

  auto created = d.call("attempt.create", R"({"scenario":"t0-config-drift"})");
  REQUIRE(created.status == 201);
  answers.push_back(created.body_json);
  const std::string id = member(created.body_json, "attempt");
  const std::string cap = member(created.body_json, "token");
  auto cmd = [&](const std::string& command, const std::string& body = "{}") {
    auto r = d.call("attempt.command",
                    "{\"attempt\":" + quoted(id) + ",\"command\":" + quoted(command) +
                        ",\"body\":" + body + "}",
                    rpc::AuthKind::kToken, cap, 300s);
    answers.push_back(r.error ? r.error->json() : r.body_json);
    return r;
  };
  auto op = [&](const std::string& name, const std::string& extra = "") {
    auto r = d.call(name, "{\"attempt\":" + quoted(id) + extra + "}", rpc::AuthKind::kToken, cap);
    answers.push_back(r.error ? r.error->json() : r.body_json);
    return r;
  };

  // Out of phase: a probe before the prediction names the phase and the next step.
  auto early = cmd("probe", R"({"call":"file.read","params":{"path":"/fleet/inventory.conf"}})");
  CHECK(early.status == 409);
  CHECK(early.error->phase == "observe");
  CHECK(!early.error->next.empty());
  // An unknown name is refused listing the valid ones, as data too (`expected`).
  const auto lists = [](const rpc::Reply& r, const std::string& name) {
    return r.error && std::find(r.error->expected.begin(), r.error->expected.end(), name) !=
                          r.error->expected.end();
  };
  auto typo = cmd("predict", R"({"hypothesis":"stale-overide","expect":"an override"})");
  CHECK(typo.status == 400);
  CHECK(lists(typo, "stale-override"));
  CHECK(lists(typo, "bad-release"));
  CHECK(cmd("predict", R"({"hypothesis":"stale-override","expect":"an override in host vars"})")
            .status == 200);
  auto no_probe = cmd("probe", R"({"call":"file.raed","params":{"path":"/fleet/inventory.conf"}})");
  CHECK(no_probe.status == 400);
  CHECK(lists(no_probe, "file.read"));
  CHECK(no_probe.error->message.find("did you mean file.read?") != std::string::npos);
  for (const auto& p : gold->probe_calls_json) {
    auto probed = cmd("probe", p);
    CHECK(probed.status == 200);
    CHECK(probed.body_json.find("\"refused\":false") != std::string::npos);
  }
  // A probe the lab refuses before reading (a folder, not a file) costs nothing and says so.
  auto folder = cmd("probe", R"({"call":"file.read","params":{"path":"/fleet/host_vars"}})");
  CHECK(folder.status == 200);
  CHECK(folder.body_json.find("\"refused\":true") != std::string::npos);
  CHECK(folder.body_json.find("\"cost\":0") != std::string::npos);
  auto ev = op("attempt.evidence", ",\"evidence\":\"ev-1\"");
  CHECK(ev.status == 200);
  CHECK(member(ev.body_json, "content").find("app_root") != std::string::npos);
  CHECK(op("attempt.evidence", ",\"evidence\":\"ev-9\"").status == 404);
  // Validation without submitting: a wrong selector is named at its path; the gold IR is ok.
  std::string wrong = gold->ir_json;
  wrong.replace(wrong.find("host-vars-root-without-page"), 27, "no-such-target");
  auto v = op("attempt.validate", ",\"ir\":" + wrong);
  CHECK(v.status == 200);
  CHECK(member(v.body_json, "ok") == "false");
  CHECK(op("attempt.validate", ",\"ir\":" + gold->ir_json).body_json.find("\"ok\":true") !=
        std::string::npos);
  CHECK(cmd("intervention", gold->ir_json).status == 200);
  // apply answers with the readback to acknowledge; ack names it, and a stale seq is refused.
  auto applied = cmd("apply");
  CHECK(applied.status == 200);
  const auto rb_at = applied.body_json.find("\"readback\":{\"readback_seq\":");
  REQUIRE(rb_at != std::string::npos);
  const std::string rb_seq = std::to_string(std::stoull(applied.body_json.substr(rb_at + 27, 20)));
  CHECK(applied.body_json.find("\"as_requested\":true") != std::string::npos);
  auto stale = cmd("ack", R"({"note":"as asked","readback_seq":1})");
  CHECK(stale.status == 409);
  auto acked = cmd("ack", R"({"note":"as asked","readback_seq":)" + rb_seq + "}");
  CHECK(acked.status == 200);
  CHECK(acked.body_json.find("\"readback_seq\":" + rb_seq) != std::string::npos);
  auto verified = cmd("verify");
  CHECK(verified.status == 200);
  CHECK(member(verified.body_json, "recovered") == "true");
  CHECK(cmd("gate").status == 202);
  // The gate runs on after its reply: wait for the verdict (a hang guard, not a bar).
  std::string phase;
  for (int i = 0; i < 600 && phase != "receipt" && phase != "reflect"; ++i) {
    std::this_thread::sleep_for(500ms);
    phase = member(op("attempt.state").body_json, "phase");
  }
  REQUIRE(phase == "receipt");
  auto rc = cmd("receipt");
  REQUIRE(rc.status == 200);
  auto file = op("attempt.receipt");
  REQUIRE(file.status == 200);
  auto checked = d.call("receipt.verify", "{\"receipt\":" + file.body_json + "}");
  REQUIRE(checked.status == 200);
  CHECK(checked.body_json.find("\"offline\":{\"ok\":true") != std::string::npos);
  CHECK(checked.body_json.find("\"replay\":{\"ok\":true") != std::string::npos);
  // Inclusion proofs of the receipt's events against a signed checkpoint, checked against the
  // lab's public key.
  auto incl = d.call("proof.receipt",
                     "{\"sha256\":" + quoted(member(rc.body_json, "receipt_sha256")) + "}");
  REQUIRE(incl.status == 200);
  {
    // The checkpoint is opened with the lab's public key, as an auditor would.
    auto key = KeyStore::load_public(d.dir / "keys" / "lab.pub");
    REQUIRE(key.ok());
    // The key the lab serves for browsers is the one in its keys folder.
    auto served = d.call("lab.key");
    REQUIRE(served.status == 200);
    CHECK(member(served.body_json, "verifier_key") == format_verifier_key(*key));
    std::vector<NoteVerifierKey> keys = {*key};
    auto ck = open_checkpoint(member(member(incl.body_json, "checkpoint"), "note"), keys);
    REQUIRE(ck.ok());
    const uint64_t size = ck->size;
    CHECK(size == std::stoull(member(member(incl.body_json, "checkpoint"), "size")));
    const merkle::Hash* root = &ck->root;
    json::Reader reader;
    auto doc = reader.parse_object(incl.body_json);
    REQUIRE(doc.ok());
    auto proofs = doc->array("proofs");
    REQUIRE(proofs.ok());
    CHECK(proofs->size() > 10);
    for (const auto& p : proofs->elements()) {
      auto o = p.as_object();
      REQUIRE(o.ok());
      auto seq = o->required_u64("seq");
      auto eh = digest_from_hex(*o->required_string("event_hash"));
      REQUIRE(eh);
      std::vector<merkle::Hash> path;
      auto hexes = o->array("path")->strings();  // kept: the loop must not range over a temporary
      REQUIRE(hexes.ok());
      for (auto h : *hexes) path.push_back(*digest_from_hex(h));
      Status v = merkle::verify_inclusion(merkle::leaf_hash(*eh), *seq - 1, size, path, *root);
      CHECK_MESSAGE(v.is_ok(), v.message());
    }
  }
  // A learner's receipt is not public.
  CHECK(d.call("receipt.get", "{\"sha256\":" + quoted(member(rc.body_json, "receipt_sha256")) + "}")
            .status == 404);
  CHECK(cmd("reflect", R"({"text":"the override was in the source of truth"})").status == 200);
  CHECK(cmd("reflect", R"({"text":"again"})").status == 409);

  // The stream: everything from the start, then resumed after a seq with no repeats.
  auto client = rpc::Client::connect(d.socket);
  REQUIRE(client.ok());
  rpc::Request sr;
  sr.op = "attempt.events";
  sr.request_id = rpc::new_request_id();
  sr.args_json = "{\"attempt\":" + quoted(id) + ",\"after_seq\":0}";
  sr.auth = rpc::AuthKind::kToken;
  sr.secret = cap;
  REQUIRE(client->call(sr, 10s)->status == 200);
  std::vector<uint64_t> seqs;
  std::set<std::string> types;
  for (;;) {
    auto f = client->next_frame(2s);
    if (!f.ok() || !f->has_value()) break;  // quiet: everything so far was sent
    if ((*f)->kind != rpc::Kind::kEvent) continue;
    answers.push_back((*f)->body);
    seqs.push_back(std::stoull(member((*f)->body, "seq")));
    types.insert(member((*f)->body, "type"));
  }
  REQUIRE(seqs.size() > 10);
  for (size_t i = 1; i < seqs.size(); ++i) CHECK(seqs[i] > seqs[i - 1]);
  CHECK(types.count(events::kGateVerdict) == 1);
  CHECK(types.count(events::kAttemptAccess) == 0);
  CHECK(types.count(events::kWorldBuilt) == 0);
  const uint64_t cut = seqs[seqs.size() / 2];
  auto again = rpc::Client::connect(d.socket);
  sr.request_id = rpc::new_request_id();
  sr.args_json = "{\"attempt\":" + quoted(id) + ",\"after_seq\":" + std::to_string(cut) + "}";
  REQUIRE(again->call(sr, 10s)->status == 200);
  auto first = again->next_frame(5s);
  REQUIRE(first.ok());
  REQUIRE(first->has_value());
  const uint64_t resumed = std::stoull(member((*first)->body, "seq"));
  CHECK(resumed > cut);
  CHECK(resumed == *std::upper_bound(seqs.begin(), seqs.end(), cut));
  // A seq past any the log can hold is refused, never wrapped into a replay from the start.
  for (const char* beyond : {"9223372036854775808", "18446744073709551615"}) {
    auto past = rpc::Client::connect(d.socket);
    REQUIRE(past.ok());
    sr.request_id = rpc::new_request_id();
    sr.args_json = "{\"attempt\":" + quoted(id) + ",\"after_seq\":" + beyond + "}";
    auto answer = past->call(sr, 10s);
    REQUIRE(answer.ok());
    CHECK(answer->status == 400);
    REQUIRE(answer->error);
    CHECK(answer->error->message.find("beyond any event seq") != std::string::npos);
  }

  // Hidden means hidden, in every answer of the whole attempt.
  std::vector<std::string> hidden = hidden_strings(m);
  hidden.push_back(other_id);
  for (const auto& a : answers) {
    for (const auto& h : hidden) {
      CHECK_MESSAGE(a.find(h) == std::string::npos, "a learner was shown <" << h << "> in " << a);
    }
  }
  CHECK(d.stop() == 0);
}

TEST_CASE("the judge queue: one at a time, bounded, results and receipts public") {
  DaemonProc d({"--judge-queue", "1"});
  auto r1 = d.call("judge.enqueue", R"({"scenario":"t0"})");
  REQUIRE(r1.status == 202);
  const std::string run = member(r1.body_json, "run");
  // The first runs (or is about to); one may wait; the one past that is refused.
  std::vector<int> statuses;
  for (int i = 0; i < 3; ++i)
    statuses.push_back(d.call("judge.enqueue", R"({"scenario":"t0"})").status);
  CHECK(std::count(statuses.begin(), statuses.end(), 429) >= 1);
  CHECK(d.call("judge.enqueue", R"({"scenario":"zz"})").status == 404);
  CHECK(d.call("judge.get", R"({"run":"0123456789abcdef"})").status == 404);
  std::string state;
  rpc::Reply got;
  for (int i = 0; i < 1200 && state != "done" && state != "failed"; ++i) {
    std::this_thread::sleep_for(500ms);
    got = d.call("judge.get", "{\"run\":" + quoted(run) + "}");
    state = member(got.body_json, "state");
  }
  REQUIRE(state == "done");
  CHECK(got.body_json.find("\"case\":\"bad\"") != std::string::npos);
  CHECK(got.body_json.find("\"verdict\":\"RECOVERED_UNPROVEN\"") != std::string::npos);
  CHECK(got.body_json.find("\"verdict\":\"VERIFIED\"") != std::string::npos);
  const size_t at = got.body_json.find("\"receipt_sha256\":\"");
  REQUIRE(at != std::string::npos);
  const std::string sha = got.body_json.substr(at + 18, 64);
  auto receipt = d.call("receipt.get", "{\"sha256\":" + quoted(sha) + "}");
  REQUIRE(receipt.status == 200);
  auto checked = d.call("receipt.verify", "{\"receipt\":" + receipt.body_json + "}");
  CHECK_MESSAGE(checked.body_json.find("\"replay\":{\"ok\":true") != std::string::npos,
                checked.body_json);
  // Its progress stream replays the run from the log and ends when the run has.
  auto c = rpc::Client::connect(d.socket);
  rpc::Request sr;
  sr.op = "judge.events";
  sr.request_id = rpc::new_request_id();
  sr.args_json = "{\"run\":" + quoted(run) + ",\"after_seq\":0}";
  REQUIRE(c->call(sr, 10s)->status == 200);
  std::set<std::string> types;
  for (;;) {
    auto f = c->next_frame(30s);
    if (!f.ok() || !f->has_value()) break;
    if ((*f)->kind == rpc::Kind::kEvent) types.insert(member((*f)->body, "type"));
  }
  CHECK(types.count(events::kGateProperty) == 1);
  CHECK(types.count(events::kGateVerdict) == 1);
  CHECK(types.count("judge.run") == 1);
  CHECK(types.count(events::kProbeRequested) == 0);
  CHECK(types.count(events::kInterventionSubmitted) == 0);
}

TEST_CASE("aura log snapshot on a data folder a daemon holds: the daemon makes it; it restores") {
  DaemonProc d;
  REQUIRE(d.call("attempt.create", R"({"scenario":"t0"})").status == 201);  // something to copy
  const std::vector<std::string> keys = {"--keys", (d.dir / "keys").string()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), keys.begin(), keys.end());
    return testing::run_aura(args);
  };
  auto snap = with({"log", "snapshot", "--out", (d.dir / "snap").string(), "--data",
                    (d.dir / "data").string(), "--json"});
  CHECK_MESSAGE(snap.exit_code == 0, snap.describe());
  CHECK(snap.out.find("made by the lab's daemon") != std::string::npos);
  CHECK(std::stoull(member(snap.last_line(), "head_seq")) > 5);
  // The lab kept serving, and the copy restores into a new folder and verifies.
  CHECK(d.call("health").status == 200);
  auto restored =
      with({"log", "restore", (d.dir / "snap").string(), "--data", (d.dir / "restored").string()});
  CHECK_MESSAGE(restored.exit_code == 0, restored.describe());
}

TEST_CASE(
    "aura log checkpoint, caps, log append, scenario load and worker on a data folder a daemon "
    "holds: the daemon does it") {
  DaemonProc d;
  const std::vector<std::string> where = {"--data", (d.dir / "data").string(), "--keys",
                                          (d.dir / "keys").string()};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.end(), where.begin(), where.end());
    return testing::run_aura(args);
  };
  const uint64_t before = std::stoull(member(d.call("health").body_json, "log_head"));
  auto cp = with({"log", "checkpoint", "--json"});
  CHECK_MESSAGE(cp.exit_code == 0, cp.describe());
  CHECK(cp.out.find("\n\xe2\x80\x94 ") != std::string::npos);  // a signed note's signature line
  CHECK(std::stoull(member(cp.last_line(), "size")) >= before);
  auto caps = with({"caps", "--json"});
  CHECK_MESSAGE(caps.exit_code == 0, caps.describe());
  CHECK(caps.out.find("measured and recorded by the lab's daemon") != std::string::npos);
  const uint64_t seq = std::stoull(member(caps.last_line(), "seq"));
  CHECK(seq > before);
  CHECK(d.call("health").status == 200);

  // aura log append: the daemon appends an operator event, and refuses what the command
  // refuses (another type, a lab stream) with the same words.
  auto note = with({"log", "append", "--stream", "ops/notes", "--type", events::kOperatorNote,
                    "--payload", R"({"text":"rotated the operator token"})", "--json"});
  CHECK_MESSAGE(note.exit_code == 0, note.describe());
  CHECK(note.out.find("by the lab's daemon") != std::string::npos);
  const uint64_t note_seq = std::stoull(member(note.last_line(), "seq"));
  CHECK(note_seq > seq);
  auto forged = with({"log", "append", "--stream", "ops/notes", "--type", events::kGateVerdict,
                      "--payload", "{}"});
  CHECK(forged.exit_code != 0);
  CHECK(forged.err.find("refused type") != std::string::npos);
  auto lab_stream =
      d.call("log.append", R"({"stream":"lab/scenarios","type":"operator.note","actor":"operator",)"
                           R"("payload":{}})");
  CHECK(lab_stream.status == 400);
  REQUIRE(lab_stream.error);
  CHECK(lab_stream.error->message.find("refused stream") != std::string::npos);

  // aura scenario load: the daemon loads and records each folder; one that is not a package
  // is rejected by name.
  fs::create_directories(d.dir / "not-a-package");
  auto load = with({"scenario", "load", (d.dir / "scenarios" / "t0-config-drift").string(),
                    (d.dir / "not-a-package").string(), "--json"});
  CHECK(load.exit_code == 1);  // one rejected
  CHECK(load.out.find("loaded   t0-config-drift") != std::string::npos);
  CHECK(load.out.find("rejected " + (d.dir / "not-a-package").string()) != std::string::npos);
  CHECK(member(load.last_line(), "loaded") == "1");
  CHECK(member(load.last_line(), "rejected") == "1");
  CHECK(d.call("scenarios.get", R"({"scenario":"t0"})").status == 200);
  auto relative = d.call("scenario.load", R"({"dirs":["scenarios/t0-config-drift"]})");
  CHECK(relative.status == 400);

  // aura scenario sign: the daemon signs a copy with the publisher key and records it; the
  // copy then loads.
  fs::copy(d.dir / "scenarios" / "t0-config-drift", d.dir / "t0-copy", fs::copy_options::recursive);
  auto sign = with({"scenario", "sign", (d.dir / "t0-copy").string(), "--json"});
  CHECK_MESSAGE(sign.exit_code == 0, sign.describe());
  CHECK(sign.out.find("recorded:  by the lab's daemon") != std::string::npos);
  CHECK(member(sign.last_line(), "id") == "t0-config-drift");
  auto copy = with({"scenario", "load", (d.dir / "t0-copy").string()});
  CHECK_MESSAGE(copy.exit_code == 0, copy.describe());
  auto key_inside =
      d.call("scenario.sign", "{\"dir\":\"" + (d.dir / "t0-copy").string() + "\",\"key\":\"" +
                                  (d.dir / "t0-copy" / "k").string() + "\"}");
  CHECK(key_inside.status == 400);

  // aura setup: the daemon keeps the keys and the packages it signed at first use, loads and
  // records them again and measures the panel.
  auto setup = with({"setup", "--scenarios", (d.dir / "scenarios").string(), "--json"});
  CHECK_MESSAGE(setup.exit_code == 0, setup.describe());
  CHECK(setup.out.find("it set the lab up") != std::string::npos);
  CHECK(setup.out.find("kept the existing lab signing key") != std::string::npos);
  CHECK(setup.out.find("kept     t0-config-drift") != std::string::npos);
  CHECK(member(setup.last_line(), "rejected") == "0");
  CHECK(std::stoull(member(setup.last_line(), "kept")) >= 3);
  CHECK(member(setup.last_line(), "lab_key_created") == "false");

  // aura projections rebuild: the daemon rebuilds the projections it keeps; --batch is its own.
  auto rebuilt = with({"projections", "rebuild", "--json"});
  CHECK_MESSAGE(rebuilt.exit_code == 0, rebuilt.describe());
  CHECK(rebuilt.out.find("the lab's daemon rebuilt every projection") != std::string::npos);
  CHECK(rebuilt.last_line().find(R"("name":"attempts")") != std::string::npos);
  CHECK(with({"projections", "rebuild", "--batch", "10"}).exit_code == 2);
  CHECK(d.call("scenarios.list").status == 200);  // read from the rebuilt projections

  // aura worker: the daemon reaps and measures; the worker reports.
  auto worker = with({"worker", "--json"});
  CHECK_MESSAGE(worker.exit_code == 0, worker.describe());
  CHECK(worker.out.find("supervises its worlds") != std::string::npos);
  CHECK(std::stoull(member(worker.last_line(), "capabilities_seq")) > note_seq);

  // The front's user is refused every one of them: they take paths on the machine, or write
  // events by hand.
  CHECK(status_as_front(d, "log.append",
                        R"({"stream":"ops/notes","type":"operator.note","actor":"operator",)"
                        R"("payload":{}})") == 403);
  CHECK(status_as_front(
            d, "scenario.load",
            "{\"dirs\":[\"" + (d.dir / "scenarios" / "t0-config-drift").string() + "\"]}") == 403);
  CHECK(d.call("health").status == 200);
}

TEST_CASE("aura attempt commands on a data folder a daemon holds: a whole t0 attempt through it") {
  DaemonProc d;
  const scenario::Manifest m = t0_manifest();
  const scenario::JudgeCase* gold = m.find_judge("gold");
  REQUIRE(gold != nullptr);
  const std::vector<std::string> where = {"--data", (d.dir / "data").string(), "--keys",
                                          (d.dir / "keys").string()};
  auto aura = [&](std::vector<std::string> args) {
    args.insert(args.end(), where.begin(), where.end());
    auto r = testing::run_aura(args);
    CAPTURE(r.describe());
    CHECK(r.out.find("through the lab's daemon") != std::string::npos);
    return r;
  };
  auto started = aura({"attempt", "start", "t0", "--learner", "cli", "--json"});
  REQUIRE_MESSAGE(started.exit_code == 0, started.describe());
  const std::string id = member(started.last_line(), "attempt");
  REQUIRE(id.size() == 16);
  // Options the daemon does not take are refused, naming them.
  auto seeded = aura({"attempt", "start", "t0", "--seed", "4"});
  CHECK(seeded.exit_code == 2);
  CHECK(seeded.err.find("--seed") != std::string::npos);
  // Out of phase: refused with the daemon's words and its next step.
  auto early = aura({"attempt", "apply", id});
  CHECK(early.exit_code == 1);
  CHECK(early.err.find("next: ") != std::string::npos);
  CHECK(
      aura({"attempt", "predict", id, "--hypothesis", "stale-override", "--expect", "an override"})
          .exit_code == 0);
  for (const auto& p : gold->probe_calls_json)
    CHECK(aura({"attempt", "probe", id, p}).exit_code == 0);
  testing::write_file(d.dir / "fix.json", gold->ir_json);
  CHECK(aura({"attempt", "submit", id, (d.dir / "fix.json").string()}).exit_code == 0);
  CHECK(aura({"attempt", "apply", id}).exit_code == 0);
  CHECK(aura({"attempt", "ack", id, "--note", "as asked"}).exit_code == 0);
  CHECK(aura({"attempt", "verify", id}).exit_code == 0);
  auto gate = aura({"attempt", "gate", id});
  CHECK(gate.exit_code == 0);
  CHECK(gate.out.find("is now in phase receipt (verdict VERIFIED)") != std::string::npos);
  auto receipt = aura({"attempt", "receipt", id, "--out", (d.dir / "r.json").string()});
  CHECK(receipt.exit_code == 0);
  CHECK(fs::file_size(d.dir / "r.json") > 1000);
  auto done = aura({"attempt", "reflect", id, "--text", "the override was the cause", "--json"});
  CHECK(done.exit_code == 0);
  CHECK(member(done.last_line(), "phase") == "done");
  // The daemon's own view agrees: the attempt is the named learner's, done and VERIFIED.
  auto st = d.call("attempt.state", "{\"attempt\":" + quoted(id) + "}");
  CHECK(member(st.body_json, "learner") == "cli");
  CHECK(member(st.body_json, "verdict") == "VERIFIED");
}

TEST_CASE("live attempts: each client's are bounded, an idle one is ended, the file limit raised") {
  // Idle expiry shortened from its 30 minutes so the test sees one; the steps before it take
  // a few seconds.
  DaemonProc d({"--idle-expiry", "30"});
  struct Started {
    std::string id, token;
  };
  auto create = [&](const std::string& client) {
    return d.call("attempt.create", R"({"scenario":"t0-config-drift","client":")" + client + "\"}");
  };
  auto started = [&](const rpc::Reply& r) {
    REQUIRE_MESSAGE(r.status == 201, (r.error ? r.error->json() : r.body_json));
    return Started{member(r.body_json, "attempt"), member(r.body_json, "token")};
  };
  std::vector<Started> mine;
  for (int i = 0; i < 3; ++i) mine.push_back(started(create("10.9.0.1")));
  // The client's fourth: 429, naming its limit and when a place frees at the latest.
  auto fourth = create("10.9.0.1");
  CHECK(fourth.status == 429);
  REQUIRE(fourth.error.has_value());
  CHECK(fourth.error->code == "too_many_requests");
  CHECK(fourth.error->message.find("3 live attempts") != std::string::npos);
  CHECK(fourth.error->retry_after_s > 0);
  CHECK(fourth.error->retry_after_s <= 31);
  // Another client is not held back by it.
  const Started other = started(create("10.9.0.2"));
  // Ending one of its own gives the client its place back.
  auto abandoned = d.call("attempt.command",
                          "{\"attempt\":" + aura::testing::quoted(mine[0].id) +
                              R"(,"command":"abandon","body":{"reason":"done for today"}})",
                          rpc::AuthKind::kToken, mine[0].token);
  CHECK(abandoned.status == 200);
  mine[0] = started(create("10.9.0.1"));

  // The daemon's open-file limit is its hard one (a descriptor or more per live world).
  std::ifstream limits("/proc/" + std::to_string(d.pid) + "/limits");
  std::string line;
  bool seen = false;
  while (std::getline(limits, line)) {
    if (line.rfind("Max open files", 0) != 0) continue;
    std::istringstream in(line.substr(14));
    std::string soft, hard;
    in >> soft >> hard;
    CHECK(soft == hard);
    seen = true;
  }
  CHECK(seen);

  // With no command for 30 s an attempt is ended (checked every 30 s at most), its world
  // freed, and the learner's state says why.
  const auto guard = std::chrono::steady_clock::now() + 180s;
  std::string phase;
  while (std::chrono::steady_clock::now() < guard) {
    auto st = d.call("attempt.state", "{\"attempt\":" + aura::testing::quoted(other.id) + "}",
                     rpc::AuthKind::kToken, other.token);
    REQUIRE(st.status == 200);
    phase = member(st.body_json, "phase");
    if (phase == "done") break;
    std::this_thread::sleep_for(1s);
  }
  CHECK(phase == "done");
  // The attempt's stream says why, as the lab's doing, not the learner's.
  auto client = rpc::Client::connect(d.socket);
  REQUIRE(client.ok());
  rpc::Request sr;
  sr.op = "attempt.events";
  sr.request_id = rpc::new_request_id();
  sr.args_json = "{\"attempt\":" + aura::testing::quoted(other.id) + ",\"after_seq\":0}";
  sr.auth = rpc::AuthKind::kToken;
  sr.secret = other.token;
  REQUIRE(client->call(sr, 10s)->status == 200);
  std::string abandoned_event;
  for (;;) {
    auto f = client->next_frame(2s);
    if (!f.ok() || !f->has_value()) break;
    if ((*f)->kind == rpc::Kind::kEvent &&
        member((*f)->body, "type") == events::kAttemptAbandoned) {
      abandoned_event = (*f)->body;
    }
  }
  CHECK(abandoned_event.find("ended by the lab: no command for 30 seconds") != std::string::npos);
  CHECK(d.log_text().find(R"("event":"expired","attempt":")" + other.id) != std::string::npos);
  // Every one of them ends the same way; the client may then start again.
  bool again = false;
  for (int i = 0; i < 120 && !again; ++i) {
    again = create("10.9.0.1").status == 201;
    if (!again) std::this_thread::sleep_for(1s);
  }
  CHECK(again);
}
