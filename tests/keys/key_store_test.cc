#include "engine/keys/key_store.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "engine/sign/signed_note.h"

using namespace aura;
namespace fs = std::filesystem;

namespace {

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "aura-keys-test-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

mode_t mode_of(const fs::path& p) {
  struct stat st;
  REQUIRE(::lstat(p.c_str(), &st) == 0);
  return st.st_mode & 07777;
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_all(const fs::path& p, std::string_view s) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << s;
}

bool is_lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("keys init: creates a 0700 folder, lab.key 0600 and lab.pub 0644 that parse") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "nested" / "keys";
  auto ks = KeyStore::init(dir);
  REQUIRE_MESSAGE(ks.ok(), ks.status().message());
  CHECK(ks->dir() == dir);
  CHECK(mode_of(dir) == 0700);
  CHECK(mode_of(dir / "lab.key") == 0600);
  CHECK(mode_of(dir / "lab.pub") == 0644);

  const std::string name = ks->lab_signer().name();
  CHECK(name.starts_with("aura.lab/"));
  CHECK(name.size() == 9 + 16);
  CHECK(is_lower_hex(name.substr(9)));

  const std::string key_text = read_all(dir / "lab.key");
  CHECK(key_text == format_signer_key(ks->lab_signer()) + "\n");
  const std::string pub_text = read_all(dir / "lab.pub");
  CHECK(pub_text == format_verifier_key(ks->lab_verifier()) + "\n");

  // Only the two files: no temporary file is left behind.
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"lab.key", "lab.pub"});
}

TEST_CASE("keys init: two stores get different keys; an existing empty folder is used") {
  TempDir a, b;
  auto ka = KeyStore::init(a.path());
  auto kb = KeyStore::init(b.path());
  REQUIRE(ka.ok());
  REQUIRE(kb.ok());
  CHECK(ka->lab_verifier() != kb->lab_verifier());
  CHECK(ka->lab_signer().name() != kb->lab_signer().name());
}

TEST_CASE("keys init: a second init is refused and leaves the first key intact") {
  TempDir tmp;
  auto first = KeyStore::init(tmp.path());
  REQUIRE(first.ok());
  const std::string before = read_all(tmp.path() / "lab.key");
  const std::string pub_before = read_all(tmp.path() / "lab.pub");
  auto second = KeyStore::init(tmp.path());
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(second.status().message().find("already exists") != std::string::npos);
  CHECK(read_all(tmp.path() / "lab.key") == before);
  CHECK(read_all(tmp.path() / "lab.pub") == pub_before);
}

TEST_CASE("keys init: a lab.key that is a dangling symlink still counts as existing") {
  TempDir tmp;
  fs::create_symlink(tmp.path() / "nowhere", tmp.path() / "lab.key");
  auto r = KeyStore::init(tmp.path());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
  CHECK_FALSE(fs::exists(tmp.path() / "nowhere"));
}

TEST_CASE("keys init: a folder path that is a file is refused") {
  TempDir tmp;
  write_all(tmp.path() / "file", "x");
  CHECK_FALSE(KeyStore::init(tmp.path() / "file").ok());
}

TEST_CASE("keys open: returns the key init made, which signs notes its lab.pub verifies") {
  TempDir tmp;
  auto made = KeyStore::init(tmp.path());
  REQUIRE(made.ok());
  auto ks = KeyStore::open(tmp.path());
  REQUIRE_MESSAGE(ks.ok(), ks.status().message());
  CHECK(ks->lab_verifier() == made->lab_verifier());
  CHECK(ks->lab_signer().name() == made->lab_signer().name());

  auto pub = KeyStore::load_public(tmp.path() / "lab.pub");
  REQUIRE(pub.ok());
  auto note = sign_note("hello\n", ks->lab_signer());
  REQUIRE(note.ok());
  const std::vector<NoteVerifierKey> known = {*pub};
  CHECK(open_note(*note, known).ok());
}

TEST_CASE("keys open: lab.key with mode 0644 is refused and the message names the mode") {
  TempDir tmp;
  REQUIRE(KeyStore::init(tmp.path()).ok());
  const fs::path key = tmp.path() / "lab.key";
  REQUIRE(::chmod(key.c_str(), 0644) == 0);
  auto r = KeyStore::open(tmp.path());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(r.status().message().find("mode 0644") != std::string::npos);
  CHECK(r.status().message().find("0600") != std::string::npos);
}

TEST_CASE("keys open: any mode other than exactly 0600 is refused") {
  TempDir tmp;
  REQUIRE(KeyStore::init(tmp.path()).ok());
  const fs::path key = tmp.path() / "lab.key";
  for (mode_t m : {0400, 0640, 0604, 0700, 0660, 04600, 0602}) {
    REQUIRE(::chmod(key.c_str(), m) == 0);
    auto r = KeyStore::open(tmp.path());
    CHECK_MESSAGE(!r.ok(), m);
  }
  REQUIRE(::chmod(key.c_str(), 0600) == 0);
  CHECK(KeyStore::open(tmp.path()).ok());
}

TEST_CASE("keys open: lab.key owned by another uid is refused") {
  if (::geteuid() != 0) return;  // only root can give a file away
  TempDir tmp;
  REQUIRE(KeyStore::init(tmp.path()).ok());
  const fs::path key = tmp.path() / "lab.key";
  REQUIRE(::chown(key.c_str(), 65534, 65534) == 0);
  auto r = KeyStore::open(tmp.path());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(r.status().message().find("owned by uid 65534") != std::string::npos);
}

TEST_CASE("keys open: lab.key as a symlink or a directory is refused") {
  TempDir tmp, real;
  REQUIRE(KeyStore::init(real.path()).ok());
  fs::create_symlink(real.path() / "lab.key", tmp.path() / "lab.key");
  fs::copy_file(real.path() / "lab.pub", tmp.path() / "lab.pub");
  auto r = KeyStore::open(tmp.path());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("symlink") != std::string::npos);

  TempDir d;
  fs::create_directory(d.path() / "lab.key");
  CHECK(KeyStore::open(d.path()).status().code() == ErrorCode::kFailedPrecondition);
}

TEST_CASE("keys open: a missing lab.key is not found") {
  TempDir tmp;
  auto r = KeyStore::open(tmp.path());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kNotFound);
}

TEST_CASE("keys open: a lab.key that does not parse is refused as corrupt") {
  TempDir tmp;
  REQUIRE(KeyStore::init(tmp.path()).ok());
  const fs::path key = tmp.path() / "lab.key";
  const std::string good = read_all(key);
  for (std::string bad : {std::string(""), std::string("garbage\n"), good + "\n",
                          good.substr(0, good.size() - 2) + "\n", std::string(5000, 'A')}) {
    write_all(key, bad);
    REQUIRE(::chmod(key.c_str(), 0600) == 0);
    auto r = KeyStore::open(tmp.path());
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kCorruption);
  }
  write_all(key, good.substr(0, good.size() - 1));  // no final newline is still a key
  CHECK(KeyStore::open(tmp.path()).ok());
}

TEST_CASE("keys open: a lab.pub that is missing or belongs to another key is refused") {
  TempDir tmp, other;
  REQUIRE(KeyStore::init(tmp.path()).ok());
  REQUIRE(KeyStore::init(other.path()).ok());
  fs::copy_file(other.path() / "lab.pub", tmp.path() / "lab.pub",
                fs::copy_options::overwrite_existing);
  auto r = KeyStore::open(tmp.path());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kCorruption);
  CHECK(r.status().message().find("not the public key of") != std::string::npos);

  fs::remove(tmp.path() / "lab.pub");
  CHECK(KeyStore::open(tmp.path()).status().code() == ErrorCode::kNotFound);
}

TEST_CASE("keys load_public: reads a vkey file and refuses garbage and private keys") {
  TempDir tmp;
  const fs::path f = tmp.path() / "peer.pub";
  write_all(f, "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW\n");
  auto k = KeyStore::load_public(f);
  REQUIRE_MESSAGE(k.ok(), k.status().message());
  CHECK(k->key_id == 0xc74f20a3);

  write_all(f, "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz\n");
  CHECK(KeyStore::load_public(f).status().code() == ErrorCode::kCorruption);
  write_all(f, "");
  CHECK_FALSE(KeyStore::load_public(f).ok());
  CHECK(KeyStore::load_public(tmp.path() / "absent.pub").status().code() == ErrorCode::kNotFound);
  CHECK_FALSE(KeyStore::load_public(tmp.path()).ok());  // a directory
}
