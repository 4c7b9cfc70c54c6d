// What several `aura` commands share: opening the data folder as the writer or as a reader,
// the pinned public key, and reading small input files with a size bound.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/cli.h"
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
inline constexpr std::string_view kOperatorActor = "operator";

// Reads a whole regular file of at most `limit` bytes.
Result<std::string> read_small_file(const std::filesystem::path& p,
                                    size_t limit = kMaxInputFileBytes);

// Keys never live inside the data folder, nor the data inside the keys folder.
Status check_folders(const Invocation& inv);

// The pinned public key: --pubkey FILE, else the keys folder's lab.pub; never a key
// found in the data folder, nor in `also_refuse` (e.g. the snapshot being restored).
Result<std::vector<NoteVerifierKey>> pinned_keys(const Invocation& inv,
                                                 const std::filesystem::path& also_refuse = {});

// The publisher trust store, KEYS/publishers; the error says how to create it.
Result<TrustStore> publisher_trust(const Invocation& inv);

// Opens the log in --data read-only (works while another process holds the writer lock).
Result<std::unique_ptr<EventLog>> open_reader(const Invocation& inv);

// The data folder opened for writing: the lock, the lab key, the blob store and the log
// (which signs checkpoints with the lab key and refuses events whose blobs are missing).
struct Writer {
  DataDir dir;
  std::unique_ptr<KeyStore> keys;
  std::unique_ptr<BlobStore> blobs;
  std::unique_ptr<EventLog> log;  // declared last: destroyed first
};
Result<Writer> open_writer(const Invocation& inv);

// The q-quantile (0..1) of `v` by nearest rank; 0 for an empty vector.
double percentile(std::vector<double> v, double q);

// The folder a benchmark works in: --keep DIR (created if needed; refused if it already holds
// data or keys), else a fresh mkdtemp folder from `mkdtemp_template` ("/tmp/x-XXXXXX").
Result<std::filesystem::path> make_bench_root(const Invocation& inv, std::string mkdtemp_template);

}  // namespace aura::cli
