#include "engine/package/trust_store.h"

#include <algorithm>
#include <system_error>

#include "engine/common/file_io.h"

namespace aura {
namespace fs = std::filesystem;
namespace {

constexpr size_t kMaxPubFileBytes = 4096;
constexpr size_t kMaxTrustedKeys = 1024;

}  // namespace

Result<TrustStore> TrustStore::load(const fs::path& dir) {
  const std::string where = "trust store " + dir.string();
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (ec || !fs::exists(st)) {
    return Status::not_found(where +
                             " not found (create a publisher key with 'aura keys "
                             "init-publisher', or pass --trust DIR)");
  }
  if (!fs::is_directory(st)) return Status::invalid(where + " is not a directory");

  std::vector<fs::path> entries;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    entries.push_back(it->path());
    if (entries.size() > kMaxTrustedKeys) {
      return Status::invalid(where + " holds more than " + std::to_string(kMaxTrustedKeys) +
                             " entries");
    }
  }
  if (ec) return Status::io(where + ": " + ec.message());
  std::sort(entries.begin(), entries.end());  // keys in a stable order

  TrustStore store;
  store.dir_ = dir;
  for (const fs::path& p : entries) {
    const std::string name = p.filename().string();
    if (name.size() <= 4 || !name.ends_with(".pub")) {
      return Status::invalid(where + ": unexpected entry " + name +
                             " (only <name>.pub publisher keys belong here)");
    }
    auto text = file_io::read_regular_file(p, where + ": " + name, kMaxPubFileBytes);
    if (!text.ok()) return text.status();
    auto key = parse_verifier_key(*text);
    if (!key.ok()) {
      return Status::invalid(where + ": " + name +
                             " is not a publisher public key: " + key.status().message());
    }
    AURA_RETURN_IF_ERROR(store.add(*key, name).with_context(where));
  }
  return store;
}

Status TrustStore::add(const NoteVerifierKey& key, std::string source) {
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == key) {
      return Status::invalid(source + " holds the same key as " + sources_[i]);
    }
  }
  keys_.push_back(key);
  sources_.push_back(std::move(source));
  return Status::ok();
}

}  // namespace aura
