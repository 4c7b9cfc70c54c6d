// Changes a RocksDB database folder behind the engine's back, the way someone with disk access
// could: one flipped bit of one stored byte.
//  - In a write-ahead log (the numbered *.log files). Its records carry a CRC-32C
//    (db/log_format.h: crc32 | u16 length | u8 type | [u32 log number] | data, in 32 KiB
//    blocks); the edit leaves it stale, as a disk fault would, or recomputes it, as a forger
//    would, so that RocksDB accepts the changed record.
//  - In a stored value, written back through RocksDB itself (as its `ldb` tool would), so
//    every RocksDB checksum is right and only the engine's own hashes can tell.
#pragma once

#include <filesystem>
#include <string_view>

namespace aura::testing {

enum class WalCrc { kLeaveStale, kRecompute };

// Flips the lowest bit of the byte at `needle[offset]`, where `needle` occurs exactly once
// in all the WAL files of `db_dir` together (REQUIREd). Returns the file edited.
std::filesystem::path flip_wal_byte(const std::filesystem::path& db_dir, std::string_view needle,
                                    size_t offset, WalCrc crc);

// Flips the lowest bit of the byte at `needle[offset]` in the one value, in any column family
// of the database at `db_dir`, that holds `needle` (REQUIREd), and writes it back (synced).
// REQUIRES: no process has the database open.
void flip_stored_value_byte(const std::filesystem::path& db_dir, std::string_view needle,
                            size_t offset);

// CRC-32C (Castagnoli) of `bytes`, and RocksDB's masked form of a CRC as stored.
uint32_t crc32c(std::string_view bytes);
uint32_t rocksdb_mask_crc(uint32_t crc);

}  // namespace aura::testing
