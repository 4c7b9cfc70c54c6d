// A lab's two folders and how they are opened: the data folder (event log, blobs, worlds) as
// the one writer or as a reader, and the keys folder (lab key, publisher trust store). Keys
// never live inside the data folder, nor the data inside the keys folder.
#pragma once

#include <filesystem>
#include <memory>

#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/keys/key_store.h"
#include "engine/log/data_dir.h"
#include "engine/log/event_log.h"
#include "engine/package/trust_store.h"

namespace aura::app {

struct LabFolders {
  std::filesystem::path data;
  std::filesystem::path keys;
};

// Refuses folders that overlap (either inside the other).
Status check_folders(const LabFolders& f);

// The publisher trust store, KEYS/publishers; the error says how to create it.
Result<TrustStore> publisher_trust(const std::filesystem::path& keys_dir);

// Opens the log in `data_dir` read-only (works while another process holds the writer lock).
Result<std::unique_ptr<EventLog>> open_reader(const std::filesystem::path& data_dir);

// The data folder opened for writing: the lock, the lab key, the blob store and the log
// (which signs checkpoints with the lab key and refuses events whose blobs are missing).
struct Writer {
  DataDir dir;
  std::unique_ptr<KeyStore> keys;
  std::unique_ptr<BlobStore> blobs;
  std::unique_ptr<EventLog> log;  // declared last: destroyed first
};
Result<Writer> open_writer(const LabFolders& f);

// True when the data folder holds no event log yet: the lab's first use (whatever the keys
// folder holds; set-up keeps existing keys).
bool is_first_use(const LabFolders& f);

}  // namespace aura::app
