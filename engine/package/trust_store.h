// The publisher trust store: the public keys whose package signatures the loader accepts,
// read from a folder of *.pub files (one C2SP verifier key string each, as lab.pub). It
// loads all or nothing: a file that is not a well-formed key refuses the whole store.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "engine/sign/signed_note.h"

namespace aura {

class TrustStore {
 public:
  TrustStore() = default;

  // Reads every entry of `dir`: each must be a regular file (not a symlink) named *.pub
  // holding one verifier key and an optional newline. Anything else (another name, a
  // subfolder, a malformed key, the same key twice) fails naming the file. kNotFound when
  // `dir` does not exist. An empty folder gives an empty store (which trusts nothing).
  static Result<TrustStore> load(const std::filesystem::path& dir);

  // Adds a key; `source` names where it came from in errors and listings. Refuses a key
  // already present.
  Status add(const NoteVerifierKey& key, std::string source);

  // Thread-safe for concurrent const use; the span lives as long as the store, unchanged.
  std::span<const NoteVerifierKey> keys() const { return keys_; }
  // Where each key came from, parallel to keys().
  const std::vector<std::string>& sources() const { return sources_; }
  const std::filesystem::path& dir() const { return dir_; }
  bool empty() const { return keys_.empty(); }

 private:
  std::filesystem::path dir_;
  std::vector<NoteVerifierKey> keys_;
  std::vector<std::string> sources_;
};

}  // namespace aura
