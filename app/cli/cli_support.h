// What several `aura` commands share: opening the data folder as the writer or as a reader,
// the pinned public key, and reading small input files with a size bound.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/cli.h"
#include "app/lab/folders.h"
#include "app/lab/scenario_registry.h"
#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/keys/key_store.h"
#include "engine/log/data_dir.h"
#include "engine/log/event_log.h"
#include "engine/package/trust_store.h"
#include "engine/sign/signed_note.h"

namespace aura::cli {

inline constexpr size_t kMaxInputFileBytes = 64 << 20;

// The actor of what the operator does at the command line (`log append`, `scenario sign`).
using app::kOperatorActor;

// Reads a whole regular file of at most `limit` bytes.
Result<std::string> read_small_file(const std::filesystem::path& p,
                                    size_t limit = kMaxInputFileBytes);

// The lab folders of --data and --keys.
inline app::LabFolders folders_of(const Invocation& inv) { return {inv.data_dir, inv.keys_dir}; }

// Keys never live inside the data folder, nor the data inside the keys folder.
inline Status check_folders(const Invocation& inv) { return app::check_folders(folders_of(inv)); }

// The pinned public key: --pubkey FILE, else the keys folder's lab.pub; never a key
// found in the data folder, nor in `also_refuse` (e.g. the snapshot being restored).
Result<std::vector<NoteVerifierKey>> pinned_keys(const Invocation& inv,
                                                 const std::filesystem::path& also_refuse = {});

// The publisher trust store, KEYS/publishers; the error says how to create it.
inline Result<TrustStore> publisher_trust(const Invocation& inv) {
  return app::publisher_trust(inv.keys_dir);
}

// Opens the log in --data read-only (works while another process holds the writer lock).
inline Result<std::unique_ptr<EventLog>> open_reader(const Invocation& inv) {
  return app::open_reader(inv.data_dir);
}

// The data folder of --data opened for writing (app/lab/folders.h).
using Writer = app::Writer;
inline Result<Writer> open_writer(const Invocation& inv) {
  return app::open_writer(folders_of(inv));
}

// The q-quantile (0..1) of `v` by nearest rank; 0 for an empty vector.
double percentile(std::vector<double> v, double q);

// The folder a benchmark works in: --keep DIR (created if needed; refused if it already holds
// data or keys), else a fresh mkdtemp folder from `mkdtemp_template` ("/tmp/x-XXXXXX").
Result<std::filesystem::path> make_bench_root(const Invocation& inv, std::string mkdtemp_template);

}  // namespace aura::cli
