#include "engine/package/publisher_key.h"

#include <doctest/doctest.h>
#include <sys/stat.h>

#include "engine/package/trust_store.h"
#include "tests/package/package_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

unsigned mode_of(const fs::path& p) {
  struct stat st {};
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("publisher key: created 0600 with its .pub in the trust store folder") {
  TempDir tmp;
  const fs::path keys = tmp / "keys";
  auto pk = ensure_publisher_key(keys);
  REQUIRE_MESSAGE(pk.ok(), pk.status().message());
  CHECK(pk->created);
  CHECK(pk->signer.name().starts_with("aura.publisher/"));
  CHECK(pk->key_file == keys / "publisher.key");
  CHECK(mode_of(keys / "publisher.key") == 0600);
  CHECK((mode_of(keys) & 077) == 0);
  CHECK(pk->pub_file == keys / "publishers" / publisher_pub_file_name(pk->signer.name()));
  CHECK(pk->pub_file.filename().string().find('/') == std::string::npos);
  CHECK(read_file(pk->pub_file) == format_verifier_key(pk->signer.verifier()) + "\n");
  // The trust store it made trusts exactly that key, and holds nothing else.
  auto trust = TrustStore::load(keys / "publishers");
  REQUIRE_MESSAGE(trust.ok(), trust.status().message());
  REQUIRE(trust->keys().size() == 1);
  CHECK(trust->keys()[0] == pk->signer.verifier());
  // No temporary file is left in the keys folder.
  for (const auto& e : fs::directory_iterator(keys)) {
    CHECK_MESSAGE(e.path().filename().string()[0] != '.', e.path());
  }
}

TEST_CASE("publisher key: a second call keeps the existing key and restores a missing .pub") {
  TempDir tmp;
  const fs::path keys = tmp / "keys";
  auto first = ensure_publisher_key(keys);
  REQUIRE(first.ok());
  const std::string key_bytes = read_file(keys / "publisher.key");
  auto second = ensure_publisher_key(keys);
  REQUIRE_MESSAGE(second.ok(), second.status().message());
  CHECK_FALSE(second->created);
  CHECK(second->signer.verifier() == first->signer.verifier());
  CHECK(read_file(keys / "publisher.key") == key_bytes);

  fs::remove(first->pub_file);
  auto third = ensure_publisher_key(keys);
  REQUIRE_MESSAGE(third.ok(), third.status().message());
  CHECK_FALSE(third->created);
  CHECK(read_file(first->pub_file) == format_verifier_key(first->signer.verifier()) + "\n");
}

TEST_CASE("publisher key: a .pub of that name holding another key is refused, not replaced") {
  TempDir tmp;
  const fs::path keys = tmp / "keys";
  auto pk = ensure_publisher_key(keys);
  REQUIRE(pk.ok());
  const std::string other = format_verifier_key(fresh_signer("aura.publisher/x").verifier()) + "\n";
  write_file(pk->pub_file, other);
  auto again = ensure_publisher_key(keys);
  REQUIRE_FALSE(again.ok());
  CHECK(contains(again.status().message(), "does not hold the public key"));
  CHECK(read_file(pk->pub_file) == other);
}

TEST_CASE("publisher key: loading refuses a key file that is not 0600, a symlink, or missing") {
  TempDir tmp;
  const fs::path keys = tmp / "keys";
  auto pk = ensure_publisher_key(keys);
  REQUIRE(pk.ok());
  auto ok = load_publisher_key(pk->key_file);
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->verifier() == pk->signer.verifier());

  fs::permissions(pk->key_file, fs::perms(0644));
  auto wide = load_publisher_key(pk->key_file);
  REQUIRE_FALSE(wide.ok());
  CHECK(contains(wide.status().message(), "has mode 0644; it must be 0600"));
  // ensure_publisher_key refuses it too rather than replacing it.
  CHECK_FALSE(ensure_publisher_key(keys).ok());
  fs::permissions(pk->key_file, fs::perms(0600));

  fs::create_symlink(pk->key_file, tmp / "link.key");
  auto link = load_publisher_key(tmp / "link.key");
  REQUIRE_FALSE(link.ok());
  CHECK(contains(link.status().message(), "is a symlink"));

  auto missing = load_publisher_key(tmp / "none.key");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::kNotFound);
}

TEST_CASE("publisher key: the signer key file is the documented text form") {
  TempDir tmp;
  const NoteSigner v = vector_signer();
  write_file(tmp / "p.key", format_signer_key(v) + "\n");
  fs::permissions(tmp / "p.key", fs::perms(0600));
  auto loaded = load_publisher_key(tmp / "p.key");
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  CHECK(format_signer_key(*loaded) ==
        "PRIVATE+KEY+aura.publisher/example+02e60056+AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f");
  CHECK(publisher_pub_file_name("aura.publisher/example") == "aura.publisher_example.pub");
}
