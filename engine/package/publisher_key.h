// The operator's publisher key, which signs scenario packages: KEYS/publisher.key (mode
// 0600, a signer key string) and its public half in the trust store folder
// KEYS/publishers/<name with '/' replaced by '_'>.pub. An existing key is never replaced.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "engine/sign/signed_note.h"

namespace aura {

inline constexpr std::string_view kPublisherKeyFile = "publisher.key";
inline constexpr std::string_view kPublishersDir = "publishers";
inline constexpr std::string_view kPublisherKeyNamePrefix = "aura.publisher/";  // + 16 hex

// "<name with every '/' replaced by '_'>.pub"
std::string publisher_pub_file_name(std::string_view key_name);

struct PublisherKey {
  NoteSigner signer;
  bool created = false;  // false: the key already existed
  std::filesystem::path key_file;
  std::filesystem::path pub_file;
};

// Creates KEYS (0700) and KEYS/publisher.key (0600, written to a temporary file, fsynced
// and link()ed into place so it is never replaced) unless the key exists, in which case it
// is loaded as load_publisher_key() does. Either way, makes sure the public key is in
// KEYS/publishers (0700): writes the .pub if missing, and refuses (kCorruption) if a .pub
// of that name holds another key. Idempotent; safe against a concurrent call.
Result<PublisherKey> ensure_publisher_key(const std::filesystem::path& keys_dir);

// Loads a signer key file. Refuses (kFailedPrecondition) unless it is a regular file, not
// a symlink, owned by the effective uid, with mode exactly 0600; kNotFound if missing;
// kCorruption if it does not parse.
Result<NoteSigner> load_publisher_key(const std::filesystem::path& key_file);

}  // namespace aura
