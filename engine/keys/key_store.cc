#include "engine/keys/key_store.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

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

using file_io::errno_text;

std::string mode_text(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

using file_io::Fd;

// Reads a small regular file opened as `fd`; `what` names it in errors.
Result<std::string> read_small(int fd, const std::string& what) {
  std::string out;
  char buf[1024];
  // Reserved up front so a secret is never left behind in a buffer freed by growth.
  out.reserve(kMaxKeyFileBytes + sizeof buf);
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::io("read " + what + ": " + errno_text(errno));
    if (n == 0) {
      explicit_bzero(buf, sizeof buf);
      break;
    }
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxKeyFileBytes) {
      explicit_bzero(out.data(), out.size());
      return Status::corruption(what + " is larger than " + std::to_string(kMaxKeyFileBytes) +
                                " bytes");
    }
  }
  return out;
}

}  // namespace

Result<KeyStore> KeyStore::init(const fs::path& dir) {
  const fs::path key_path = dir / kPrivateKeyFile;
  struct stat st;
  if (::lstat(key_path.c_str(), &st) == 0) {
    return Status::failed_precondition("keys init: " + key_path.string() +
                                       " already exists; refusing to replace the lab key");
  }
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(dir, kDirMode).with_context("keys init"));

  std::array<uint8_t, 8> rnd;
  random_bytes(rnd);
  NoteSigner signer(std::string(kKeyNamePrefix) + to_hex(rnd), Ed25519KeyPair::generate());

  // create_file_durably links, never replaces: of two racing inits exactly one claims
  // lab.key. A crash can leave lab.key without lab.pub, never a partial file.
  std::string secret = format_signer_key(signer) + "\n";
  Status s = file_io::create_file_durably(dir, key_path, secret, kPrivateMode);
  explicit_bzero(secret.data(), secret.size());
  if (s.code() == ErrorCode::kFailedPrecondition) {
    return Status::failed_precondition("keys init: " + key_path.string() +
                                       " already exists; refusing to replace the lab key");
  }
  AURA_RETURN_IF_ERROR(s.with_context("keys init"));
  AURA_RETURN_IF_ERROR(file_io::replace_file_durably(dir, dir / kPublicKeyFile,
                                                     format_verifier_key(signer.verifier()) + "\n",
                                                     kPublicMode)
                           .with_context("keys init"));
  return KeyStore(dir, std::move(signer));
}

Result<KeyStore> KeyStore::open(const fs::path& dir) {
  const fs::path key_path = dir / kPrivateKeyFile;
  const std::string where = "keys: " + key_path.string();
  // O_NOFOLLOW: a symlink could point at a key someone else controls. O_NONBLOCK: a FIFO
  // must not hang the open; it is refused below as not a regular file.
  Fd fd(::open(key_path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found(where + " not found (create it with init)");
    if (err == ELOOP) return Status::failed_precondition(where + " is a symlink; refusing it");
    return Status::io(where + ": open: " + errno_text(err));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::io(where + ": fstat: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return Status::failed_precondition(where + " is not a regular file");
  if (st.st_uid != ::geteuid()) {
    return Status::failed_precondition(where + " is owned by uid " + std::to_string(st.st_uid) +
                                       ", not the current uid " + std::to_string(::geteuid()));
  }
  if ((st.st_mode & 07777) != kPrivateMode) {
    return Status::failed_precondition(where + " has mode " + mode_text(st.st_mode) +
                                       "; it must be 0600 (chmod 600 it)");
  }
  auto text = read_small(fd.get(), where);
  if (!text.ok()) return text.status();
  auto signer = parse_signer_key(*text);
  explicit_bzero(text->data(), text->size());
  if (!signer.ok()) return Status::corruption(where + ": " + signer.status().message());

  const fs::path pub_path = dir / kPublicKeyFile;
  auto pub = load_public(pub_path);
  if (!pub.ok()) return pub.status();
  if (*pub != signer->verifier()) {
    return Status::corruption("keys: " + pub_path.string() + " holds " + format_verifier_key(*pub) +
                              ", not the public key of " + key_path.string());
  }
  return KeyStore(dir, std::move(*signer));
}

Result<NoteVerifierKey> KeyStore::load_public(const fs::path& file) {
  const std::string where = "keys: " + file.string();
  Fd fd(::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::not_found(where + " not found");
    return Status::io(where + ": open: " + errno_text(err));
  }
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return Status::io(where + ": fstat: " + errno_text(errno));
  if (!S_ISREG(st.st_mode)) return Status::failed_precondition(where + " is not a regular file");
  auto text = read_small(fd.get(), where);
  if (!text.ok()) return text.status();
  auto key = parse_verifier_key(*text);
  if (!key.ok()) return Status::corruption(where + ": " + key.status().message());
  return key;
}

}  // namespace aura
