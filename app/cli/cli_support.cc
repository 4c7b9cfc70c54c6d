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

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

}  // namespace aura::cli
