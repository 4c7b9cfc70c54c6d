// The nodes driver on a real two-node world (tests/workers/fixtures/n0): nginx on the web node,
// aura-svcman running aura-app as its own user on the app node. Probes and actions run as
// aura-runner inside a node, supervised, their output arriving only through the writer socket;
// checks and fingerprints are the supervisor's own code. Worlds are built from a copy of the
// fixture signed at test time (a node gets only its layers, staged from the verified bytes).
// Needs root.
#include "workers/nodes/nodes_driver.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sodium.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "engine/crypto/ed25519.h"
#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "engine/package/package.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"
#include "engine/sign/signed_note.h"
#include "engine/writer/evidence_writer.h"
#include "tests/support/log_lab.h"
#include "tests/support/spawn_self.h"
#include "tests/support/temp_dir.h"
#include "tests/support/world_tag.h"
#include "workers/drivers.h"
#include "workers/netns/world_network.h"
#include "workers/nodes/nodes_world.h"
#include "workers/nodes/stage.h"
#include "workers/nodes/world_parts.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/supervisor/supervisor.h"

namespace aura {
namespace {

namespace fs = std::filesystem;
using workers::nodes::NodesDriver;

fs::path fixture() { return fs::path(AURA_NODES_FIXTURE); }

// The fixture copied to `dir` and signed there (SHA256SUMS, package.sig.json) with a throwaway
// publisher key, as `aura setup` signs the bundled packages: the driver builds worlds only from
// a package's verified bytes.
fs::path signed_copy(const fs::path& dir) {
  fs::copy(fixture(), dir, fs::copy_options::recursive);
  auto signed_package =
      sign_package(dir, NoteSigner("aura.publisher/test", Ed25519KeyPair::generate()));
  REQUIRE_MESSAGE(signed_package.ok(), signed_package.status().message());
  return dir;
}

// The stage entries made from the package in folder `package` (named "<folder>.<layer>-<key>"),
// by layer ("worlds/common"), each with the number of worlds using it.
std::map<std::string, int> stage_entries(const fs::path& package) {
  std::map<std::string, int> out;
  const std::string prefix = package.filename().string() + ".";
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(workers::nodes::kStageRoot, ec)) {
    std::string name = e.path().filename().string();
    if (!name.starts_with(prefix)) continue;
    name = name.substr(prefix.size(), name.rfind('-') - prefix.size());
    std::replace(name.begin(), name.end(), '.', '/');
    int users = 0;
    for (const auto& u : fs::directory_iterator(e.path() / "users", ec)) users += u.is_directory();
    out[name] = users;
  }
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

scenario::Manifest manifest() {
  auto m = scenario::parse_manifest(slurp(fixture() / "manifest.json"));
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  return std::move(m).value();
}

scenario::Call call(const scenario::Manifest& m, const std::string& json, bool action) {
  auto c = scenario::parse_call(json, action ? m.actions : m.probes, m, "call");
  REQUIRE_MESSAGE(c.ok(), c.status().message());
  return std::move(c).value();
}

// The page the web node serves from, read by a file.read probe (REQUIREd to run).
world::CallOutput web_page(world::World& w, const scenario::Manifest& m) {
  auto page = w.probe(
      call(m,
           R"({"call":"file.read","params":{"node":{"role":"web"},"path":"/srv/www/index.html"}})",
           false),
      4096);
  REQUIRE_MESSAGE(page.ok(), page.status().message());
  return *page;
}

const scenario::CheckSpec& check_of(const scenario::Manifest& m, const std::string& id) {
  const auto* c = m.find_check(id);
  REQUIRE(c != nullptr);
  return *c;
}

// Every name the lab recorded that is not released, in the ledger under `state`.
std::vector<std::string> unreleased(const fs::path& state) {
  sandbox::LeakLedger reg(state);
  auto entries = reg.entries();
  REQUIRE(entries.ok());
  std::vector<std::string> out;
  for (const auto& e : *entries)
    if (!e.released) out.push_back(e.path.string());
  return out;
}

struct Host {
  testing::LogLab lab;
  writer::RunTokens tokens;
  testing::TempDir dir;
  world::WorldHost host;
  // A signed copy of the fixture, its folder named uniquely (stage entries carry the name).
  fs::path package = signed_copy(dir / ("n0-" + dir.path().filename().string().substr(10)));
  Host() {
    host.log = lab.log.get();
    host.blobs = &*lab.blobs;
    host.tokens = &tokens;
    host.state_dir = dir / "state";
    host.forbidden = {lab.data()};
  }
  std::unique_ptr<world::WorldDriver> driver() {
    auto d = workers::make_driver("nodes", host);
    REQUIRE(d != nullptr);
    return d;
  }
  // The events of the attempt's stream, by type, in order.
  std::vector<std::string> types() {
    std::vector<std::string> out;
    auto head = lab.log->head();
    for (uint64_t seq = 1; seq <= head.seq; ++seq) {
      auto e = lab.log->get(seq);
      REQUIRE(e.ok());
      out.push_back(e->type);
    }
    return out;
  }
};

constexpr const char* kAttempt = "0123456789abcdef";

}  // namespace

TEST_CASE("nodes check_manifest: accepts the fixture and names what it refuses") {
  NodesDriver d;
  auto m = manifest();
  CHECK(d.check_manifest(m).is_ok());

  auto bad = m;
  bad.probes[0].name = "file.slurp";
  CHECK(d.check_manifest(bad).message().find("probes.file.slurp: not a call of the nodes driver") !=
        std::string::npos);
  bad = m;
  bad.actions[0].name = "file.read";
  CHECK(d.check_manifest(bad).message().find("is a probe") != std::string::npos);
  bad = m;
  bad.checks[0].params_json =
      R"({"from":"app","to":"web","port":80,"path":"/","expect_status":200,"colour":"red"})";
  CHECK(d.check_manifest(bad).message().find("params: colour: unknown") != std::string::npos);
  bad = m;
  bad.checks[0].call = "http.trust_me";
  CHECK(d.check_manifest(bad).message().find("not a check of the nodes driver") !=
        std::string::npos);
  bad = m;
  bad.worlds[0].build_json =
      R"({"nodes":[{"name":"Web","roles":["web"],"layers":["worlds/common"]}]})";
  CHECK(d.check_manifest(bad).message().find("worlds[0].build: nodes[0].name") !=
        std::string::npos);
  bad = m;
  bad.worlds[1].build_json = R"({"nodes":[{"name":"web","roles":["web"],"layers":["../etc"]}]})";
  CHECK(d.check_manifest(bad).message().find("not a safe package path") != std::string::npos);
  bad = m;
  bad.targets[0].selector = true;
  CHECK(d.check_manifest(bad).message().find("selector \"web\" is not defined") !=
        std::string::npos);
  // A process check's capabilities are names the kernel knows, and only with an identity.
  bad = m;
  bad.checks[0].call = "proc.expect";
  bad.checks[0].params_json =
      R"({"role":"web","exe":"/usr/sbin/nginx","not_user":"root","caps":"cap_net_bind_service"})";
  CHECK(d.check_manifest(bad).is_ok());
  bad.checks[0].params_json =
      R"({"role":"web","exe":"/usr/sbin/nginx","not_user":"root","caps":"cap_become_root"})";
  CHECK(d.check_manifest(bad).message().find("params.caps: capability names") != std::string::npos);
  bad.checks[0].params_json = R"({"role":"web","exe":"/usr/sbin/nginx","caps":"cap_chown"})";
  CHECK(d.check_manifest(bad).message().find("params.caps: only with user or not_user") !=
        std::string::npos);
}

TEST_CASE(
    "nodes: calls run as supervised runners inside the nodes; checks and fingerprints are the "
    "supervisor's") {
  Host h;
  auto m = manifest();
  auto d = h.driver();
  REQUIRE(d->check_manifest(m).is_ok());
  auto w = d->create(h.package, m, "primary", 7, h.dir / "w");
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  world::World& world = **w;

  // Without an attempt the world refuses to run anything: evidence needs a stream.
  auto unbound = world.probe(
      call(m, R"({"call":"net.listening","params":{"node":{"role":"web"}}})", false), 4096);
  CHECK(unbound.status().code() == ErrorCode::kFailedPrecondition);
  world.bind_attempt(kAttempt);

  // A probe: the page the web node really serves from.
  const uint64_t before = h.lab.log->head().seq;
  const world::CallOutput page = web_page(world, m);
  CHECK(page.exit_code == 0);
  CHECK(page.output == "n0 world: broken release\n");
  CHECK(page.resolved == std::vector<std::string>{"web"});
  // run.started (supervisor), runner.evidence (the runner, through the writer), run.ended.
  std::vector<std::string> seen;
  for (uint64_t seq = before + 1; seq <= h.lab.log->head().seq; ++seq) {
    auto e = h.lab.log->get(seq);
    REQUIRE(e.ok());
    seen.push_back(e->type + " " + e->actor.substr(0, 7));
    CHECK(e->stream == std::string("attempt/") + kAttempt);
    if (e->type == events::kRunEnded) {
      CHECK(e->payload.find("\"exit_code\":0") != std::string::npos);
      CHECK(e->payload.find("\"profile_digest\":\"" + d->profile_digest() + "\"") !=
            std::string::npos);
      CHECK(e->payload.find("\"accepted\":1") != std::string::npos);
    }
  }
  CHECK(seen == std::vector<std::string>{"run.started supervi",
                                         "runner.evidence runner:", "run.ended supervi"});

  // The node root reads the secret (it is root of its own user namespace); output is capped
  // and the cut recorded.
  auto secret = world.probe(
      call(m, R"({"call":"file.read","params":{"node":{"role":"app"},"path":"/etc/app/app.conf"}})",
           false),
      8);
  REQUIRE(secret.ok());
  CHECK(secret->output.size() == 8);
  CHECK(secret->truncated);
  // A target the runner refuses before reading anything (missing, a folder) is the call's
  // result, not an error: refused (exit 5, as the supervisor measured it), saying why.
  auto missing = world.probe(
      call(m, R"({"call":"file.read","params":{"node":{"role":"web"},"path":"/srv/none"}})", false),
      4096);
  REQUIRE(missing.ok());
  CHECK(missing->refused);
  CHECK(missing->exit_code == 5);
  CHECK(missing->error == "refused: read /srv/none : No such file or directory");
  auto folder = world.probe(
      call(m, R"({"call":"file.read","params":{"node":{"role":"web"},"path":"/srv"}})", false),
      4096);
  REQUIRE(folder.ok());
  CHECK(folder->refused);
  CHECK(folder->error == "refused: read /srv : not a regular file (dir)");
  CHECK(folder->output == "refused: read /srv : not a regular file (dir)\n");
  // A world failure that is not a refusal: path.namei's summary quotes the line where the walk
  // failed, not its first line.
  auto namei = world.probe(
      call(m, R"({"call":"path.namei","params":{"node":{"role":"web"},"path":"/srv/none/x"}})",
           false),
      4096);
  REQUIRE(namei.ok());
  CHECK_FALSE(namei->refused);
  CHECK(namei->exit_code == 1);
  CHECK(namei->output.starts_with("dir 0755 root root /\n"));
  CHECK(namei->error == "error: /srv/none : No such file or directory");
  // A literal that names no node in this world.
  auto nowhere = world.probe(
      call(m, R"({"call":"net.listening","params":{"node":{"literal":"db"}}})", false), 4096);
  REQUIRE(nowhere.ok());
  CHECK(nowhere->exit_code == 1);
  CHECK(nowhere->error.find("no node named \"db\"") != std::string::npos);
  // Every node when the call names none.
  auto listening = world.probe(
      call(m, R"({"call":"net.listening","params":{"node":{"role":"web"}}})", false), 4096);
  REQUIRE(listening.ok());
  CHECK(listening->output.find("tcp 0.0.0.0:80") != std::string::npos);

  // Checks, run by the supervisor: the page is wrong, the app is fine.
  auto ok = [&](const std::string& id) {
    auto r = world.check(check_of(m, id));
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    INFO(id << ": " << r->observed);
    return r->ok;
  };
  CHECK_FALSE(ok("page"));
  CHECK(ok("app-serves"));
  CHECK(ok("secret-private"));
  CHECK(ok("app-not-root"));
  auto fp0 = world.fingerprint();
  REQUIRE_MESSAGE(fp0.ok(), fp0.status().message());
  CHECK(fp0->size() == 64);
  auto fp0b = world.fingerprint();
  REQUIRE(fp0b.ok());
  CHECK(*fp0 == *fp0b);

  // Actions change the world; the postcondition turns green, the fingerprint changes.
  auto wrote = world.act(call(
      m,
      R"({"call":"file.write","params":{"node":{"role":"web"},"path":"/srv/www/index.html","content":"n0 world: release 2"}})",
      true));
  REQUIRE_MESSAGE(wrote.ok(), wrote.status().message());
  CHECK(wrote->exit_code == 0);
  CHECK(ok("page"));
  auto fp1 = world.fingerprint();
  REQUIRE(fp1.ok());
  CHECK(*fp1 != *fp0);
  // A careless chmod breaks an invariant, and the check says how.
  auto widened = world.act(call(
      m,
      R"({"call":"file.chmod","params":{"node":{"role":"app"},"path":"/etc/app/app.conf","mode":"0666"}})",
      true));
  REQUIRE(widened.ok());
  CHECK(widened->exit_code == 0);
  auto priv = world.check(check_of(m, "secret-private"));
  REQUIRE(priv.ok());
  CHECK_FALSE(priv->ok);
  CHECK(priv->observed.find("mode 0666 is wider than 0640") != std::string::npos);

  // The rollback: each node's journal undone restores the fingerprint exactly.
  auto undo = world.act(call(m, R"({"call":"journal.undo","params":{}})", true));
  REQUIRE_MESSAGE(undo.ok(), undo.status().message());
  CHECK(undo->exit_code == 0);
  CHECK(undo->resolved == std::vector<std::string>{"web", "app"});
  CHECK_FALSE(ok("page"));
  CHECK(ok("secret-private"));
  auto fp2 = world.fingerprint();
  REQUIRE(fp2.ok());
  CHECK(*fp2 == *fp0);

  // A gray-path script: same confinement as a runner (the node root's file capabilities only,
  // no_new_privs, seccomp), host-stamped facts; mount is refused.
  scenario::Target web{scenario::Target::Kind::kRole, "web"};
  auto script =
      world.run_script(web,
                       "id -u; grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; "
                       "mount -t tmpfs none /mnt && echo MOUNTED; echo done");
  REQUIRE_MESSAGE(script.ok(), script.status().message());
  INFO(script->output);
  CHECK(script->exit_code == 0);
  CHECK(script->output.find("0\n") == 0);
  char caps[64];
  std::snprintf(caps, sizeof caps, "CapEff:\t%016llx",
                (unsigned long long)nsworld::call_linux_caps());
  CHECK(script->output.find(caps) != std::string::npos);
  CHECK(script->output.find("NoNewPrivs:\t1") != std::string::npos);
  CHECK(script->output.find("Seccomp:\t2") != std::string::npos);
  CHECK(script->output.find("MOUNTED") == std::string::npos);
  CHECK(script->output.find("done") != std::string::npos);

  // A script that leaves a process behind: it stays in a call group of the node (frozen for
  // checks), and destroy removes it with everything else.
  auto daemon =
      world.run_script(web, "(while :; do sleep 0.1; done) >/dev/null 2>&1 & echo started");
  REQUIRE(daemon.ok());
  CHECK(daemon->output.find("started") != std::string::npos);
  CHECK(ok("page") == false);  // checks still run with the learner's process frozen
  auto fp3 = world.fingerprint();
  REQUIRE(fp3.ok());
  CHECK(*fp3 != *fp0);  // a new process is part of the observable state

  const auto recorded = unreleased(h.host.state_dir);
  CHECK(recorded.size() > 4);
  REQUIRE(d->destroy(std::move(w).value()).is_ok());
  CHECK(unreleased(h.host.state_dir).empty());
  for (const auto& p : recorded) CHECK_MESSAGE(!fs::exists(p), p);
  CHECK_FALSE(fs::exists(h.dir / "w"));
}

TEST_CASE("nodes: hostile scripts are contained and the host's facts say what happened") {
  Host h;
  auto m = manifest();
  auto d = h.driver();
  auto w = d->create(h.package, m, "control", 3, h.dir / "w");
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  (*w)->bind_attempt(kAttempt);
  scenario::Target web{scenario::Target::Kind::kRole, "web"};
  // The last run.ended payload appended so far.
  auto last_ended = [&] {
    for (uint64_t seq = h.lab.log->head().seq; seq > 0; --seq) {
      auto e = h.lab.log->get(seq);
      REQUIRE(e.ok());
      if (e->type == events::kRunEnded) return e->payload;
    }
    return std::string();
  };

  // Escapes that need a capability the call set lacks, or a path the node does not have.
  const std::string data = h.lab.data().string();
  auto probe = (*w)->run_script(
      web,
      "mknod /tmp/sda b 8 0 && echo MKNOD; echo 1 > /proc/sys/net/ipv4/ip_forward && echo SYSCTL; "
      "hostname evil && echo HOSTNAME; ls " +
          data +
          " && echo DATA; "
          "ls /sys/fs/cgroup/freezer && echo CGROUPFS; "
          "python3 -c 'import ctypes; l = ctypes.CDLL(None); print(\"ptrace\", l.ptrace(16, 1, 0, "
          "0))'; "
          "echo end");
  REQUIRE_MESSAGE(probe.ok(), probe.status().message());
  INFO(probe->output);
  CHECK(probe->output.find("ptrace -1") != std::string::npos);  // python ran; the attach failed
  CHECK(probe->output.find("mknod: /tmp/sda: Operation not permitted") != std::string::npos);
  for (const char* escaped : {"MKNOD", "SYSCTL", "HOSTNAME", "DATA", "CGROUPFS"})
    CHECK_MESSAGE(probe->output.find(std::string(escaped) + "\n") == std::string::npos, escaped);
  CHECK(probe->output.find("end") != std::string::npos);

  // A fork bomb meets the call group's pids limit; the host counted the refused forks.
  auto bomb = (*w)->run_script(web,
                               "i=0; while [ $i -lt 150 ]; do sleep 30 >/dev/null 2>&1 & "
                               "i=$((i+1)); done 2>/dev/null; echo spawned");
  REQUIRE(bomb.ok());
  std::string ended = last_ended();
  INFO(ended);
  CHECK(ended.find("\"pids_limit_hits\":0,") == std::string::npos);
  CHECK(ended.find("\"pids_limit_hits\":") != std::string::npos);

  // Allocating past the memory limit: the kernel kills it, the host saw the OOM kill.
  auto hog = (*w)->run_script(web, "python3 -c 'x = bytearray(600 << 20); print(len(x))'");
  REQUIRE(hog.ok());
  CHECK(hog->exit_code != 0);
  ended = last_ended();
  CHECK(ended.find("\"oom_kills\":0,") == std::string::npos);

  // The world is intact for the checks, and destroy removes the bomb's leftovers too.
  auto served = (*w)->check(check_of(m, "page"));
  REQUIRE(served.ok());
  CHECK(served->ok);
  REQUIRE(d->destroy(std::move(w).value()).is_ok());
  CHECK(unreleased(h.host.state_dir).empty());
}

TEST_CASE("nodes leaks: 100 world create/destroy cycles leave no name the lab recorded") {
  Host h;
  auto m = manifest();
  // Two nodes without services: what every world makes (network, nodes, layers, owners).
  m.worlds[2].build_json =
      R"({"nodes":[{"name":"web","roles":["web"],"layers":["worlds/common","worlds/good"]},)"
      R"({"name":"app","roles":["app"],"layers":["worlds/common","worlds/app"],)"
      R"("owners":[{"path":"/etc/app/app.conf","owner":"app","mode":"0640"}]}]})";
  auto d = h.driver();
  REQUIRE(d->check_manifest(m).is_ok());
  auto host_links = [] {
    std::string out;
    FILE* p = ::popen("ip -o link show | wc -l", "r");
    REQUIRE(p != nullptr);
    char buf[64];
    while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
    ::pclose(p);
    return out;
  };
  const std::string links_before = host_links();
  for (int i = 0; i < 100; ++i) {
    auto w = d->create(h.package, m, "control", uint64_t(i), h.dir / ("w" + std::to_string(i)));
    REQUIRE_MESSAGE(w.ok(), w.status().message());
    REQUIRE(d->destroy(std::move(w).value()).is_ok());
  }
  // Every name recorded over the 100 worlds: released and gone.
  sandbox::LeakLedger reg(h.host.state_dir);
  auto entries = reg.entries();
  REQUIRE(entries.ok());
  std::map<sandbox::ResourceKind, int> kinds;
  int stage_uses = 0;
  for (const auto& e : *entries) {
    CHECK_MESSAGE(e.released, e.path.string());
    CHECK_MESSAGE(!fs::exists(e.path), e.path.string());
    ++kinds[e.kind];
    stage_uses += e.path.string().starts_with(workers::nodes::kStageRoot);
  }
  CHECK(kinds[sandbox::ResourceKind::kNetns] == 300);  // a switch and two nodes per world
  // Two node stage folders and two uid slots per world, and its uses of three staged layers.
  CHECK(kinds[sandbox::ResourceKind::kDir] - stage_uses == 400);
  CHECK(stage_uses == 300);
  CHECK(stage_entries(h.package).empty());  // no world uses them any more
  CHECK(kinds[sandbox::ResourceKind::kCgroup] >= 200);
  CHECK(unreleased(h.host.state_dir).empty());
  // No mount of a world is left in the host's namespace, no veth or bridge on its side.
  CHECK(slurp("/proc/self/mountinfo").find(h.host.state_dir.string()) == std::string::npos);
  CHECK(host_links() == links_before);
  for (int i = 0; i < 100; ++i) CHECK_FALSE(fs::exists(h.dir / ("w" + std::to_string(i))));
}

// Run as a child by the next test: builds a world and exits without destroying it.
TEST_CASE("nodes child: build a world and exit" *
          doctest::skip(std::getenv("AURA_N0_WORK") == nullptr)) {
  world::WorldHost host;
  host.state_dir = std::getenv("AURA_N0_STATE");
  NodesDriver d;
  d.configure(host);
  auto m = manifest();
  auto w = d.create(std::getenv("AURA_N0_PACKAGE"), m, "control", 1, std::getenv("AURA_N0_WORK"));
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  if (std::string(std::getenv("AURA_N0_PERSIST")) == "1") REQUIRE((*w)->persist().is_ok());
  // The names the world holds, for the parent to find gone once the world's holder is done.
  std::string names;
  for (const std::string& p : unreleased(host.state_dir)) names += p + "\n";
  std::ofstream(std::string(std::getenv("AURA_N0_WORK")) + ".names") << names;
  std::_Exit(0);  // no destructor runs: the world is left as a crash would leave it
}

TEST_CASE(
    "nodes: a persisted world is reopened by a later process; an abandoned one is torn down by its "
    "holder") {
  Host h;
  auto m = manifest();
  auto run_child = [&](const fs::path& work, bool persist) {
    pid_t pid = testing::spawn_self_case(
        "nodes child: build a world and exit",
        {"AURA_N0_WORK=" + work.string(), "AURA_N0_STATE=" + h.host.state_dir.string(),
         "AURA_N0_PACKAGE=" + h.package.string(),
         std::string("AURA_N0_PERSIST=") + (persist ? "1" : "0")});
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
  };

  // Persisted: a later process reopens it, runs calls in it and destroys it.
  run_child(h.dir / "kept", true);
  auto d = h.driver();
  auto w = d->open(m, "control", h.dir / "kept");
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  (*w)->bind_attempt(kAttempt);
  CHECK(web_page(**w, m).output == "n0 world: release 2\n");
  auto served = (*w)->check(check_of(m, "page"));
  REQUIRE(served.ok());
  CHECK(served->ok);
  // Another world's folder, or the wrong world id, is refused.
  CHECK_FALSE(d->open(m, "primary", h.dir / "kept").ok());
  const auto kept = unreleased(h.host.state_dir);
  // A supervisor starting now leaves a persisted world alone.
  auto early = sandbox::reap(h.host.state_dir);
  REQUIRE(early.ok());
  CHECK(early->runs_reaped == 0);
  REQUIRE(d->destroy(std::move(w).value()).is_ok());
  CHECK(unreleased(h.host.state_dir).empty());
  for (const auto& p : kept) CHECK_MESSAGE(!fs::exists(p), p);

  // Not persisted: its holder tears the world down once the process that made it is gone, so
  // it cannot be reopened and nothing of it is left for a later supervisor to reap.
  run_child(h.dir / "lost", false);
  std::vector<std::string> lost;
  {
    std::istringstream in(slurp(h.dir / "lost.names"));
    for (std::string line; std::getline(in, line);) lost.push_back(line);
  }
  REQUIRE(lost.size() > 4);
  // Hang guard: the teardown takes well under a second on this machine; 60 s allows for a
  // machine half as fast and busy.
  for (int i = 0; i < 3000 && !unreleased(h.host.state_dir).empty(); ++i) ::usleep(20'000);
  CHECK(unreleased(h.host.state_dir).empty());
  for (const auto& p : lost) CHECK_MESSAGE(!fs::exists(p), p);
  auto reopened = d->open(m, "control", h.dir / "lost");
  CHECK(reopened.status().code() == ErrorCode::kFailedPrecondition);
  auto reaped = sandbox::reap(h.host.state_dir);
  REQUIRE(reaped.ok());
  CHECK(reaped->failures.empty());
  CHECK(reaped->runs_reaped == 0);
  // The holder removed its uses of stage entries; the entries go at the next sweep (any build
  // or destroy on the machine runs one).
  REQUIRE(workers::nodes::sweep_stage().is_ok());
  CHECK(stage_entries(h.package).empty());
}

TEST_CASE(
    "nodes: a package in a private folder builds from its staged layers; a private program is "
    "staged without following a link, and its entry goes with its last use") {
  Host h;
  auto m = manifest();
  // A checkout in a 0700 home: the node's uids cannot search the folder above the package.
  const fs::path home = h.dir / "home";
  fs::create_directories(home);
  fs::permissions(home, fs::perms::owner_all);
  const fs::path package = home / (h.package.filename().string() + "-home");
  fs::copy(h.package, package, fs::copy_options::recursive);

  // A program (a lab tool): staged in an entry of its own, root's, still executable.
  sandbox::LeakLedger ledger(h.host.state_dir);
  const workers::nodes::StageUse use{&ledger, testing::world_tag('n')};
  std::ofstream(home / "tool") << "#!/bin/sh\n";
  fs::permissions(home / "tool", fs::perms::owner_all);
  auto tool = workers::nodes::reachable_by_nodes((home / "tool").string(), use);
  REQUIRE_MESSAGE(tool.ok(), tool.status().message());
  CHECK(tool->starts_with(std::string(workers::nodes::kStageRoot) + "/tool-"));
  CHECK(fs::path(*tool).filename() == "tool");
  CHECK(slurp(*tool) == "#!/bin/sh\n");
  struct stat st {};
  REQUIRE(::stat(tool->c_str(), &st) == 0);
  CHECK(st.st_uid == 0);
  CHECK((st.st_mode & 07777) == 0755);
  // Unchanged, it is reused; a reachable file is used as it is; a symlink is refused.
  CHECK(*workers::nodes::reachable_by_nodes((home / "tool").string(), use) == *tool);
  const std::string reachable = (fixture() / "manifest.json").string();
  CHECK(*workers::nodes::reachable_by_nodes(reachable, use) == reachable);
  fs::create_symlink(home / "tool", home / "link");
  auto link = workers::nodes::reachable_by_nodes((home / "link").string(), use);
  REQUIRE_FALSE(link.ok());
  CHECK(link.status().message().find("symlink") != std::string::npos);
  // Its use released, the entry goes.
  const fs::path entry = fs::path(*tool).parent_path().parent_path();
  CHECK(fs::is_directory(entry / "users" / use.run_id));
  REQUIRE(workers::nodes::release_stage_uses(ledger, sandbox::LeakLedger::self_owner()).is_ok());
  CHECK_FALSE(fs::exists(entry));
  CHECK(unreleased(h.host.state_dir).empty());

  auto d = h.driver();
  auto w = d->create(package, m, "primary", 7, h.dir / "w");
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  (*w)->bind_attempt(kAttempt);
  CHECK(web_page(**w, m).output == "n0 world: broken release\n");
  CHECK(d->destroy(std::move(w).value()).is_ok());
  CHECK(stage_entries(package).empty());
}

TEST_CASE(
    "nodes: a node gets only its own layers of the package, and a stage entry lives while a "
    "world uses it") {
  Host h;
  auto m = manifest();
  auto d = h.driver();
  using Uses = std::map<std::string, int>;
  auto primary = d->create(h.package, m, "primary", 7, h.dir / "p");
  REQUIRE_MESSAGE(primary.ok(), primary.status().message());
  // Staged: the layers its nodes name, each used by this world.
  CHECK(stage_entries(h.package) ==
        Uses{{"worlds/app", 1}, {"worlds/broken", 1}, {"worlds/common", 1}});
  // Root's files, not writable by others (the node's uids), in folders others can only search.
  for (const auto& e : fs::recursive_directory_iterator(workers::nodes::kStageRoot)) {
    if (e.path().string().find("/" + h.package.filename().string() + ".") == std::string::npos)
      continue;
    struct stat st {};
    REQUIRE(::lstat(e.path().c_str(), &st) == 0);
    INFO(e.path().string());
    CHECK(st.st_uid == 0);
    CHECK((st.st_mode & S_IWOTH) == 0);
    CHECK((S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)));
  }

  // Inside the nodes: no view of the package at all once built (the manifest with its judge
  // cases, SHA256SUMS, the signature, another world's or node's layer, nor the pristine copy of
  // its own, whose files are 0644 whatever `owners` declares); only what the layers put in the
  // root, with the declared modes.
  (*primary)->bind_attempt(kAttempt);
  const std::string look =
      "for f in /aura/pkg/manifest.json /aura/pkg/SHA256SUMS /aura/pkg/package.sig.json "
      "/aura/pkg/worlds/good/srv/www/index.html /aura/pkg/worlds/app/etc/app/app.conf "
      "/aura/pkg/worlds/broken/srv/www/index.html; do cat $f >/dev/null 2>&1 && echo \"read $f\"; "
      "done; ls /aura; grep -c ' /aura/pkg' /proc/self/mountinfo; cat /srv/www/index.html "
      "/etc/app/app.conf 2>/dev/null; stat -c '%a %U' /etc/app/app.conf 2>/dev/null; echo end";
  for (const char* role : {"web", "app"}) {
    auto seen = (*primary)->run_script({scenario::Target::Kind::kRole, role}, look);
    REQUIRE_MESSAGE(seen.ok(), seen.status().message());
    INFO(role << ":\n" << seen->output);
    CHECK(seen->output.find("read ") == std::string::npos);
    CHECK(seen->output.find("bin\n0\n") == 0);  // /aura holds the lab's programs only
    CHECK(seen->output.find("end") != std::string::npos);
    if (std::string(role) == "web") {
      CHECK(seen->output.find("n0 world: broken release\n") != std::string::npos);  // its layer
    } else {
      CHECK(seen->output.find("640 app\n") != std::string::npos);  // as `owners` declares
    }
  }

  // A second world shares the layers both use; the first one's destroy keeps what it still uses.
  auto control = d->create(h.package, m, "control", 3, h.dir / "c");
  REQUIRE_MESSAGE(control.ok(), control.status().message());
  CHECK(stage_entries(h.package) ==
        Uses{{"worlds/app", 2}, {"worlds/broken", 1}, {"worlds/common", 2}, {"worlds/good", 1}});
  REQUIRE(d->destroy(std::move(primary).value()).is_ok());
  CHECK(stage_entries(h.package) ==
        Uses{{"worlds/app", 1}, {"worlds/common", 1}, {"worlds/good", 1}});
  (*control)->bind_attempt(kAttempt);
  CHECK(web_page(**control, m).output == "n0 world: release 2\n");
  REQUIRE(d->destroy(std::move(control).value()).is_ok());
  CHECK(stage_entries(h.package).empty());
  CHECK(unreleased(h.host.state_dir).empty());
}

TEST_CASE(
    "nodes staging: a link, a special file, a changed, unlisted or missing file fails the build "
    "closed, naming it") {
  Host h;
  auto m = manifest();
  auto d = h.driver();
  int n = 0;
  // Builds the primary world from a copy of the signed package changed by `change`: it must fail
  // with `message`, leaving no name recorded and no stage entry.
  auto refused = [&](const std::function<void(const fs::path&)>& change,
                     const std::string& message) {
    const fs::path copy = h.dir / (h.package.filename().string() + "-" + std::to_string(++n));
    fs::copy(h.package, copy, fs::copy_options::recursive);
    change(copy);
    auto w = d->create(copy, m, "primary", 7, h.dir / ("w" + std::to_string(n)));
    REQUIRE_FALSE(w.ok());
    INFO(w.status().message());
    CHECK(w.status().message().find(message) != std::string::npos);
    CHECK(unreleased(h.host.state_dir).empty());
    CHECK(stage_entries(copy).empty());
    CHECK_FALSE(fs::exists(h.dir / ("w" + std::to_string(n))));
  };
  auto replace_with_link = [](const fs::path& p, const fs::path& target) {
    fs::remove_all(p);
    fs::create_symlink(target, p);
  };

  // Planted before staging: a link to a host file, a linked folder, a linked layer.
  refused(
      [&](const fs::path& c) { replace_with_link(c / "worlds/common/etc/passwd", "/etc/shadow"); },
      "symlink \"worlds/common/etc/passwd\" is refused");
  refused([&](const fs::path& c) { replace_with_link(c / "worlds/broken/srv", "/etc"); },
          "symlink \"worlds/broken/srv\" is refused");
  refused([&](const fs::path& c) { replace_with_link(c / "worlds/broken", c / "worlds/good"); },
          "symlink \"worlds/broken\" is refused");
  refused([&](const fs::path& c) { replace_with_link(c / "SHA256SUMS", "/etc/passwd"); },
          "symlink \"SHA256SUMS\" is refused");
  // A FIFO is refused without being opened (the build would hang on it otherwise).
  refused(
      [&](const fs::path& c) { REQUIRE(::mkfifo((c / "worlds/app/etc/pipe").c_str(), 0644) == 0); },
      "FIFO \"worlds/app/etc/pipe\" is refused");
  // The bytes must be the ones SHA256SUMS lists: one byte changed, a file added, one removed.
  refused(
      [&](const fs::path& c) {
        std::ofstream(c / "worlds/broken/srv/www/index.html") << "n0 world: broken releasE\n";
      },
      "changed file \"worlds/broken/srv/www/index.html\": its SHA-256 is ");
  refused([&](const fs::path& c) { std::ofstream(c / "worlds/app/etc/extra") << "x"; },
          "extra file \"worlds/app/etc/extra\" (not in SHA256SUMS)");
  refused([&](const fs::path& c) { fs::remove(c / "worlds/app/etc/app/app.conf"); },
          "missing file \"worlds/app/etc/app/app.conf\" (listed in SHA256SUMS)");
  refused([&](const fs::path& c) { fs::remove(c / "SHA256SUMS"); },
          "SHA256SUMS is missing: the package is not signed");

  // Swapped while staging runs: the file (or folder) is replaced by a link just before staging
  // opens it, after the folder above was listed.
  for (const char* swapped : {"worlds/common/etc/group", "worlds/common/etc/nginx"}) {
    fs::path copy;
    workers::nodes::set_stage_open_hook([&](std::string_view path) {
      if (path == swapped) replace_with_link(copy / path, "/etc");
    });
    refused([&](const fs::path& c) { copy = c; },
            "symlink \"" + std::string(swapped) + "\" is refused");
    workers::nodes::set_stage_open_hook(nullptr);
  }
}

TEST_CASE(
    "nodes: what node root plants -- a preload, a runner, a loader -- never runs as the lab's "
    "runner, and the tools it starts never hold the token or the writer") {
  Host h;
  auto m = manifest();
  auto d = h.driver();
  auto w = d->create(h.package, m, "primary", 11, h.dir / "w");
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  world::World& world = **w;
  world.bind_attempt(kAttempt);
  scenario::Target web{scenario::Target::Kind::kRole, "web"};
  auto read = [&](const std::string& path) {
    auto r = world.probe(
        call(m, R"({"call":"file.read","params":{"node":{"role":"web"},"path":")" + path + R"("}})",
             false),
        65536);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    return *r;
  };

  // As the learner's script (the node's root): a library in /etc/ld.so.preload that marks every
  // process it loads in, and a program of its own where the runner used to be.
  const std::string so = slurp(AURA_PRELOAD_MARKER);
  REQUIRE(so.size() > 1000);
  std::string b64(sodium_base64_ENCODED_LEN(so.size(), sodium_base64_VARIANT_ORIGINAL), '\0');
  sodium_bin2base64(b64.data(), b64.size(), reinterpret_cast<const unsigned char*>(so.data()),
                    so.size(), sodium_base64_VARIANT_ORIGINAL);
  b64.resize(b64.find('\0'));
  auto plant = world.run_script(
      web, "set -e; echo '" + b64 +
               "' | base64 -d > /tmp/aura-mark.so; echo /tmp/aura-mark.so > "
               "/etc/ld.so.preload; mkdir -p /aura/bin; printf '#!/bin/sh\\ntouch "
               "/tmp/runner-hijacked\\n' > /aura/bin/aura-runner; chmod 755 /aura/bin/aura-runner; "
               "/bin/true; cat /tmp/aura-preload.log");
  REQUIRE_MESSAGE(plant.ok(), plant.status().message());
  INFO(plant->output);
  REQUIRE(plant->exit_code == 0);
  // The preload is live in the node: the script's own programs loaded it.
  CHECK(plant->output.find("exe=/usr/bin/true token=- writer=no") != std::string::npos);

  // The lab's runner still works: a probe, and an action that starts a tool of the node.
  const world::CallOutput page = web_page(world, m);
  CHECK(page.exit_code == 0);
  CHECK(page.output == "n0 world: broken release\n");
  auto reload =
      world.act(call(m, R"({"call":"nginx.reload","params":{"node":{"role":"web"}}})", true));
  REQUIRE_MESSAGE(reload.ok(), reload.status().message());
  INFO(reload->output);
  // The runner ran the tool and reported it (the fixture's nginx keeps no pid file, so the tool
  // itself fails: exit 1, the world's answer).
  CHECK(reload->output.find("signal process started") != std::string::npos);
  CHECK(reload->output.ends_with("exit 1\n"));

  // The marks: the tool loaded the planted library (it is a program of the node) but held neither
  // the token nor the writer; the runner never loaded it, and the planted runner never ran.
  const world::CallOutput marks = read("/tmp/aura-preload.log");
  INFO(marks.output);
  CHECK(marks.exit_code == 0);
  CHECK(marks.output.find("exe=/usr/sbin/nginx token=- writer=no") != std::string::npos);
  CHECK(marks.output.find("aura-runner") == std::string::npos);
  CHECK(marks.output.find("writer=yes") == std::string::npos);
  std::istringstream lines(marks.output);
  for (std::string line; std::getline(lines, line);)
    CHECK_MESSAGE(line.find(" token=- ") != std::string::npos, line);
  CHECK(read("/tmp/runner-hijacked").refused);  // missing: the runner refuses it, nothing read

  // The node's loader is the image's, owned by no one in the node: its root cannot replace it
  // (were it replaced, only the node's programs would load it: the runner uses the host's).
  auto loader = world.run_script(web,
                                 "l=$(readlink -f /lib64/ld-linux-x86-64.so.2); "
                                 "cp /bin/true $l.new && mv -f $l.new $l && echo replaced");
  REQUIRE(loader.ok());
  INFO(loader->output);
  CHECK(loader->exit_code != 0);
  CHECK(loader->output.find("replaced") == std::string::npos);
  const world::CallOutput again = web_page(world, m);
  CHECK(again.exit_code == 0);

  REQUIRE(d->destroy(std::move(w).value()).is_ok());
}

// A persisted world is meant to be reopened from its data folder; once that folder is gone (a
// test's temporary lab removed, an operator's rm -r) nothing can reopen it, and nothing of it may
// stay on the machine: its holder notices and tears it down, and any supervisor's reap ends it at
// once.
TEST_CASE("nodes: a persisted world whose data folder is gone is torn down") {
  Host h;
  auto persisted_in = [&](const fs::path& state) {
    fs::create_directories(state);
    pid_t pid = testing::spawn_self_case(
        "nodes child: build a world and exit",
        {"AURA_N0_WORK=" + (state / "world").string(), "AURA_N0_STATE=" + state.string(),
         "AURA_N0_PACKAGE=" + h.package.string(), "AURA_N0_PERSIST=1"});
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    std::vector<std::string> names = unreleased(state);
    REQUIRE(names.size() > 4);
    return names;
  };
  auto all_gone = [](const std::vector<std::string>& names) {
    return std::none_of(names.begin(), names.end(),
                        [](const std::string& p) { return fs::exists(p); });
  };
  // Its holder checks every 2 s; the teardown takes under a second here. Hang guard: 60 s.
  const fs::path alone = h.dir / "alone";
  const auto names = persisted_in(alone);
  fs::remove_all(alone);
  for (int i = 0; i < 3000 && !(unreleased(alone).empty() && all_gone(names)); ++i)
    ::usleep(20'000);
  CHECK(unreleased(alone).empty());
  CHECK(all_gone(names));

  // A reap does not wait for the holder: it ends it, then removes every name.
  const fs::path reaped = h.dir / "reaped";
  const auto more = persisted_in(reaped);
  fs::remove_all(reaped);
  auto r = sandbox::reap_orphans();
  REQUIRE(r.ok());
  CHECK(r->failures.empty());
  CHECK(unreleased(reaped).empty());
  CHECK(all_gone(more));

  // Its holder SIGKILLed and the data folder left (a run killed with everything it started):
  // the keepers end the nodes, and any supervisor's reap removes the names though the folder
  // is still there.
  const fs::path killed = h.dir / "killed";
  const auto left = persisted_in(killed);
  auto entries = sandbox::LeakLedger(killed).entries();
  REQUIRE(entries.ok());
  REQUIRE_FALSE(entries->empty());
  const std::string holder = entries->front().owner;
  pid_t holder_pid = 0;
  std::from_chars(holder.data(), holder.data() + holder.find('.'), holder_pid);
  REQUIRE(holder_pid > 1);
  REQUIRE(::kill(holder_pid, SIGKILL) == 0);
  for (int i = 0; i < 3000 && sandbox::LeakLedger::owner_alive(holder); ++i) ::usleep(20'000);
  REQUIRE_FALSE(sandbox::LeakLedger::owner_alive(holder));
  CHECK_FALSE(all_gone(left));  // nothing tore it down
  r = sandbox::reap_orphans();
  REQUIRE(r.ok());
  CHECK(r->failures.empty());
  CHECK(unreleased(killed).empty());
  CHECK(all_gone(left));
  CHECK(fs::exists(killed));
  REQUIRE(workers::nodes::sweep_stage().is_ok());
}

// A lab's state folder does not exist until its first world records a name: the holder is
// started and the world network recorded and made before the first node makes anything there.
// Another lab's reap (every session open, `aura worker`) took such a folder for a removed one,
// ended the building world's holder and removed its network namespaces mid-build. The first
// record now makes the folder; a reap leaves the holder and every namespace.
TEST_CASE("nodes: a reap leaves a lab's first world alone though the lab's state folder is new") {
  Host h;
  const fs::path state = h.dir / "fresh" / "sandbox";
  fs::create_directories(state.parent_path());
  auto holder = workers::nodes::start_holder(state);
  REQUIRE_MESSAGE(holder.ok(), holder.status().message());
  sandbox::LeakLedger ledger(state, holder->owner);
  auto net = netns::WorldNetwork::create(workers::nodes::random_hex(8), {"web", "app"}, &ledger);
  REQUIRE_MESSAGE(net.ok(), net.status().message());
  CHECK(fs::is_directory(state));  // made by the first record

  auto r = sandbox::reap_orphans();
  REQUIRE(r.ok());
  CHECK(sandbox::LeakLedger::owner_alive(holder->owner));
  for (const std::string& name : net->registered_names())
    CHECK_MESSAGE(fs::exists("/run/netns/" + name), name);
  auto joined = net->run_in("web", [] { return 0; });
  REQUIRE(joined.ok());
  CHECK(*joined == 0);

  REQUIRE(net->destroy().is_ok());
  workers::nodes::end_holder(*holder);
  CHECK(unreleased(state).empty());
}

// Run as a child by the next test: a lab of its own (its log, its signed copy of the fixture)
// whose state folder does not exist yet, as a fresh lab's first world finds it. Builds the
// control world, says so (<AURA_N0_LAB>/built) and holds it until told (<AURA_N0_LAB>/go); then
// every name it recorded must still be there and the world must still serve its page. Destroys
// it and exits.
TEST_CASE("nodes child: build a world in a fresh lab and hold it" *
          doctest::skip(std::getenv("AURA_N0_LAB") == nullptr)) {
  const fs::path lab = std::getenv("AURA_N0_LAB");
  Host h;
  h.host.state_dir = lab / "sandbox";
  REQUIRE_FALSE(fs::exists(h.host.state_dir));
  auto m = manifest();
  auto d = h.driver();
  auto w = d->create(h.package, m, "control", 1, lab / "world");
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  const auto names = unreleased(h.host.state_dir);
  REQUIRE(names.size() > 4);
  std::ofstream(lab / "built") << names.size() << "\n";
  // Hang guard: the parent says go within seconds; 120 s allows for a slow, busy machine.
  for (int i = 0; i < 6000 && !fs::exists(lab / "go"); ++i) ::usleep(20'000);
  REQUIRE(fs::exists(lab / "go"));
  for (const std::string& p : names) CHECK_MESSAGE(fs::exists(p), p);
  CHECK(unreleased(h.host.state_dir) == names);
  (*w)->bind_attempt(kAttempt);
  CHECK(web_page(**w, m).output == "n0 world: release 2\n");
  auto served = (*w)->check(check_of(m, "page"));
  REQUIRE(served.ok());
  CHECK(served->ok);
  REQUIRE(d->destroy(std::move(w).value()).is_ok());
  CHECK(unreleased(h.host.state_dir).empty());
}

// Labs run at once: a judge run beside a learner's attempt (the daemon), test programs in
// parallel. Two labs build their first worlds while a third lab's supervisor reaps as its every
// session open does, over and over; both worlds are built, a reap while they live leaves every
// name, and each world still serves (the child above checks). Before the fix the reaps ended
// the building labs' holders and removed their network namespaces: "Cannot open network
// namespace", "Invalid netns value", "its owner ... is gone".
TEST_CASE("nodes: two labs build worlds at once while a third lab reaps; neither loses a name") {
  Host h;  // the third lab: its log and state folder
  const std::vector<fs::path> labs = {h.dir / "lab1", h.dir / "lab2"};
  std::vector<pid_t> pids;
  for (const fs::path& lab : labs) {
    fs::create_directories(lab);
    pids.push_back(testing::spawn_self_case("nodes child: build a world in a fresh lab and hold it",
                                            {"AURA_N0_LAB=" + lab.string()}));
  }
  std::map<pid_t, int> exited;  // pid -> wait status
  auto settled = [&] {
    for (size_t i = 0; i < labs.size(); ++i) {
      int st = 0;
      if (!exited.contains(pids[i]) && ::waitpid(pids[i], &st, WNOHANG) == pids[i])
        exited[pids[i]] = st;
      if (!fs::exists(labs[i] / "built") && !exited.contains(pids[i])) return false;
    }
    return true;
  };
  auto reap = [&] {
    auto r = supervisor::reap_and_record(h.host.state_dir, *h.lab.log);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
  };
  // Hang guard: both worlds are built in seconds; 5 minutes allows for a slow, busy machine.
  int rounds = 0;
  for (; rounds < 60'000 && !settled(); ++rounds) {
    reap();
    ::usleep(5'000);
  }
  MESSAGE("reaps while the worlds were built: " << rounds);
  reap();  // both worlds live: a reap leaves them whole
  for (const fs::path& lab : labs) std::ofstream(lab / "go") << "go\n";
  for (size_t i = 0; i < labs.size(); ++i) {
    int st = 0;
    if (auto it = exited.find(pids[i]); it != exited.end()) {
      st = it->second;
    } else {
      REQUIRE(::waitpid(pids[i], &st, 0) == pids[i]);
    }
    CHECK_MESSAGE(fs::exists(labs[i] / "built"), (labs[i].string() + ": its world was not built"));
    CHECK_MESSAGE((WIFEXITED(st) && WEXITSTATUS(st) == 0), (labs[i].string() + ": the lab failed"));
    CHECK(unreleased(labs[i] / "sandbox").empty());
  }
}

// What sshd starts for a session runs confined like sshd, whatever a node's root made it start: a
// script plants /etc/ssh/sshrc (sh runs it for every session) on the web nodes, the converge's
// sessions from the control node leave a stray program behind on each, and the host's /proc shows
// it under sshd's filter, no_new_privs and sshd's declared capabilities (never sys_admin or
// sys_ptrace); a check moves it into the node's quarantine group, frozen while checks run. O1's
// catalog lets no learner write there; the confinement holds without the catalog. Needs ansible,
// openssh and nginx.
TEST_CASE("nodes: what sshd starts for a session is confined like sshd; its strays quarantined") {
  Host h;
  const fs::path package = h.dir / ("o1-" + h.dir.path().filename().string().substr(10));
  fs::copy(AURA_O1_PACKAGE, package, fs::copy_options::recursive);
  REQUIRE(
      sign_package(package, NoteSigner("aura.publisher/test", Ed25519KeyPair::generate())).ok());
  auto m = scenario::parse_manifest(slurp(package / "manifest.json"));
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  auto d = h.driver();
  auto w = d->create(package, *m, "primary", 0, h.dir / "w");
  REQUIRE_MESSAGE(w.ok(), w.status().message());
  world::World& world = **w;
  world.bind_attempt(kAttempt);
  // The build record names the SHA256SUMS the layers were checked against: the engine refuses a
  // world whose digest is not the package's it verified.
  auto record = world.build_record();
  REQUIRE_MESSAGE(record.ok(), record.status().message());
  CHECK(record->package_sums_sha256 == to_hex(sha256(slurp(package / "SHA256SUMS"))));

  const scenario::Target webs{scenario::Target::Kind::kRole, "web"};
  auto plant = world.run_script(
      webs,
      "cp /bin/sleep /tmp/ssh-stray && "
      "printf '(/tmp/ssh-stray 100000 </dev/null >/dev/null 2>&1 &)\\n' > /etc/ssh/sshrc && "
      "echo planted");
  REQUIRE_MESSAGE(plant.ok(), plant.status().message());
  INFO(plant->output);
  REQUIRE(plant->output.find("planted") != std::string::npos);
  auto converge =
      world.act(call(*m, R"({"call":"ansible.run","params":{"node":{"role":"control"}}})", true));
  REQUIRE_MESSAGE(converge.ok(), converge.status().message());

  // sshd's declared set: chown, dac_override, dac_read_search, fowner, fsetid, kill, setgid,
  // setuid (0xff), net_bind_service (bit 10), sys_chroot (bit 18).
  constexpr uint64_t kSshd = 0xffULL | (1ULL << 10) | (1ULL << 18);
  auto strays = [] {
    std::vector<std::pair<pid_t, std::string>> out;  // pid, /proc/PID/status + cgroup
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec)) {
      const std::string pid = e.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      if (slurp(e.path() / "comm") != "ssh-stray\n") continue;
      out.emplace_back(std::stoi(pid), slurp(e.path() / "status") + slurp(e.path() / "cgroup"));
    }
    return out;
  };
  auto field = [](const std::string& status, const std::string& key) {
    const size_t at = status.find("\n" + key + ":\t");
    if (at == std::string::npos) return std::string();
    const size_t from = at + key.size() + 3;
    return status.substr(from, status.find('\n', from) - from);
  };
  const auto before = strays();
  REQUIRE_MESSAGE(!before.empty(), "no session ran the planted sshrc: " << converge->output);
  for (const auto& [pid, status] : before) {
    INFO(pid << "\n" << status);
    CHECK(field(status, "Seccomp") == "2");
    CHECK(field(status, "NoNewPrivs") == "1");
    const uint64_t eff = std::stoull(field(status, "CapEff"), nullptr, 16);
    const uint64_t bnd = std::stoull(field(status, "CapBnd"), nullptr, 16);
    CHECK((eff & ~kSshd) == 0);
    CHECK(bnd == kSshd);
  }

  // A check: the strays go to the node's quarantine group first.
  auto served = world.check(check_of(*m, "fleet-serves"));
  REQUIRE_MESSAGE(served.ok(), served.status().message());
  const auto after = strays();
  CHECK(after.size() == before.size());
  for (const auto& [pid, status] : after) {
    INFO(pid << "\n" << status);
    CHECK(status.find("-q\n") != std::string::npos);
  }

  REQUIRE(d->destroy(std::move(w).value()).is_ok());
  CHECK(unreleased(h.host.state_dir).empty());
  CHECK(strays().empty());
}

}  // namespace aura

TEST_CASE("nodes build: mounts and the override selectors parse; bad ones are refused by name") {
  using aura::workers::nodes::parse_build;
  const std::string node = R"({"name":"ctl","roles":["control"],"layers":["worlds/c"])";
  auto b = parse_build(
      R"({"nodes":[)" + node + R"(,"mounts":["shm","pts"]}],"selectors":{)" +
          R"("stale":{"kind":"stale_override","role":"control","path":"/srv/ansible","var":"app_root","group":"web"},)" +
          R"("any":{"kind":"var_override","role":"control","path":"/srv/ansible","var":"app_root","group":"web"},)" +
          R"("page":{"kind":"no_page","role":"web","path":"/etc/nginx/conf.d/site.conf","index":"index.html"}}})",
      "build");
  REQUIRE_MESSAGE(b.ok(), b.status().message());
  CHECK(b->nodes[0].mounts == std::vector<std::string>{"shm", "pts"});
  REQUIRE(b->find_selector("stale") != nullptr);
  CHECK(b->find_selector("stale")->var == "app_root");
  CHECK(b->find_selector("any")->group == "web");
  CHECK(b->find_selector("page")->index == "index.html");
  struct Bad {
    std::string json;
    const char* message;
  } bads[] = {
      {R"({"nodes":[)" + node + R"(,"mounts":["proc"]}]})",
       "build: nodes[0].mounts[0]: \"proc\" is not one of: shm, pts"},
      {R"({"nodes":[)" + node +
           R"(}],"selectors":{"s":{"kind":"var_override","role":"control","path":"/srv","var":"app_root"}}})",
       "build: selectors.s: var_override takes var and group (and no user)"},
      {R"({"nodes":[)" + node +
           R"(}],"selectors":{"s":{"kind":"stale_override","role":"control","path":"/srv","var":"1x","group":"web"}}})",
       "build: selectors.s.var: not a variable name"},
      {R"({"nodes":[)" + node +
           R"(}],"selectors":{"s":{"kind":"first_untraversable","role":"control","path":"/srv","user":"app","var":"a"}}})",
       "first_untraversable takes user (and no var or group)"},
      {R"({"nodes":[)" + node +
           R"(}],"selectors":{"s":{"kind":"guess","role":"control","path":"/srv"}}})",
       "is not one of: first_untraversable, var_override, stale_override, no_page"},
      {R"({"nodes":[)" + node +
           R"(}],"selectors":{"s":{"kind":"no_page","role":"web","path":"/etc/site.conf","var":"a","index":"i"}}})",
       "build: selectors.s: no_page takes index (and no user, var or group)"},
      {R"({"nodes":[)" + node +
           R"(}],"selectors":{"s":{"kind":"no_page","role":"web","path":"/etc/site.conf","index":"a/b"}}})",
       "build: selectors.s.index: not a file name"},
      {R"({"nodes":[)" + node +
           R"(}],"selectors":{"s":{"kind":"var_override","role":"control","path":"/srv","var":"app_root","group":"web","index":"i"}}})",
       "build: selectors.s.index: only a no_page rule takes index"},
  };
  for (const Bad& bad : bads) {
    auto r = parse_build(bad.json, "build");
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE(r.status().message().find(bad.message) != std::string::npos,
                  r.status().message());
  }
}
