#include "tests/cli/storage_edit.h"

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/cli/cli_util.h"

namespace aura::testing {
namespace fs = std::filesystem;
namespace {

constexpr size_t kBlockBytes = 32768;
constexpr size_t kHeaderBytes = 7;             // crc32, u16 length, u8 type
constexpr size_t kRecyclableHeaderBytes = 11;  // ... and a u32 log number
constexpr uint8_t kRecyclableFullType = 5;
constexpr uint8_t kRecyclableLastType = 8;

uint32_t le32(const std::string& b, size_t at) {
  return uint32_t(uint8_t(b[at])) | uint32_t(uint8_t(b[at + 1])) << 8 |
         uint32_t(uint8_t(b[at + 2])) << 16 | uint32_t(uint8_t(b[at + 3])) << 24;
}

void put_le32(std::string& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + size_t(i)] = char((v >> (8 * i)) & 0xff);
}

// The offset of the record header whose data holds byte `target`, if any.
std::optional<size_t> record_holding(const std::string& wal, size_t target) {
  size_t pos = 0;
  while (pos + kHeaderBytes <= wal.size()) {
    const size_t block_end = (pos / kBlockBytes + 1) * kBlockBytes;
    if (block_end - pos < kHeaderBytes) {  // a block's zero-filled trailer
      pos = block_end;
      continue;
    }
    const size_t length = size_t(uint8_t(wal[pos + 4])) | size_t(uint8_t(wal[pos + 5])) << 8;
    const uint8_t type = uint8_t(wal[pos + 6]);
    const size_t header = type >= kRecyclableFullType && type <= kRecyclableLastType
                              ? kRecyclableHeaderBytes
                              : kHeaderBytes;
    if (target >= pos + header && target < pos + header + length) return pos;
    pos += header + length;
  }
  return std::nullopt;
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c >> 1) ^ ((c & 1) ? 0x82F63B78u : 0u);
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xFFFFFFFFu;
  for (char ch : bytes) c = table[(c ^ uint8_t(ch)) & 0xff] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t rocksdb_mask_crc(uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

fs::path flip_wal_byte(const fs::path& db_dir, std::string_view needle, size_t offset, WalCrc crc) {
  if (crc == WalCrc::kLeaveStale) return flip_byte_in(db_dir, ".log", needle, offset);
  REQUIRE(offset < needle.size());
  const fs::path wal = file_holding(db_dir, ".log", needle);
  std::string bytes = read_file(wal);
  const size_t target = bytes.find(needle) + offset;
  auto record = record_holding(bytes, target);
  REQUIRE_MESSAGE(record.has_value(), "no WAL record holds byte " << target << " of " << wal);
  const size_t length = size_t(uint8_t(bytes[*record + 4])) | size_t(uint8_t(bytes[*record + 5]))
                                                                  << 8;
  const uint8_t type = uint8_t(bytes[*record + 6]);
  const size_t header = type >= kRecyclableFullType && type <= kRecyclableLastType
                            ? kRecyclableHeaderBytes
                            : kHeaderBytes;
  // The CRC covers the type byte, the log number if any, and the data.
  auto covered_crc = [&] {
    return rocksdb_mask_crc(
        crc32c(std::string_view(bytes).substr(*record + 6, header - 6 + length)));
  };
  REQUIRE_MESSAGE(le32(bytes, *record) == covered_crc(),
                  "the WAL record at " << *record << " of " << wal << " was not parsed right");
  bytes[target] = char(bytes[target] ^ 0x01);
  put_le32(bytes, *record, covered_crc());
  write_file(wal, bytes);
  return wal;
}

void flip_stored_value_byte(const fs::path& db_dir, std::string_view needle, size_t offset) {
  REQUIRE(offset < needle.size());
  std::vector<std::string> names;
  rocksdb::Status s =
      rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), db_dir.string(), &names);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& n : names) descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  s = rocksdb::DB::Open(rocksdb::DBOptions(), db_dir.string(), descriptors, &handles, &raw);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  std::unique_ptr<rocksdb::DB> db(raw);

  rocksdb::ColumnFamilyHandle* holder = nullptr;
  std::string key, value;
  int found = 0;
  for (auto* h : handles) {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), h));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (it->value().ToStringView().find(needle) == std::string_view::npos) continue;
      ++found;
      holder = h;
      key = it->key().ToString();
      value = it->value().ToString();
    }
    REQUIRE_MESSAGE(it->status().ok(), it->status().ToString());
  }
  REQUIRE_MESSAGE(found == 1, "'" << needle << "' is in " << found << " stored values");
  const size_t at = value.find(needle) + offset;
  value[at] = char(value[at] ^ 0x01);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  s = db->Put(wo, holder, key, value);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  s = db->Close();
  REQUIRE_MESSAGE(s.ok(), s.ToString());
}

}  // namespace aura::testing
