#include "engine/package/publisher_key.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>

#include "engine/common/file_io.h"
#include "engine/crypto/ed25519.h"
#include "engine/crypto/sha256.h"

namespace aura {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxKeyFileBytes = 4096;
constexpr mode_t kPrivateMode = 0600;
constexpr mode_t kPublicMode = 0644;
constexpr mode_t kDirMode = 0700;

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Makes sure KEYS/publishers/<name>.pub holds `key`: writes it if missing, refuses if it
// holds another key.
Result<fs::path> ensure_public(const fs::path& keys_dir, const NoteVerifierKey& key) {
  const fs::path dir = keys_dir / kPublishersDir;
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(dir, kDirMode));
  const fs::path pub = dir / publisher_pub_file_name(key.name);
  const std::string text = format_verifier_key(key) + "\n";
  auto existing = file_io::read_regular_file(pub, pub.string(), kMaxKeyFileBytes);
  if (existing.ok()) {
    auto parsed = parse_verifier_key(*existing);
    if (parsed.ok() && *parsed == key) return pub;
    return Status::corruption(pub.string() + " exists but does not hold the public key of " +
                              (keys_dir / kPublisherKeyFile).string() + "; not replacing it");
  }
  if (existing.status().code() != ErrorCode::kNotFound) return existing.status();
  // The temporary file goes in KEYS, not in the trust store, so a crash leaves no stray
  // file there for TrustStore::load to refuse.
  Status s = file_io::create_file_durably(keys_dir, pub, text, kPublicMode);
  if (s.code() == ErrorCode::kFailedPrecondition) {
    // A concurrent call won the race; accept its file if it holds our key.
    return ensure_public(keys_dir, key);
  }
  AURA_RETURN_IF_ERROR(s);
  return pub;
}

}  // namespace

std::string publisher_pub_file_name(std::string_view key_name) {
  std::string out(key_name);
  for (char& c : out) {
    if (c == '/') c = '_';
  }
  return out + ".pub";
}

Result<NoteSigner> load_publisher_key(const fs::path& key_file) {
  const std::string where = "publisher key " + key_file.string();
  const int raw = ::open(key_file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (raw < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found(where + " not found");
    if (err == ELOOP) return Status::failed_precondition(where + " is a symlink; refusing it");
    return Status::io(where + ": open: " + file_io::errno_text(err));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{raw};
  // The checks and the read use one descriptor, so the file checked is the file read.
  struct stat st;
  if (::fstat(raw, &st) != 0) {
    return Status::io(where + ": fstat: " + file_io::errno_text(errno));
  }
  if (!S_ISREG(st.st_mode)) return Status::failed_precondition(where + " is not a regular file");
  if (st.st_uid != ::geteuid()) {
    return Status::failed_precondition(where + " is owned by uid " + std::to_string(st.st_uid) +
                                       ", not the current uid " + std::to_string(::geteuid()));
  }
  if ((st.st_mode & 07777) != kPrivateMode) {
    return Status::failed_precondition(where + " has mode " + mode_text(st.st_mode) +
                                       "; it must be 0600 (chmod 600 it)");
  }
  std::string text;
  // Reserved up front so the secret is never left behind in a buffer freed by growth.
  text.reserve(kMaxKeyFileBytes + 1);
  char buf[512];
  for (;;) {
    const ssize_t n = ::read(raw, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      explicit_bzero(text.data(), text.size());
      return Status::io(where + ": read: " + file_io::errno_text(err));
    }
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kMaxKeyFileBytes) {
      explicit_bzero(buf, sizeof buf);
      explicit_bzero(text.data(), text.size());
      return Status::corruption(where + " is larger than " + std::to_string(kMaxKeyFileBytes) +
                                " bytes");
    }
    text.append(buf, static_cast<size_t>(n));
  }
  explicit_bzero(buf, sizeof buf);
  auto signer = parse_signer_key(text);
  explicit_bzero(text.data(), text.size());
  if (!signer.ok()) return Status::corruption(where + ": " + signer.status().message());
  return signer;
}

Result<PublisherKey> ensure_publisher_key(const fs::path& keys_dir) {
  const fs::path key_file = keys_dir / kPublisherKeyFile;
  bool created = false;
  struct stat st;
  if (::lstat(key_file.c_str(), &st) != 0) {
    if (errno != ENOENT) {
      return Status::io("stat " + key_file.string() + ": " + file_io::errno_text(errno));
    }
    AURA_RETURN_IF_ERROR(file_io::ensure_dir(keys_dir, kDirMode));
    std::array<uint8_t, 8> rnd;
    random_bytes(rnd);
    NoteSigner fresh(std::string(kPublisherKeyNamePrefix) + to_hex(rnd),
                     Ed25519KeyPair::generate());
    std::string secret = format_signer_key(fresh) + "\n";
    Status s = file_io::create_file_durably(keys_dir, key_file, secret, kPrivateMode);
    explicit_bzero(secret.data(), secret.size());
    // kFailedPrecondition: a concurrent call created the key first; load and use theirs.
    if (!s.is_ok() && s.code() != ErrorCode::kFailedPrecondition) return s;
    created = s.is_ok();
  }
  auto signer = load_publisher_key(key_file);
  if (!signer.ok()) return signer.status();
  auto pub = ensure_public(keys_dir, signer->verifier());
  if (!pub.ok()) return pub.status();
  return PublisherKey{std::move(*signer), created, key_file, *pub};
}

}  // namespace aura
