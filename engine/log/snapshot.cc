#include "engine/log/snapshot.h"

#include <fcntl.h>
#include <rocksdb/utilities/checkpoint.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "engine/blob/evidence_ref.h"
#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/sign/dsse.h"

namespace aura {
namespace fs = std::filesystem;

namespace {

constexpr size_t kMaxManifestBytes = 16 << 20;
constexpr size_t kMaxFiles = 1 << 20;
constexpr std::string_view kPublicKeyFile = "lab.pub";

bool empty_or_absent(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return true;
  return fs::is_directory(dir, ec) && fs::is_empty(dir, ec);
}

Result<SnapshotFile> hash_file(const fs::path& root, const fs::path& file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return Status::io("open " + file.string() + ": " + std::strerror(errno));
  Sha256 h;
  std::string buf(1 << 20, '\0');
  uint64_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      ::close(fd);
      return Status::io("read " + file.string() + ": " + std::strerror(errno));
    }
    if (n == 0) break;
    h.update(std::string_view(buf.data(), size_t(n)));
    total += uint64_t(n);
  }
  ::close(fd);
  return SnapshotFile{fs::relative(file, root).generic_string(), h.finish(), total};
}

// Every regular file under `root` except the manifest and the public key, sorted.
Result<std::vector<SnapshotFile>> hash_tree(const fs::path& root) {
  std::vector<SnapshotFile> files;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    const auto& e = *it;
    if (e.is_symlink()) return Status::corruption("snapshot: symlink " + e.path().string());
    if (e.is_directory()) continue;
    if (!e.is_regular_file())
      return Status::corruption("snapshot: special file " + e.path().string());
    auto rel = fs::relative(e.path(), root).generic_string();
    if (rel == kSnapshotManifestFile || rel == kPublicKeyFile) continue;
    if (files.size() >= kMaxFiles) return Status::invalid("snapshot: too many files");
    auto f = hash_file(root, e.path());
    if (!f.ok()) return f.status();
    files.push_back(std::move(f).value());
  }
  if (ec) return Status::io("walk " + root.string() + ": " + ec.message());
  std::sort(files.begin(), files.end(), [](auto& a, auto& b) { return a.path < b.path; });
  return files;
}

// A relative path from a manifest: no absolute paths, no "..", no empty parts.
bool safe_relative(std::string_view p) {
  if (p.empty() || p.front() == '/' || p.size() > 4096) return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string_view::npos) end = p.size();
    std::string_view part = p.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    start = end + 1;
  }
  return p.starts_with("log/") || p.starts_with("blobs/");
}

Status copy_file_durably(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  fs::create_directories(to.parent_path(), ec);
  if (ec) return Status::io("create " + to.parent_path().string() + ": " + ec.message());
  if (!fs::copy_file(from, to, fs::copy_options::none, ec) || ec) {
    return Status::io("copy " + from.string() + " -> " + to.string() + ": " + ec.message());
  }
  int fd = ::open(to.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    if (fd >= 0) ::close(fd);
    return Status::io("fsync " + to.string());
  }
  ::close(fd);
  return Status::ok();
}

}  // namespace

std::string snapshot_manifest_json(const SnapshotManifest& m) {
  JsonArray files;
  for (const auto& f : m.files) {
    files.raw(JsonWriter()
                  .str("path", f.path)
                  .str("sha256", to_hex(f.sha256))
                  .num("bytes", f.bytes)
                  .done());
  }
  return JsonWriter()
      .num("version", 1)
      .str("origin", m.origin)
      .num("head_seq", m.head_seq)
      .str("head_hash", to_hex(m.head_hash))
      .str("merkle_root", to_hex(m.merkle_root))
      .num("created_us", m.created_us)
      .raw("files", files.done())
      .done();
}

Result<SnapshotManifest> parse_snapshot_manifest(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(json.data(), json.size()).get(o))
    return Status::invalid("manifest: not a JSON object");
  SnapshotManifest m;
  uint64_t version = 0;
  std::string_view origin, head_hash, root;
  simdjson::dom::array files;
  if (o["version"].get(version) || version != 1) return Status::invalid("manifest.version: not 1");
  if (o["origin"].get(origin)) return Status::invalid("manifest.origin: missing");
  if (o["head_seq"].get(m.head_seq)) return Status::invalid("manifest.head_seq: missing");
  if (o["head_hash"].get(head_hash)) return Status::invalid("manifest.head_hash: missing");
  if (o["merkle_root"].get(root)) return Status::invalid("manifest.merkle_root: missing");
  if (o["created_us"].get(m.created_us)) return Status::invalid("manifest.created_us: missing");
  if (o["files"].get(files)) return Status::invalid("manifest.files: missing");
  m.origin = std::string(origin);
  auto hh = digest_from_hex(head_hash);
  auto rr = digest_from_hex(root);
  if (!hh || !rr) return Status::invalid("manifest: bad head_hash or merkle_root");
  m.head_hash = *hh;
  m.merkle_root = *rr;
  size_t i = 0;
  for (auto f : files) {
    std::string where = "manifest.files[" + std::to_string(i++) + "]";
    std::string_view path, sha;
    uint64_t bytes = 0;
    if (f["path"].get(path) || f["sha256"].get(sha) || f["bytes"].get(bytes)) {
      return Status::invalid(where + ": needs path, sha256 and bytes");
    }
    auto d = digest_from_hex(sha);
    if (!d) return Status::invalid(where + ".sha256: not 64 hex digits");
    if (!safe_relative(path))
      return Status::invalid(where + ".path: unsafe path '" + std::string(path) + "'");
    if (!m.files.empty() && m.files.back().path >= path) {
      return Status::invalid(where + ".path: not sorted or duplicated");
    }
    m.files.push_back({std::string(path), *d, bytes});
  }
  return m;
}

Result<SnapshotManifest> make_snapshot(EventLog& log, const BlobStore& blobs,
                                       const fs::path& out_dir, const NoteSigner& signer) {
  if (!empty_or_absent(out_dir)) {
    return Status::failed_precondition("snapshot: " + out_dir.string() + " is not empty");
  }
  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Status::io("snapshot: create " + out_dir.string() + ": " + ec.message());

  // 1. A consistent copy of the database (hard links where possible).
  rocksdb::Checkpoint* raw_cp = nullptr;
  auto rs = rocksdb::Checkpoint::Create(log.db(), &raw_cp);
  if (!rs.ok()) return Status::io("snapshot: " + rs.ToString());
  std::unique_ptr<rocksdb::Checkpoint> cp(raw_cp);
  rs = cp->CreateCheckpoint((out_dir / "log").string());
  if (!rs.ok()) return Status::io("snapshot: checkpoint: " + rs.ToString());

  SnapshotManifest m;
  {
    // 2. The blobs its events reference, read back (and re-hashed) from the store.
    EventLog::Options ro;
    ro.read_only = true;
    auto copy = EventLog::open(out_dir / "log", ro);
    if (!copy.ok()) return copy.status().with_context("snapshot: reopen copy");
    auto out_blobs = BlobStore::open(out_dir / "blobs", blobs.max_blob_bytes());
    if (!out_blobs.ok()) return out_blobs.status().with_context("snapshot");
    const LogHead head = (*copy)->head();
    std::set<Digest> seen;
    Status inner;
    Status s = (*copy)->read_range(1, head.seq, [&](const EventView& ev) {
      auto refs = extract_refs(ev.payload);
      if (!refs.ok()) {
        inner = refs.status().with_context("seq=" + std::to_string(ev.seq));
        return false;
      }
      for (const auto& r : *refs) {
        if (!seen.insert(r.sha256).second) continue;
        auto bytes = blobs.get(r.sha256);
        if (!bytes.ok()) {
          inner = bytes.status().with_context("seq=" + std::to_string(ev.seq) + " blob " + r.id);
          return false;
        }
        auto put = out_blobs->put(as_bytes(*bytes));
        if (!put.ok()) {
          inner = put.status();
          return false;
        }
      }
      return true;
    });
    AURA_RETURN_IF_ERROR(s.with_context("snapshot"));
    AURA_RETURN_IF_ERROR(inner.with_context("snapshot"));
    auto root = (*copy)->root_at(head.seq);
    if (!root.ok()) return root.status().with_context("snapshot");
    m.origin = (*copy)->origin();
    m.head_seq = head.seq;
    m.head_hash = head.hash;
    m.merkle_root = *root;
  }
  fs::remove_all(out_dir / "blobs" / "tmp", ec);

  // 3. The signed manifest over every file, and the public key to read it with.
  auto files = hash_tree(out_dir);
  if (!files.ok()) return files.status();
  m.files = std::move(files).value();
  m.created_us = std::chrono::duration_cast<std::chrono::microseconds>(
                     std::chrono::system_clock::now().time_since_epoch())
                     .count();
  std::string envelope = dsse_sign(kSnapshotPayloadType, snapshot_manifest_json(m), signer);
  AURA_RETURN_IF_ERROR(
      file_io::create_file_durably(out_dir, out_dir / kSnapshotManifestFile, envelope, 0644));
  AURA_RETURN_IF_ERROR(file_io::create_file_durably(
      out_dir, out_dir / kPublicKeyFile, format_verifier_key(signer.verifier()) + "\n", 0644));
  return m;
}

Result<SnapshotManifest> check_snapshot(const fs::path& dir,
                                        std::span<const NoteVerifierKey> keys) {
  const fs::path mpath = dir / kSnapshotManifestFile;
  std::error_code ec;
  auto size = fs::file_size(mpath, ec);
  if (ec) return Status::not_found("snapshot: no " + mpath.string());
  if (size > kMaxManifestBytes) return Status::invalid("snapshot: manifest too large");
  std::string envelope(size, '\0');
  int fd = ::open(mpath.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0 || ::read(fd, envelope.data(), size) != ssize_t(size)) {
    if (fd >= 0) ::close(fd);
    return Status::io("snapshot: read " + mpath.string());
  }
  ::close(fd);
  auto payload = dsse_open(envelope, kSnapshotPayloadType, keys);
  if (!payload.ok()) return payload.status().with_context("snapshot manifest");
  auto m = parse_snapshot_manifest(*payload);
  if (!m.ok()) return m.status();
  auto files = hash_tree(dir);
  if (!files.ok()) return files.status();
  size_t i = 0, j = 0;
  while (i < m->files.size() || j < files->size()) {
    if (j == files->size() || (i < m->files.size() && m->files[i].path < (*files)[j].path)) {
      return Status::corruption("snapshot: " + m->files[i].path + " is missing");
    }
    if (i == m->files.size() || (*files)[j].path < m->files[i].path) {
      return Status::corruption("snapshot: " + (*files)[j].path + " is not in the manifest");
    }
    if (m->files[i].sha256 != (*files)[j].sha256 || m->files[i].bytes != (*files)[j].bytes) {
      return Status::corruption("snapshot: " + m->files[i].path + " differs from the manifest");
    }
    ++i, ++j;
  }
  return m;
}

Result<SnapshotManifest> restore_snapshot(const fs::path& snapshot_dir, const fs::path& data_dir,
                                          std::span<const NoteVerifierKey> keys) {
  if (!empty_or_absent(data_dir)) {
    return Status::failed_precondition("restore: " + data_dir.string() +
                                       " is not empty; restore only into an empty folder");
  }
  auto m = check_snapshot(snapshot_dir, keys);
  if (!m.ok()) return m.status().with_context("restore");
  std::error_code ec;
  fs::create_directories(data_dir, ec);
  if (ec) return Status::io("restore: create " + data_dir.string() + ": " + ec.message());
  for (const auto& f : m->files) {
    AURA_RETURN_IF_ERROR(
        copy_file_durably(snapshot_dir / f.path, data_dir / f.path).with_context("restore"));
  }
  for (const char* sub : {"log", "blobs"}) {
    if (fs::exists(data_dir / sub)) AURA_RETURN_IF_ERROR(file_io::fsync_dir(data_dir / sub));
  }
  AURA_RETURN_IF_ERROR(file_io::fsync_dir(data_dir));
  EventLog::Options ro;
  ro.read_only = true;
  auto log = EventLog::open(data_dir / "log", ro);
  if (!log.ok()) return log.status().with_context("restore: reopen");
  const LogHead head = (*log)->head();
  auto root = (*log)->root_at(head.seq);
  if (head.seq != m->head_seq || head.hash != m->head_hash || !root.ok() ||
      *root != m->merkle_root) {
    return Status::corruption("restore: restored log's head or root differs from the manifest");
  }
  return m;
}

}  // namespace aura
