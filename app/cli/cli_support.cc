#include "app/cli/cli_support.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "engine/package/publisher_key.h"

namespace aura::cli {
namespace fs = std::filesystem;

Result<std::string> read_small_file(const fs::path& p, size_t limit) {
  std::error_code ec;
  auto size = fs::file_size(p, ec);
  if (ec) return Status::not_found(p.string() + ": " + ec.message());
  if (size > limit)
    return Status::invalid(p.string() + ": " + std::to_string(size) + " bytes, limit " +
                           std::to_string(limit));
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  if (!in.good() && !in.eof()) return Status::io("read " + p.string());
  return s.str();
}

Status check_folders(const Invocation& inv) {
  if (path_is_within(inv.keys_dir, inv.data_dir) || path_is_within(inv.data_dir, inv.keys_dir)) {
    return Status::invalid("--keys " + inv.keys_dir.string() + " and --data " +
                           inv.data_dir.string() +
                           " overlap; keep the keys folder outside the data folder");
  }
  return Status::ok();
}

Result<std::vector<NoteVerifierKey>> pinned_keys(const Invocation& inv,
                                                 const fs::path& also_refuse) {
  fs::path file = inv.has("pubkey") ? fs::path(inv.get("pubkey"))
                                    : inv.keys_dir / std::string(KeyStore::kPublicKeyFile);
  if (path_is_within(file, inv.data_dir)) {
    return Status::invalid("public key " + file.string() +
                           " lies inside the data folder; pin a key kept elsewhere");
  }
  if (path_is_within(file, also_refuse)) {
    return Status::invalid("public key " + file.string() + " lies inside " + also_refuse.string() +
                           ", the thing it would verify; pin a key kept elsewhere");
  }
  auto k = KeyStore::load_public(file);
  if (!k.ok()) return k.status().with_context("pinned public key " + file.string());
  return std::vector<NoteVerifierKey>{*k};
}

Result<std::unique_ptr<EventLog>> open_reader(const Invocation& inv) {
  auto dd = DataDir::open_reader(inv.data_dir);
  if (!dd.ok()) return dd.status();
  EventLog::Options o;
  o.read_only = true;
  return EventLog::open(dd->log_dir(), o);
}

Result<Writer> open_writer(const Invocation& inv) {
  AURA_RETURN_IF_ERROR(check_folders(inv));
  auto keys = KeyStore::open(inv.keys_dir);
  if (!keys.ok()) {
    return keys.status().with_context("keys folder " + inv.keys_dir.string() +
                                      " (create it with 'aura keys init')");
  }
  auto dd = DataDir::open_writer(inv.data_dir);
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

Result<fs::path> make_bench_root(const Invocation& inv, std::string mkdtemp_template) {
  if (!inv.has("keep")) {
    if (!mkdtemp(mkdtemp_template.data())) return Status::io("mkdtemp " + mkdtemp_template);
    return fs::path(mkdtemp_template);
  }
  fs::path root = inv.get("keep");
  std::error_code ec;
  if (fs::exists(root / "data", ec) || fs::exists(root / "keys", ec)) {
    return Status::failed_precondition("--keep " + root.string() +
                                       ": data or keys already exist there");
  }
  fs::create_directories(root, ec);
  if (ec) return Status::io("--keep " + root.string() + ": " + ec.message());
  return root;
}

Result<TrustStore> publisher_trust(const Invocation& inv) {
  const fs::path dir = inv.keys_dir / std::string(kPublishersDir);
  auto trust = TrustStore::load(dir);
  if (!trust.ok()) {
    return trust.status().with_context("publisher trust store " + dir.string() +
                                       " (create it with 'aura setup' or 'aura keys "
                                       "init-publisher')");
  }
  return trust;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

}  // namespace aura::cli
