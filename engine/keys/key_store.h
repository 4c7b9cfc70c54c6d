// The lab's keys folder: the lab signing key (lab.key, private, mode 0600) and its public
// half (lab.pub). The folder lives outside the data folder (the CLI enforces that); a key
// store never hands out a signer loaded from a file that others could have read or written.
#pragma once

#include <filesystem>
#include <string_view>
#include <utility>

#include "engine/common/status.h"
#include "engine/sign/signed_note.h"

namespace aura {

class KeyStore {
 public:
  static constexpr std::string_view kPrivateKeyFile = "lab.key";   // format_signer_key + "\n"
  static constexpr std::string_view kPublicKeyFile = "lab.pub";    // format_verifier_key + "\n"
  static constexpr std::string_view kKeyNamePrefix = "aura.lab/";  // + 16 random hex digits

  // Creates DIR (mode 0700, parents as needed) unless it exists, and a new lab signing key:
  // DIR/lab.key (0600) and DIR/lab.pub (0644). Refuses with kFailedPrecondition if lab.key
  // already exists; never replaces it, even when two inits race. Each file is written to a
  // temporary name, fsynced, then linked (lab.key, no-replace) or renamed (lab.pub) into
  // place, and DIR is fsynced. A crash can leave lab.key without lab.pub, never a partial
  // file.
  static Result<KeyStore> init(const std::filesystem::path& dir);

  // Loads DIR/lab.key. Refuses (kFailedPrecondition) unless it is a regular file, not a
  // symlink, owned by the effective uid, with mode exactly 0600; refuses (kCorruption) if it
  // does not parse or DIR/lab.pub does not hold its public key; kNotFound if it is missing.
  static Result<KeyStore> open(const std::filesystem::path& dir);

  // Reads a lab.pub-style file: one verifier key string and an optional final newline.
  static Result<NoteVerifierKey> load_public(const std::filesystem::path& file);

  // Thread-safe: a KeyStore is immutable after init()/open().
  const NoteSigner& lab_signer() const { return signer_; }
  NoteVerifierKey lab_verifier() const { return signer_.verifier(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  KeyStore(std::filesystem::path dir, NoteSigner signer)
      : dir_(std::move(dir)), signer_(std::move(signer)) {}

  std::filesystem::path dir_;
  NoteSigner signer_;
};

}  // namespace aura
