#include "engine/package/trust_store.h"

#include <doctest/doctest.h>

#include "tests/package/package_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

std::string pub_line(const NoteSigner& s) { return format_verifier_key(s.verifier()) + "\n"; }

std::string load_error(const fs::path& dir) {
  auto r = TrustStore::load(dir);
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

}  // namespace

TEST_CASE("trust store: loads every *.pub in the folder, in name order") {
  TempDir tmp;
  const NoteSigner a = fresh_signer("aura.publisher/a"), b = fresh_signer("aura.publisher/b");
  write_file(tmp / "b.pub", pub_line(b));
  write_file(tmp / "a.pub", format_verifier_key(a.verifier()));  // no newline: accepted
  auto t = TrustStore::load(tmp.path());
  REQUIRE_MESSAGE(t.ok(), t.status().message());
  REQUIRE(t->keys().size() == 2);
  CHECK(t->keys()[0] == a.verifier());
  CHECK(t->keys()[1] == b.verifier());
  CHECK(t->sources() == std::vector<std::string>{"a.pub", "b.pub"});
}

TEST_CASE("trust store: an empty folder trusts nothing; a missing folder is not found") {
  TempDir tmp;
  auto t = TrustStore::load(tmp.path());
  REQUIRE(t.ok());
  CHECK(t->empty());
  auto missing = TrustStore::load(tmp / "nope");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::kNotFound);
  CHECK(contains(missing.status().message(), "aura keys init-publisher"));
}

TEST_CASE("trust store: a malformed key file is refused, naming it") {
  TempDir tmp;
  write_file(tmp / "good.pub", pub_line(fresh_signer("aura.publisher/good")));
  write_file(tmp / "broken.pub", "aura.publisher/x+00000000+AAAA\n");
  const std::string m = load_error(tmp.path());
  CHECK_MESSAGE(contains(m, "broken.pub is not a publisher public key"), m);
}

TEST_CASE("trust store: a private key dropped in the folder is refused, naming it") {
  TempDir tmp;
  write_file(tmp / "oops.pub", format_signer_key(fresh_signer("aura.publisher/x")) + "\n");
  const std::string m = load_error(tmp.path());
  CHECK_MESSAGE(contains(m, "oops.pub is not a publisher public key"), m);
}

TEST_CASE("trust store: an unknown file, a subfolder or a symlink is refused, naming it") {
  {
    TempDir tmp;
    write_file(tmp / "notes.txt", "hi\n");
    const std::string m = load_error(tmp.path());
    CHECK_MESSAGE(contains(m, "unexpected entry notes.txt"), m);
  }
  {
    TempDir tmp;
    fs::create_directory(tmp / "sub.pub");
    const std::string m = load_error(tmp.path());
    CHECK_MESSAGE(contains(m, "sub.pub is not a regular file"), m);
  }
  {
    TempDir tmp;
    fs::create_directory(tmp / "store");
    write_file(tmp / "elsewhere.pub", pub_line(fresh_signer("aura.publisher/x")));
    fs::create_symlink(tmp / "elsewhere.pub", tmp / "store" / "x.pub");
    const std::string m = load_error(tmp / "store");
    CHECK_MESSAGE(contains(m, "x.pub is a symlink"), m);
  }
}

TEST_CASE("trust store: the same key in two files is refused, naming both") {
  TempDir tmp;
  const NoteSigner a = fresh_signer("aura.publisher/a");
  write_file(tmp / "one.pub", pub_line(a));
  write_file(tmp / "two.pub", pub_line(a));
  const std::string m = load_error(tmp.path());
  CHECK_MESSAGE(contains(m, "two.pub holds the same key as one.pub"), m);
}
