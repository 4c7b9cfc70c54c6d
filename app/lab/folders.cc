#include "app/lab/folders.h"

#include "engine/package/publisher_key.h"

namespace aura::app {
namespace fs = std::filesystem;

Status check_folders(const LabFolders& f) {
  if (path_is_within(f.keys, f.data) || path_is_within(f.data, f.keys)) {
    return Status::invalid("--keys " + f.keys.string() + " and --data " + f.data.string() +
                           " overlap; keep the keys folder outside the data folder");
  }
  return Status::ok();
}

Result<TrustStore> publisher_trust(const fs::path& keys_dir) {
  const fs::path dir = keys_dir / std::string(kPublishersDir);
  auto trust = TrustStore::load(dir);
  if (!trust.ok()) {
    return trust.status().with_context("publisher trust store " + dir.string() +
                                       " (create it with 'aura setup' or 'aura keys "
                                       "init-publisher')");
  }
  return trust;
}

Result<std::unique_ptr<EventLog>> open_reader(const fs::path& data_dir) {
  auto dd = DataDir::open_reader(data_dir);
  if (!dd.ok()) return dd.status();
  EventLog::Options o;
  o.read_only = true;
  return EventLog::open(dd->log_dir(), o);
}

Result<Writer> open_writer(const LabFolders& f) {
  AURA_RETURN_IF_ERROR(check_folders(f));
  auto keys = KeyStore::open(f.keys);
  if (!keys.ok()) {
    return keys.status().with_context("keys folder " + f.keys.string() +
                                      " (create it with 'aura keys init')");
  }
  auto dd = DataDir::open_writer(f.data);
  if (!dd.ok()) return dd.status();
  auto blobs = BlobStore::open(dd->blob_dir());
  if (!blobs.ok()) return blobs.status();
  Writer w{std::move(dd).value(), std::make_unique<KeyStore>(std::move(keys).value()),
           std::make_unique<BlobStore>(std::move(blobs).value()), nullptr};
  EventLog::Options o;
  o.signer = &w.keys->lab_signer();
  o.blobs = w.blobs.get();
  auto log = EventLog::open(w.dir.log_dir(), o);
  if (!log.ok()) return log.status();
  w.log = std::move(log).value();
  return w;
}

bool is_first_use(const LabFolders& f) {
  std::error_code ec;
  return !fs::exists(f.data / "log", ec);
}

}  // namespace aura::app
