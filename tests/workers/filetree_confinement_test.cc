// Confinement of the filetree driver: symlinks planted in a world (absolute, relative escapes,
// folder links) are never followed by probes, actions, checks or destroy; FIFOs are refused
// without blocking; paths that are not normalised never reach the file system; the fingerprint
// encoding is the documented one.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"
#include "engine/scenario/call.h"
#include "tests/support/temp_dir.h"
#include "tests/workers/t0_package.h"
#include "workers/filetree/filetree_driver.h"
#include "workers/filetree/world_fs.h"

namespace fs = std::filesystem;
using aura::scenario::Call;
using aura::scenario::Manifest;
using aura::workers::filetree::FiletreeDriver;
using aura::world::CallOutput;
using aura::world::World;

namespace {

using aura::testing::slurp;

void spit(const fs::path& p, const std::string& bytes) {
  REQUIRE(aura::file_io::replace_file_durably(p.parent_path(), p, bytes, 0644).is_ok());
}

struct Env {
  Manifest m;
  FiletreeDriver driver;
  aura::testing::TempDir tmp;
  fs::path dir;
  fs::path root;
  fs::path outside;  // a folder next to the world that nothing may touch
  std::unique_ptr<World> w;

  explicit Env(const std::string& world_id = "primary") {
    auto r = aura::testing::load_t0_manifest();
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    m = std::move(*r);
    dir = tmp / "world";
    root = dir / "root";
    outside = tmp / "outside";
    fs::create_directories(outside);
    spit(outside / "secret.txt", "outside bytes\n");
    auto made = driver.create(aura::testing::t0_package_dir(), m, world_id, 3, dir);
    REQUIRE_MESSAGE(made.ok(), made.status().message());
    w = std::move(*made);
  }

  CallOutput run(const std::string& json, bool probe) {
    auto c = aura::scenario::parse_call(json, probe ? m.probes : m.actions, m, "test");
    REQUIRE_MESSAGE(c.ok(), c.status().message());
    auto r = probe ? w->probe(*c, 65536) : w->act(*c);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    return *r;
  }

  aura::world::CheckOutput check(const std::string& id) {
    for (const auto& c : m.checks) {
      if (c.id != id) continue;
      auto r = w->check(c);
      REQUIRE_MESSAGE(r.ok(), r.status().message());
      return *r;
    }
    FAIL("no check " << id);
    return {};
  }

  void outside_untouched() {
    CHECK(slurp(outside / "secret.txt") == "outside bytes\n");
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(outside)) names.push_back(e.path().filename());
    CHECK(names == std::vector<std::string>{"secret.txt"});
  }
};

}  // namespace

TEST_CASE("filetree confinement: an absolute symlink to a file outside is never followed") {
  Env env;
  const fs::path conf = env.root / "nodes/web2/app.conf";
  fs::remove(conf);
  fs::create_symlink(env.outside / "secret.txt", conf);

  CallOutput read =
      env.run(R"({"call":"file.read","params":{"path":"/nodes/web2/app.conf"}})", true);
  CHECK(read.exit_code != 0);
  CHECK(read.output.empty());
  CHECK(read.error.find("symlink") != std::string::npos);

  // Actions refuse it rather than write through it or replace it.
  CallOutput write = env.run(
      R"({"call":"file.write","params":{"path":{"literal":"/nodes/web2/app.conf"},"content":"pwned"}})",
      false);
  CHECK(write.exit_code != 0);
  CallOutput converge =
      env.run(R"({"call":"fleet.converge","params":{"node":{"literal":"web2"}}})", false);
  CHECK(converge.exit_code != 0);
  CallOutput chmod = env.run(
      R"({"call":"file.chmod","params":{"path":{"literal":"/nodes/web2/app.conf"},"mode":"0666"}})",
      false);
  CHECK(chmod.exit_code != 0);
  CHECK(fs::is_symlink(conf));
  env.outside_untouched();
  CHECK((fs::status(env.outside / "secret.txt").permissions() & fs::perms::all) == fs::perms(0644));

  // Checks see a broken node, not the outside file.
  auto healthy = env.check("fleet-healthy");
  CHECK_FALSE(healthy.ok);
  CHECK(healthy.observed.find("web2: /nodes/web2/app.conf: a symlink on the path is refused") !=
        std::string::npos);
  CHECK_FALSE(env.check("fleet-converged").ok);
  // The fingerprint records the link itself (its target text), without following it.
  auto fp = env.w->fingerprint();
  REQUIRE(fp.ok());
  fs::remove(conf);
  fs::create_symlink(env.outside / "other.txt", conf);
  auto fp2 = env.w->fingerprint();
  REQUIRE(fp2.ok());
  CHECK(*fp != *fp2);
}

TEST_CASE("filetree confinement: relative '..' symlinks and folder links stay refused") {
  Env env;
  // /srv/www/current -> ../../../../outside (escapes the root if followed naively).
  const fs::path current = env.root / "srv/www/current";
  fs::remove_all(current);
  fs::create_symlink("../../../../outside", current);
  CallOutput read =
      env.run(R"({"call":"file.read","params":{"path":"/srv/www/current/secret.txt"}})", true);
  CHECK(read.exit_code != 0);
  CHECK(read.error.find("symlink") != std::string::npos);
  CallOutput list = env.run(R"({"call":"dir.list","params":{"path":"/srv/www/current"}})", true);
  CHECK(list.exit_code != 0);
  CallOutput write = env.run(
      R"({"call":"file.write","params":{"path":{"literal":"/srv/www/current/index.html"},"content":"x"}})",
      false);
  CHECK(write.exit_code != 0);
  // Every node's app_root now names a link: the fleet is unhealthy, nothing outside is read.
  CHECK_FALSE(env.check("fleet-healthy").ok);

  // /fleet/host_vars -> the outside folder: vars.set must not create a file there.
  const fs::path host_vars = env.root / "fleet/host_vars";
  fs::remove_all(host_vars);
  fs::create_symlink(env.outside, host_vars);
  CallOutput set = env.run(
      R"({"call":"vars.set","params":{"node":{"role":"web"},"key":"port","value":"1"}})", false);
  CHECK(set.exit_code != 0);
  CallOutput eff =
      env.run(R"({"call":"fleet.effective","params":{"node":{"literal":"web1"}}})", true);
  CHECK(eff.exit_code != 0);
  env.outside_untouched();
}

TEST_CASE("filetree confinement: a FIFO is refused without blocking") {
  Env env;
  const fs::path index = env.root / "srv/www/current/index.html";
  fs::remove(index);
  REQUIRE(::mkfifo(index.c_str(), 0644) == 0);
  const auto start = std::chrono::steady_clock::now();
  CallOutput read =
      env.run(R"({"call":"file.read","params":{"path":"/srv/www/current/index.html"}})", true);
  CHECK(read.exit_code != 0);
  CHECK(read.error.find("a fifo, not a regular file") != std::string::npos);
  auto healthy = env.check("fleet-healthy");
  CHECK_FALSE(healthy.ok);
  CHECK(healthy.observed.find("fifo") != std::string::npos);
  CallOutput write = env.run(
      R"({"call":"file.write","params":{"path":{"literal":"/srv/www/current/index.html"},"content":"x"}})",
      false);
  CHECK(write.exit_code != 0);
  auto fp = env.w->fingerprint();  // lists the FIFO, never opens it
  CHECK(fp.ok());
  // The selector's index.html test does not open it either.
  CallOutput stale = env.run(
      R"({"call":"fleet.effective","params":{"node":{"selector":"host-vars-root-without-page"}}})",
      true);
  CHECK(stale.resolved == std::vector<std::string>{"web2"});
  // A call that opened the FIFO would wait for a writer that never comes. The calls take
  // milliseconds; 30 s is a hang guard for a machine half as fast and busy, not a speed bar.
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(30));
  CHECK(fs::is_fifo(index));
}

TEST_CASE("filetree confinement: paths that are not normalised never reach the file system") {
  Env env;
  for (const char* bad : {"/../outside/secret.txt", "/fleet/../../outside/secret.txt", "fleet/x",
                          "/fleet//inventory.conf", "/fleet/./inventory.conf", ""}) {
    CAPTURE(bad);
    Call c;
    c.name = "file.read";
    c.params = {{"path", std::string(bad)}};
    auto r = env.w->probe(c, 1024);
    REQUIRE(r.ok());
    CHECK(r->exit_code != 0);
    CHECK(r->output.empty());
    c.name = "file.write";
    c.params = {{"content", std::string("x")}, {"path", std::string(bad)}};
    auto wr = env.w->act(c);
    REQUIRE(wr.ok());
    CHECK(wr->exit_code != 0);
  }
  env.outside_untouched();
}

TEST_CASE("filetree confinement: destroy removes the world without following its symlinks") {
  Env env;
  fs::create_symlink(env.outside, env.root / "srv/link-out");
  fs::create_symlink(env.outside / "secret.txt", env.root / "fleet/secret-link");
  REQUIRE(::mkfifo((env.root / "srv/fifo").c_str(), 0600) == 0);
  REQUIRE(env.driver.destroy(std::move(env.w)).is_ok());
  CHECK_FALSE(fs::exists(fs::symlink_status(env.dir)));
  env.outside_untouched();
  // The world folder being gone already is fine.
  CHECK(aura::workers::filetree::remove_tree(env.dir).is_ok());
}

TEST_CASE("filetree: a layer holding a symlink is refused at create") {
  aura::testing::TempDir pkg;
  fs::create_directories(pkg / "worlds/common/fleet");
  spit(pkg / "worlds/common/fleet/inventory.conf", "web1=web\n");
  spit(pkg / "worlds/common/fleet/group_vars.conf", "app_root=/srv\n");
  fs::create_symlink("/etc", pkg / "worlds/common/etc");
  auto m = aura::testing::load_t0_manifest();
  REQUIRE(m.ok());
  m->worlds[0].build_json = R"({"layers":["worlds/common"]})";
  FiletreeDriver driver;
  auto w = driver.create(pkg.path(), *m, "primary", 1, pkg / "work");
  REQUIRE_FALSE(w.ok());
  CHECK(w.status().message().find("etc: a symlink; layers hold folders and regular files only") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(pkg / "work"));
}

TEST_CASE("filetree fingerprint: the documented records, and what changes it") {
  Env env;
  // Recompute the documented encoding independently (docs/WORLDS.md, "Fingerprint").
  std::vector<std::pair<std::string, std::string>> records;
  const auto record = [&](const fs::path& p, const std::string& world_path) {
    struct stat st;
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", st.st_mode & 07777);
    std::string digest = "-";
    char type = 'd';
    if (S_ISREG(st.st_mode)) {
      type = 'f';
      digest = aura::to_hex(aura::sha256(slurp(p)));
    }
    records.emplace_back(world_path, std::string(1, type) + " " + mode + " " + digest + " " +
                                         std::to_string(world_path.size()) + " " + world_path +
                                         "\n");
  };
  record(env.root, "/");
  for (const auto& e : fs::recursive_directory_iterator(env.root)) {
    record(e.path(), "/" + fs::relative(e.path(), env.root).string());
  }
  std::sort(records.begin(), records.end());
  std::string text = "aura-filetree-fingerprint 1\n";
  for (const auto& [path, line] : records) text += line;
  const std::string expected = aura::to_hex(aura::sha256(text));
  auto fp = env.w->fingerprint();
  REQUIRE(fp.ok());
  CHECK(*fp == expected);

  // Modification times and the journal do not count; content and modes do.
  const fs::path group = env.root / "fleet/group_vars.conf";
  fs::last_write_time(group, fs::last_write_time(group) - std::chrono::hours(5));
  spit(env.dir / "journal/unrelated", "x");
  fs::remove(env.dir / "journal/unrelated");
  CHECK(*env.w->fingerprint() == expected);
  fs::permissions(group, fs::perms(0600));
  const std::string moded = *env.w->fingerprint();
  CHECK(moded != expected);
  fs::permissions(group, fs::perms(0644));
  CHECK(*env.w->fingerprint() == expected);
  spit(env.root / "fleet/new.conf", "");
  CHECK(*env.w->fingerprint() != expected);
}

TEST_CASE("filetree fingerprint: the test vector of docs/WORLDS.md") {
  aura::testing::TempDir tmp;
  const fs::path root = tmp / "root";
  fs::create_directory(root);
  fs::permissions(root, fs::perms(0755));
  auto world = aura::workers::filetree::WorldFs::open(root);
  REQUIRE(world.ok());
  REQUIRE((*world)->make_dir("/fleet", 0755).is_ok());
  REQUIRE((*world)->write_file("/fleet/inventory.conf", "hello\n", 0644).is_ok());
  auto fp = (*world)->fingerprint();
  REQUIRE(fp.ok());
  CHECK(*fp == "0a7deb8a2f2f837cb717a302f2c0a22598f6fa5912c8c8ded9e6acf1f9317d47");
}
