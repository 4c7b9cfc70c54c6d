#include "engine/blob/blob_store.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "engine/crypto/sha256.h"
#include "tests/blob/blob_test_util.h"

namespace aura {
namespace {

using blob_test::count_files;
using blob_test::overwrite;
using blob_test::slurp;
using blob_test::TempDir;

constexpr std::string_view kHello = "hello\n";
constexpr std::string_view kHelloHex =
    "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03";

BlobStore open_store(const std::filesystem::path& dir,
                     uint64_t max = BlobStore::kDefaultMaxBlobBytes) {
  auto store = BlobStore::open(dir, max);
  REQUIRE_MESSAGE(store.ok(), store.status().message());
  return std::move(store).value();
}

BlobInfo put_ok(BlobStore& store, std::string_view bytes) {
  auto info = store.put(as_bytes(bytes));
  REQUIRE_MESSAGE(info.ok(), info.status().message());
  return *info;
}

std::string pseudo_random_bytes(size_t n, uint32_t seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) {
    seed = seed * 1664525u + 1013904223u;
    s[i] = static_cast<char>(seed >> 24);
  }
  return s;
}

bool contains_text(const Status& s, std::string_view text) {
  return s.message().find(text) != std::string::npos;
}

TEST_CASE("blob store: put then get returns the same bytes under their digest") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path() / "blobs");
  std::string bytes = pseudo_random_bytes(300000, 7);
  BlobInfo info = put_ok(store, bytes);
  CHECK(info.sha256 == sha256(bytes));
  CHECK(info.bytes == bytes.size());
  CHECK(store.contains(info.sha256));
  auto got = store.get(info.sha256);
  REQUIRE(got.ok());
  CHECK(*got == bytes);
  CHECK(store.check(info.sha256, bytes.size()).is_ok());
  CHECK(count_files(tmp.path() / "blobs" / "tmp") == 0);
}

TEST_CASE("blob store: \"hello\\n\" is stored at the path of the documented test vector") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, kHello);
  CHECK(to_hex(info.sha256) == kHelloHex);
  std::filesystem::path want = tmp.path() / "sha256" / "58" / kHelloHex.substr(2);
  CHECK(store.path_of(info.sha256) == want);
  CHECK(slurp(want) == kHello);
}

TEST_CASE("blob store: a stored blob is a read-only regular file") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, "abc");
  struct stat st {};
  REQUIRE(::lstat(store.path_of(info.sha256).c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  CHECK((st.st_mode & 0222) == 0);
}

TEST_CASE("blob store: an empty blob round-trips") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, "");
  CHECK(info.bytes == 0);
  CHECK(to_hex(info.sha256) == to_hex(sha256("")));
  auto got = store.get(info.sha256);
  REQUIRE(got.ok());
  CHECK(got->empty());
  CHECK(store.check(info.sha256, 0).is_ok());
}

TEST_CASE("blob store: putting the same bytes twice keeps the first file") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo first = put_ok(store, "same bytes");
  struct stat before {};
  REQUIRE(::stat(store.path_of(first.sha256).c_str(), &before) == 0);
  BlobInfo second = put_ok(store, "same bytes");
  struct stat after {};
  REQUIRE(::stat(store.path_of(first.sha256).c_str(), &after) == 0);
  CHECK(second.sha256 == first.sha256);
  CHECK(second.bytes == first.bytes);
  CHECK(after.st_ino == before.st_ino);
  CHECK(count_files(tmp.path()) == 1);
}

TEST_CASE("blob store: a blob over the limit is refused naming both sizes, leaving nothing") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path(), 16);
  CHECK(store.max_blob_bytes() == 16);
  auto r = store.put(as_bytes(std::string(17, 'x')));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  CHECK(contains_text(r.status(), "17 bytes"));
  CHECK(contains_text(r.status(), "16 bytes"));
  CHECK(count_files(tmp.path()) == 0);
  CHECK(std::filesystem::is_empty(tmp.path() / "sha256"));
  CHECK(std::filesystem::is_empty(tmp.path() / "tmp"));
  // Exactly at the limit is fine.
  put_ok(store, std::string(16, 'x'));
}

TEST_CASE("blob store: get and check of a missing blob are kNotFound naming its digest") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  Digest d = sha256("never stored");
  auto got = store.get(d);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == ErrorCode::kNotFound);
  CHECK(contains_text(got.status(), to_hex(d)));
  Status s = store.check(d, 12);
  CHECK(s.code() == ErrorCode::kNotFound);
  CHECK(contains_text(s, to_hex(d)));
  CHECK_FALSE(store.contains(d));
  // Also when its fan-out folder exists.
  put_ok(store, "x");
  Digest sibling = sha256("x");
  sibling[31] ^= 1;
  CHECK(store.check(sibling, 1).code() == ErrorCode::kNotFound);
}

TEST_CASE("blob store: a truncated blob fails check naming its digest") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, "0123456789");
  overwrite(store.path_of(info.sha256), "01234");
  Status s = store.check(info.sha256, info.bytes);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "blob " + to_hex(info.sha256) + ": 5 bytes, expected 10");
  auto got = store.get(info.sha256);
  CHECK(got.status().code() == ErrorCode::kCorruption);
}

TEST_CASE("blob store: a blob whose bytes were swapped fails check naming its digest") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, "0123456789");
  overwrite(store.path_of(info.sha256), "1023456789");
  Status s = store.check(info.sha256, info.bytes);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() ==
        "blob " + to_hex(info.sha256) + ": content hashes to " + to_hex(sha256("1023456789")));
  auto got = store.get(info.sha256);
  REQUIRE_FALSE(got.ok());
  CHECK(got.status().code() == ErrorCode::kCorruption);
  CHECK(contains_text(got.status(), to_hex(info.sha256)));
}

TEST_CASE("blob store: check with the wrong expected size fails naming both sizes") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, "abc");
  Status s = store.check(info.sha256, 4);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "blob " + to_hex(info.sha256) + ": 3 bytes, expected 4");
}

TEST_CASE("blob store: a symlink in place of a blob is refused even if its target is right") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path() / "store");
  BlobInfo info = put_ok(store, "linked");
  std::filesystem::path outside = tmp.path() / "outside";
  overwrite(outside, "linked");
  std::filesystem::path p = store.path_of(info.sha256);
  std::filesystem::remove(p);
  std::filesystem::create_symlink(outside, p);

  Status s = store.check(info.sha256, info.bytes);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "blob " + to_hex(info.sha256) + ": is a symlink");
  CHECK(store.get(info.sha256).status().code() == ErrorCode::kCorruption);
  CHECK_FALSE(store.contains(info.sha256));

  // put repairs it with a real file and leaves the symlink's target alone.
  put_ok(store, "linked");
  CHECK(std::filesystem::symlink_status(p).type() == std::filesystem::file_type::regular);
  CHECK(store.check(info.sha256, info.bytes).is_ok());
  CHECK(slurp(outside) == "linked");
}

TEST_CASE("blob store: a FIFO in place of a blob is refused without blocking, and put repairs it") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, "fifo");
  std::filesystem::path p = store.path_of(info.sha256);
  std::filesystem::remove(p);
  REQUIRE(::mkfifo(p.c_str(), 0600) == 0);
  Status s = store.check(info.sha256, info.bytes);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "blob " + to_hex(info.sha256) + ": not a regular file");
  CHECK(store.get(info.sha256).status().code() == ErrorCode::kCorruption);
  CHECK_FALSE(store.contains(info.sha256));
  put_ok(store, "fifo");
  CHECK(store.check(info.sha256, info.bytes).is_ok());
}

TEST_CASE("blob store: a directory in place of a blob is refused by check and by put") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, "dir");
  std::filesystem::path p = store.path_of(info.sha256);
  std::filesystem::remove(p);
  std::filesystem::create_directory(p);
  CHECK(store.check(info.sha256, info.bytes).code() == ErrorCode::kCorruption);
  auto again = store.put(as_bytes("dir"));
  REQUIRE_FALSE(again.ok());
  CHECK(contains_text(again.status(), to_hex(info.sha256)));
  CHECK(count_files(tmp.path() / "tmp") == 0);
}

TEST_CASE("blob store: put replaces a corrupted existing blob durably") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  BlobInfo info = put_ok(store, "precious evidence");
  std::filesystem::path p = store.path_of(info.sha256);
  overwrite(p, "tampered evidence");
  REQUIRE(store.check(info.sha256, info.bytes).code() == ErrorCode::kCorruption);

  BlobInfo again = put_ok(store, "precious evidence");
  CHECK(again.sha256 == info.sha256);
  CHECK(store.check(info.sha256, info.bytes).is_ok());
  CHECK(slurp(p) == "precious evidence");
  CHECK(count_files(tmp.path() / "tmp") == 0);

  // Through put_fd as well, after truncation.
  overwrite(p, "prec");
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  REQUIRE(::write(fds[1], "precious evidence", 17) == 17);
  ::close(fds[1]);
  auto via_fd = store.put_fd(fds[0], 1024);
  ::close(fds[0]);
  REQUIRE(via_fd.ok());
  CHECK(store.check(info.sha256, info.bytes).is_ok());
  CHECK(count_files(tmp.path() / "tmp") == 0);
}

TEST_CASE("blob store: put_fd over a pipe stores everything until EOF") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  std::string bytes = pseudo_random_bytes((1 << 20) + 17, 3);  // larger than a pipe buffer
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::thread writer([&] {
    size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::write(fds[1], bytes.data() + off, bytes.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(fds[1]);
  });
  auto info = store.put_fd(fds[0], bytes.size());
  writer.join();
  ::close(fds[0]);
  REQUIRE_MESSAGE(info.ok(), info.status().message());
  CHECK(info->bytes == bytes.size());
  CHECK(info->sha256 == sha256(bytes));
  CHECK(store.check(info->sha256, info->bytes).is_ok());
  CHECK(count_files(tmp.path() / "tmp") == 0);
}

TEST_CASE("blob store: put_fd over a file stores the whole file whatever its offset") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path() / "store");
  std::string bytes = pseudo_random_bytes(700000, 11);
  std::filesystem::path src = tmp.path() / "src";
  overwrite(src, bytes);
  int fd = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  REQUIRE(::lseek(fd, 1234, SEEK_SET) == 1234);
  auto info = store.put_fd(fd, bytes.size());
  CHECK(::lseek(fd, 0, SEEK_CUR) == 1234);  // the fd's offset is left alone
  ::close(fd);
  REQUIRE_MESSAGE(info.ok(), info.status().message());
  CHECK(info->bytes == bytes.size());
  CHECK(info->sha256 == sha256(bytes));
  auto got = store.get(info->sha256);
  REQUIRE(got.ok());
  CHECK(*got == bytes);
}

TEST_CASE("blob store: put_fd over a sealed memfd stores its content") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  int fd = ::memfd_create("evidence", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  REQUIRE(fd >= 0);
  REQUIRE(::write(fd, "probe output", 12) == 12);  // leaves the offset at the end
  REQUIRE(::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0);
  auto info = store.put_fd(fd, 64);
  ::close(fd);
  REQUIRE_MESSAGE(info.ok(), info.status().message());
  CHECK(info->sha256 == sha256("probe output"));
  CHECK(info->bytes == 12);
}

TEST_CASE("blob store: put_fd of an already stored blob is idempotent") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path() / "store");
  BlobInfo first = put_ok(store, "twice");
  std::filesystem::path src = tmp.path() / "src";
  overwrite(src, "twice");
  int fd = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  auto info = store.put_fd(fd, 100);
  ::close(fd);
  REQUIRE(info.ok());
  CHECK(info->sha256 == first.sha256);
  CHECK(count_files(tmp.path() / "store") == 1);
}

TEST_CASE("blob store: put_fd over the caller's limit is refused and leaves nothing behind") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path() / "store");
  const std::string bytes(5000, 'p');

  SUBCASE("pipe") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(::write(fds[1], bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    ::close(fds[1]);
    auto r = store.put_fd(fds[0], 4096);
    ::close(fds[0]);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kInvalidArgument);
    CHECK(contains_text(r.status(), "more than 4096 bytes"));
    CHECK(contains_text(r.status(), "caller limit 4096"));
    CHECK(contains_text(r.status(), "store limit 67108864"));
  }
  SUBCASE("file") {
    std::filesystem::path src = tmp.path() / "src";
    overwrite(src, bytes);
    int fd = ::open(src.c_str(), O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    auto r = store.put_fd(fd, 4096);
    ::close(fd);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kInvalidArgument);
    CHECK(contains_text(r.status(), "file of 5000 bytes"));
    CHECK(contains_text(r.status(), "limit of 4096 bytes"));
  }
  CHECK(count_files(tmp.path() / "store") == 0);
  CHECK(std::filesystem::is_empty(tmp.path() / "store" / "sha256"));
}

TEST_CASE("blob store: put_fd is held to the store's limit even when the caller allows more") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path(), 100);
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::string bytes(101, 'q');
  REQUIRE(::write(fds[1], bytes.data(), bytes.size()) == 101);
  ::close(fds[1]);
  auto r = store.put_fd(fds[0], 1 << 20);
  ::close(fds[0]);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  CHECK(contains_text(r.status(), "limit of 100 bytes"));
  CHECK(count_files(tmp.path()) == 0);
}

TEST_CASE("blob store: put_fd on a closed fd is refused") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  ::close(fds[0]);
  ::close(fds[1]);
  auto r = store.put_fd(fds[0], 10);
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  CHECK(count_files(tmp.path()) == 0);
}

TEST_CASE("blob store: reopening finds earlier blobs") {
  TempDir tmp;
  Digest d;
  {
    BlobStore store = open_store(tmp.path());
    d = put_ok(store, "kept").sha256;
  }
  BlobStore store = open_store(tmp.path());
  auto got = store.get(d);
  REQUIRE(got.ok());
  CHECK(*got == "kept");
}

TEST_CASE("blob store: open creates missing folders with mode 0750") {
  TempDir tmp;
  mode_t mask = ::umask(0);
  ::umask(mask);
  std::filesystem::path dir = tmp.path() / "a" / "b" / "blobs";
  BlobStore store = open_store(dir);
  CHECK(store.dir() == dir);
  for (const auto& p : {dir, dir / "sha256", dir / "tmp"}) {
    struct stat st {};
    REQUIRE(::stat(p.c_str(), &st) == 0);
    CHECK(S_ISDIR(st.st_mode));
    CHECK((st.st_mode & 0777) == (0750 & ~mask));
  }
}

TEST_CASE("blob store: open refuses a sha256 folder that is a symlink") {
  TempDir tmp;
  std::filesystem::create_directory(tmp.path() / "elsewhere");
  std::filesystem::create_directory(tmp.path() / "store");
  std::filesystem::create_directory_symlink(tmp.path() / "elsewhere",
                                            tmp.path() / "store" / "sha256");
  auto r = BlobStore::open(tmp.path() / "store");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kCorruption);
  CHECK(contains_text(r.status(), "sha256: not a directory"));
}

TEST_CASE("blob store: a moved store keeps working") {
  TempDir tmp;
  BlobStore a = open_store(tmp.path());
  BlobStore b = std::move(a);
  BlobInfo info = put_ok(b, "moved");
  CHECK(b.check(info.sha256, info.bytes).is_ok());
}

TEST_CASE("blob store: concurrent puts of the same and of different bytes all succeed") {
  TempDir tmp;
  BlobStore store = open_store(tmp.path());
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        if (!store.put(as_bytes("shared")).ok()) ++failures[t];
        std::string own = "own " + std::to_string(t) + " " + std::to_string(i);
        if (!store.put(as_bytes(own)).ok()) ++failures[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int f : failures) CHECK(f == 0);
  CHECK(store.check(sha256("shared"), 6).is_ok());
  CHECK(count_files(tmp.path() / "sha256") == 1 + kThreads * 25);
  CHECK(count_files(tmp.path() / "tmp") == 0);
}

}  // namespace
}  // namespace aura
