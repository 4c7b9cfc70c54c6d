#include "engine/package/package.h"

#include <simdjson.h>

#include <algorithm>
#include <system_error>

#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/package/package_format.h"
#include "engine/sign/dsse.h"

namespace aura {
namespace fs = std::filesystem;
namespace pf = package_format;
namespace {

bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool is_alnum(char c) { return is_lower_alnum(c) || (c >= 'A' && c <= 'Z'); }
bool is_lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool is_safe_component(std::string_view c) {
  if (c.empty() || c.size() > pf::kMaxComponentBytes || c == "." || c == "..") return false;
  return std::all_of(c.begin(), c.end(), [](char ch) {
    return is_alnum(ch) || ch == '.' || ch == '_' || ch == '-' || ch == '+' || ch == '@' ||
           ch == '=' || ch == ',';
  });
}

// A value quoted for an error message: JSON-escaped and cut to a readable length.
std::string shown(std::string_view s) {
  constexpr size_t kMaxShown = 80;
  std::string out;
  json_append_string(out, s.substr(0, kMaxShown));
  if (s.size() > kMaxShown) out.insert(out.size() - 1, "...");
  return out;
}

bool is_top_level_reserved(std::string_view rel) {
  return rel == pf::kSumsFile || rel == pf::kSignatureFile;
}

// Left behind by a sign_package() that was interrupted between write and rename.
bool is_leftover_temp(std::string_view rel) {
  return rel.starts_with("." + std::string(pf::kSumsFile) + ".tmp.") ||
         rel.starts_with("." + std::string(pf::kSignatureFile) + ".tmp.");
}

struct TreeFile {
  std::string path;
  uint64_t bytes = 0;
};

// Lists the regular files under `root` (sorted by path), leaving out the top-level
// SHA256SUMS and package.sig.json. Refuses symlinks, special files, unsafe names and trees
// over the limits, naming the path.
class TreeWalker {
 public:
  explicit TreeWalker(fs::path root) : root_(std::move(root)) {}

  Result<std::vector<TreeFile>> walk() {
    AURA_RETURN_IF_ERROR(walk_dir(root_, ""));
    std::sort(files_.begin(), files_.end(),
              [](const TreeFile& a, const TreeFile& b) { return a.path < b.path; });
    return std::move(files_);
  }

 private:
  Status walk_dir(const fs::path& dir, const std::string& prefix) {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const std::string rel = prefix.empty() ? name : prefix + "/" + name;
      if (prefix.empty() && is_top_level_reserved(rel)) continue;
      const fs::file_status st = it->symlink_status(ec);
      if (ec) return Status::io("stat " + shown(rel) + ": " + ec.message());
      if (fs::is_symlink(st)) {
        return Status::invalid("symlink " + shown(rel) +
                               ": only regular files belong in a package");
      }
      if (!fs::is_directory(st) && !fs::is_regular_file(st)) {
        return Status::invalid("special file " + shown(rel) +
                               ": only regular files belong in a package");
      }
      if (!is_safe_package_path(rel)) {
        return Status::invalid("unsafe path " + shown(rel) +
                               ": each name must be 1..255 of [A-Za-z0-9._+@=,-], not . or .., "
                               "and the path at most 1024 bytes");
      }
      if (fs::is_directory(st)) {
        if (++dirs_ > pf::kMaxFiles) {
          return Status::invalid("more than " + std::to_string(pf::kMaxFiles) + " folders");
        }
        AURA_RETURN_IF_ERROR(walk_dir(it->path(), rel));
        continue;
      }
      if (prefix.empty() && is_leftover_temp(rel)) {
        return Status::invalid("leftover temporary file " + shown(rel) +
                               " from an interrupted sign; remove it");
      }
      const uint64_t bytes = it->file_size(ec);
      if (ec) return Status::io("stat " + shown(rel) + ": " + ec.message());
      total_bytes_ += bytes;
      if (total_bytes_ > pf::kMaxTotalBytes) {
        return Status::invalid("files total more than " + std::to_string(pf::kMaxTotalBytes) +
                               " bytes (the limit)");
      }
      files_.push_back({rel, bytes});
      if (files_.size() > pf::kMaxFiles) {
        return Status::invalid("more than " + std::to_string(pf::kMaxFiles) + " files (the limit)");
      }
    }
    if (ec)
      return Status::io("list " + (prefix.empty() ? std::string(".") : shown(prefix)) + ": " +
                        ec.message());
    return Status::ok();
  }

  fs::path root_;
  std::vector<TreeFile> files_;
  uint64_t total_bytes_ = 0;
  size_t dirs_ = 0;
};

Status check_is_dir(const fs::path& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (ec || !fs::exists(st)) return Status::not_found("not found");
  if (!fs::is_directory(st)) return Status::invalid("not a directory");
  return Status::ok();
}

// The signed payload's members.
struct Payload {
  std::string id;
  std::string version;
  Digest manifest_sha256{};
  Digest sums_sha256{};
};

Result<Payload> parse_payload(std::string_view json) {
  const std::string where = std::string(pf::kSignatureFile) + ": signed payload";
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (auto err = parser.parse(json.data(), json.size()).get(o); err) {
    return Status::invalid(where + " is not a JSON object (" + simdjson::error_message(err) + ")");
  }
  Payload p;
  bool seen[5] = {};
  static constexpr std::string_view kMembers[5] = {"version", "id", "package_version",
                                                   "manifest_sha256", "sums_sha256"};
  for (auto field : o) {
    const auto at = std::find(std::begin(kMembers), std::end(kMembers), field.key);
    if (at == std::end(kMembers)) {
      return Status::invalid(where + " has unknown member " + shown(field.key));
    }
    const size_t i = static_cast<size_t>(at - std::begin(kMembers));
    if (seen[i]) return Status::invalid(where + " has duplicate member " + shown(field.key));
    seen[i] = true;
    if (i == 0) {
      uint64_t v = 0;
      if (field.value.get(v) || v != pf::kPayloadVersion) {
        return Status::invalid(where + ": version is not " + std::to_string(pf::kPayloadVersion));
      }
      continue;
    }
    std::string_view s;
    if (field.value.get(s)) {
      return Status::invalid(where + ": " + std::string(field.key) + " is not a string");
    }
    if (i == 1) {
      if (!is_valid_package_id(s)) return Status::invalid(where + ": bad id " + shown(s));
      p.id = std::string(s);
    } else if (i == 2) {
      if (!is_valid_package_version(s)) {
        return Status::invalid(where + ": bad package_version " + shown(s));
      }
      p.version = std::string(s);
    } else {
      auto d = digest_from_hex(s);
      if (!d || !is_lower_hex(s)) {
        return Status::invalid(where + ": " + std::string(field.key) +
                               " is not 64 lowercase hex digits");
      }
      (i == 3 ? p.manifest_sha256 : p.sums_sha256) = *d;
    }
  }
  for (size_t i = 0; i < 5; ++i) {
    if (!seen[i]) return Status::invalid(where + " has no " + std::string(kMembers[i]));
  }
  return p;
}

// Names the key ids an envelope claims, for the unknown-key message. Reads unverified
// bytes, so the result is only ever shown, never trusted.
std::string claimed_key_ids(std::string_view envelope) {
  simdjson::dom::parser parser;
  simdjson::dom::array sigs;
  if (parser.parse(envelope.data(), envelope.size())["signatures"].get(sigs)) return "";
  std::string out;
  size_t n = 0;
  for (auto sig : sigs) {
    std::string_view keyid;
    if (sig["keyid"].get(keyid)) continue;
    if (n++ == 4) {
      out += ", ...";
      break;
    }
    out += (out.empty() ? "" : ", ") + shown(keyid);
  }
  return out;
}

// Opens the envelope with the trust store and names the key that verified it.
Result<std::pair<std::string, NoteVerifierKey>> open_signature(std::string_view envelope,
                                                               const TrustStore& trust) {
  const std::string sig_file(pf::kSignatureFile);
  auto payload = dsse_open(envelope, pf::kPayloadType, trust.keys());
  if (!payload.ok()) {
    const std::string m = payload.status().message();
    if (m.find("no signature by a known key") != std::string::npos) {
      const std::string ids = claimed_key_ids(envelope);
      return Status::corruption(sig_file + ": unknown key: signed by " +
                                (ids.empty() ? "no named key" : ids) +
                                ", which is not in the trust store" +
                                (trust.dir().empty() ? std::string() : " " + trust.dir().string()) +
                                (trust.empty() ? " (it holds no keys)" : ""));
    }
    if (m.find("invalid signature") != std::string::npos) {
      return Status::corruption(sig_file + ": bad signature (" + m + ")");
    }
    if (m.find("payloadType is") != std::string::npos) {
      return Status::invalid(sig_file + ": wrong payload type (" + m + ")");
    }
    return Status(payload.status().code(), sig_file + ": " + m);
  }
  // Which trusted key verified it: the first that does alone.
  for (const NoteVerifierKey& k : trust.keys()) {
    if (dsse_open(envelope, pf::kPayloadType, std::span(&k, 1)).ok()) {
      return std::pair{std::move(*payload), k};
    }
  }
  return Status::corruption(sig_file + ": no single trusted key verifies the signature");
}

// Both lists sorted by path: the first path only one of them holds names a missing or an
// extra file.
Status check_listed_paths(const std::vector<PackageFile>& listed,
                          const std::vector<TreeFile>& tree) {
  size_t i = 0, j = 0;
  while (i < listed.size() || j < tree.size()) {
    if (j == tree.size() || (i < listed.size() && listed[i].path < tree[j].path)) {
      return Status::corruption("missing file " + shown(listed[i].path) + " (listed in " +
                                std::string(pf::kSumsFile) + ")");
    }
    if (i == listed.size() || tree[j].path < listed[i].path) {
      return Status::corruption("extra file " + shown(tree[j].path) + " (not in " +
                                std::string(pf::kSumsFile) + ")");
    }
    ++i;
    ++j;
  }
  return Status::ok();
}

Status changed_file(const std::string& shown_name, const Digest& actual, const Digest& listed) {
  return Status::corruption("changed file " + shown_name + ": its SHA-256 is " + to_hex(actual) +
                            ", " + std::string(pf::kSumsFile) + " says " + to_hex(listed));
}

// Parses SHA256SUMS, checks it against the signed payload and the tree on disk, and hashes
// every file. Returns the files and the manifest's bytes.
struct CheckedTree {
  std::vector<PackageFile> files;
  std::string manifest_bytes;
};

Result<CheckedTree> check_tree(const fs::path& dir, std::string_view sums_bytes,
                               const Payload& payload) {
  auto listed = parse_sha256sums(sums_bytes);
  if (!listed.ok()) return listed.status();
  const auto manifest_entry =
      std::find_if(listed->begin(), listed->end(),
                   [](const PackageFile& f) { return f.path == pf::kManifestFile; });
  if (manifest_entry == listed->end()) {
    return Status::corruption(std::string(pf::kSumsFile) + " does not list manifest.json");
  }
  if (manifest_entry->sha256 != payload.manifest_sha256) {
    return Status::corruption(std::string(pf::kSumsFile) +
                              ": the manifest.json digest differs from the signed manifest_sha256");
  }

  auto tree = TreeWalker(dir).walk();
  if (!tree.ok()) return tree.status();
  AURA_RETURN_IF_ERROR(check_listed_paths(*listed, *tree));

  CheckedTree out;
  uint64_t budget = pf::kMaxTotalBytes;
  for (PackageFile& f : *listed) {
    const fs::path p = dir / f.path;
    const std::string name = shown(f.path);
    file_io::FileDigest d;
    if (f.path == pf::kManifestFile) {
      auto bytes = file_io::read_regular_file(p, name, pf::kMaxManifestBytes);
      if (!bytes.ok()) return bytes.status();
      d = {sha256(*bytes), bytes->size()};
      out.manifest_bytes = std::move(*bytes);
    } else {
      auto h = file_io::hash_regular_file(p, name, budget);
      if (!h.ok()) return h.status();
      d = *h;
    }
    if (d.sha256 != f.sha256) return changed_file(name, d.sha256, f.sha256);
    if (d.bytes > budget) {
      return Status::invalid("files total more than " + std::to_string(pf::kMaxTotalBytes) +
                             " bytes (the limit)");
    }
    budget -= d.bytes;
    f.bytes = d.bytes;
  }
  out.files = std::move(*listed);
  return out;
}

// The package layer's fields (with their own messages), then the caller's check (the scenario
// layer's full schema, docs/formats/manifest.md).
Result<ManifestHeader> validate_manifest(std::string_view bytes, const ManifestCheck& check) {
  auto header = parse_manifest_header(bytes);
  if (!header.ok()) return header.status();
  if (check) AURA_RETURN_IF_ERROR(check(bytes));
  return header;
}

Result<LoadedPackage> load_package_unprefixed(const fs::path& dir, const TrustStore& trust,
                                              const ManifestCheck& check_manifest) {
  AURA_RETURN_IF_ERROR(check_is_dir(dir));
  // 1. The signature, before anything else is read.
  auto envelope = file_io::read_regular_file(dir / pf::kSignatureFile, pf::kSignatureFile,
                                             pf::kMaxSignatureBytes);
  if (!envelope.ok()) {
    if (envelope.status().code() == ErrorCode::kNotFound) {
      return Status::not_found(std::string(pf::kSignatureFile) +
                               " is missing: the package is not signed (run 'aura scenario sign')");
    }
    return envelope.status();
  }
  auto opened = open_signature(*envelope, trust);
  if (!opened.ok()) return opened.status();
  auto payload = parse_payload(opened->first);
  if (!payload.ok()) return payload.status();

  // 2. SHA256SUMS must be the bytes the payload names.
  auto sums = file_io::read_regular_file(dir / pf::kSumsFile, pf::kSumsFile, pf::kMaxSumsBytes);
  if (!sums.ok()) return sums.status();
  const Digest sums_digest = sha256(*sums);
  if (sums_digest != payload->sums_sha256) {
    return Status::corruption(std::string(pf::kSumsFile) +
                              " does not match the signature: SHA256SUMS digest mismatch (its "
                              "SHA-256 is " +
                              to_hex(sums_digest) + ", the signed sums_sha256 is " +
                              to_hex(payload->sums_sha256) + ")");
  }

  // 3. The tree must be exactly the listed files with the listed digests.
  auto tree = check_tree(dir, *sums, *payload);
  if (!tree.ok()) return tree.status();

  // 4. Only now parse and validate the manifest: the verified bytes, and nothing else.
  auto header = validate_manifest(tree->manifest_bytes, check_manifest);
  if (!header.ok()) return header.status();
  if (header->id != payload->id) {
    return Status::corruption(std::string(pf::kSignatureFile) + ": the signed payload names id " +
                              shown(payload->id) + " but manifest.json has id " +
                              shown(header->id));
  }
  if (header->version != payload->version) {
    return Status::corruption(
        std::string(pf::kSignatureFile) + ": the signed payload names package_version " +
        shown(payload->version) + " but manifest.json has version " + shown(header->version));
  }

  LoadedPackage p;
  p.id = std::move(header->id);
  p.version = std::move(header->version);
  p.family = std::move(header->family);
  p.title = std::move(header->title);
  p.manifest_bytes = std::move(tree->manifest_bytes);
  p.files = std::move(tree->files);
  p.package_digest = sums_digest;
  p.publisher = opened->second.name;
  p.publisher_key = opened->second;
  return p;
}

// The sums a package came with, when SignOptions::only_if_sums_match asks for them: their
// paths must be exactly the tree's (the digests are compared as the files are hashed).
Result<std::vector<PackageFile>> sums_to_match(const fs::path& dir,
                                               const std::vector<TreeFile>& tree) {
  auto sums = file_io::read_regular_file(dir / pf::kSumsFile, pf::kSumsFile, pf::kMaxSumsBytes);
  if (!sums.ok()) {
    if (sums.status().code() == ErrorCode::kNotFound) {
      return Status::not_found(std::string(pf::kSumsFile) + " is missing: nothing to match");
    }
    return sums.status();
  }
  auto listed = parse_sha256sums(*sums);
  if (!listed.ok()) return listed.status();
  AURA_RETURN_IF_ERROR(check_listed_paths(*listed, tree));
  return listed;
}

Result<SignedPackage> sign_package_unprefixed(const fs::path& dir, const NoteSigner& publisher,
                                              const SignOptions& options) {
  AURA_RETURN_IF_ERROR(check_is_dir(dir));
  auto tree = TreeWalker(dir).walk();
  if (!tree.ok()) return tree.status();
  if (std::none_of(tree->begin(), tree->end(),
                   [](const TreeFile& f) { return f.path == pf::kManifestFile; })) {
    return Status::invalid("manifest.json is missing");
  }
  std::vector<PackageFile> expected;  // sorted as `tree`, when the sums must match
  if (options.only_if_sums_match) {
    auto listed = sums_to_match(dir, *tree);
    if (!listed.ok()) return listed.status();
    expected = std::move(*listed);
  }
  auto manifest =
      file_io::read_regular_file(dir / pf::kManifestFile, pf::kManifestFile, pf::kMaxManifestBytes);
  if (!manifest.ok()) return manifest.status();

  SignedPackage out;
  out.manifest_sha256 = sha256(*manifest);
  uint64_t budget = pf::kMaxTotalBytes;
  for (size_t i = 0; i < tree->size(); ++i) {
    const TreeFile& t = (*tree)[i];
    file_io::FileDigest d;
    if (t.path == pf::kManifestFile) {
      // The bytes validated below, not a second read that could differ.
      d = {out.manifest_sha256, manifest->size()};
    } else {
      auto h = file_io::hash_regular_file(dir / t.path, shown(t.path), budget);
      if (!h.ok()) return h.status();
      d = *h;
    }
    // A file that differs from the sums it must match is named before its contents are judged.
    if (options.only_if_sums_match && d.sha256 != expected[i].sha256) {
      return changed_file(shown(t.path), d.sha256, expected[i].sha256);
    }
    if (d.bytes > budget) {
      return Status::invalid("files total more than " + std::to_string(pf::kMaxTotalBytes) +
                             " bytes (the limit)");
    }
    budget -= d.bytes;
    out.files.push_back({t.path, d.sha256, d.bytes});
  }
  auto header = validate_manifest(*manifest, options.check_manifest);
  if (!header.ok()) return header.status();
  out.id = header->id;
  out.version = header->version;

  const std::string sums = format_sha256sums(out.files);
  out.package_digest = sha256(sums);
  const std::string payload =
      package_payload_json(out.id, out.version, out.manifest_sha256, out.package_digest);
  const std::string envelope = dsse_sign(pf::kPayloadType, payload, publisher);
  out.publisher = publisher.name();

  // SHA256SUMS first: a crash before the signature is renamed leaves a package that fails
  // to load (the old signature names other sums), never one that loads wrongly.
  AURA_RETURN_IF_ERROR(file_io::replace_file_durably(dir, dir / pf::kSumsFile, sums, 0644));
  AURA_RETURN_IF_ERROR(
      file_io::replace_file_durably(dir, dir / pf::kSignatureFile, envelope, 0644));
  return out;
}

}  // namespace

bool is_valid_package_id(std::string_view id) {
  if (id.empty() || id.size() > pf::kMaxIdBytes || !is_lower_alnum(id[0])) return false;
  return std::all_of(id.begin(), id.end(),
                     [](char c) { return is_lower_alnum(c) || c == '.' || c == '_' || c == '-'; });
}

bool is_valid_package_version(std::string_view v) {
  if (v.empty() || v.size() > pf::kMaxVersionBytes) return false;
  return std::all_of(v.begin(), v.end(),
                     [](char c) { return is_alnum(c) || c == '.' || c == '+' || c == '-'; });
}

bool is_safe_package_path(std::string_view path) {
  if (path.empty() || path.size() > pf::kMaxPathBytes) return false;
  size_t start = 0;
  for (;;) {
    const size_t end = path.find('/', start);
    if (!is_safe_component(path.substr(start, end == std::string_view::npos ? end : end - start))) {
      return false;
    }
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

Result<ManifestHeader> parse_manifest_header(std::string_view bytes) {
  const std::string where(pf::kManifestFile);
  if (bytes.size() > pf::kMaxManifestBytes) {
    return Status::invalid(where + " is more than " + std::to_string(pf::kMaxManifestBytes) +
                           " bytes");
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (auto err = parser.parse(bytes.data(), bytes.size()).get(root); err) {
    return Status::invalid(where + ": does not parse as JSON (" + simdjson::error_message(err) +
                           ")");
  }
  simdjson::dom::object o;
  if (root.get(o)) return Status::invalid(where + ": not a JSON object");

  struct Field {
    std::string_view name;
    std::string* out;
    bool (*valid)(std::string_view);
    const char* rule;
    std::string_view value{};
    bool seen = false;
  };
  ManifestHeader h;
  Field fields[] = {
      {"id", &h.id, is_valid_package_id, "it must match [a-z0-9][a-z0-9._-]{0,63}"},
      {"version", &h.version, is_valid_package_version, "it must be 1..32 of [0-9A-Za-z.+-]"},
      {"family", &h.family,
       [](std::string_view s) {
         return !s.empty() && s.size() <= pf::kMaxFamilyBytes &&
                std::none_of(s.begin(), s.end(), [](char c) {
                  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                });
       },
       "it must be 1..128 bytes with no control character"},
      {"title", &h.title,
       [](std::string_view s) {
         return !s.empty() && s.size() <= pf::kMaxTitleBytes &&
                std::none_of(s.begin(), s.end(), [](char c) {
                  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
                });
       },
       "it must be 1..512 bytes with no control character"},
  };
  std::vector<std::string_view> keys;
  for (auto member : o) {
    // Two parsers must never read different manifests: duplicate members are refused.
    if (std::find(keys.begin(), keys.end(), member.key) != keys.end()) {
      return Status::invalid(where + ": duplicate field " + shown(member.key));
    }
    keys.push_back(member.key);
    for (Field& f : fields) {
      if (member.key != f.name) continue;
      if (member.value.get(f.value)) {
        return Status::invalid(where + ": field " + shown(f.name) + " is not a string");
      }
      f.seen = true;
    }
  }
  for (Field& f : fields) {
    if (!f.seen) return Status::invalid(where + ": missing required field " + shown(f.name));
    if (!f.valid(f.value)) {
      return Status::invalid(where + ": field " + shown(f.name) + " is " + shown(f.value) + "; " +
                             f.rule);
    }
    *f.out = std::string(f.value);
  }
  return h;
}

std::string format_sha256sums(const std::vector<PackageFile>& files) {
  std::string out;
  for (const PackageFile& f : files) {
    out += to_hex(f.sha256);
    out += "  ";
    out += f.path;
    out += '\n';
  }
  return out;
}

Result<std::vector<PackageFile>> parse_sha256sums(std::string_view text) {
  const std::string sums(pf::kSumsFile);
  if (text.size() > pf::kMaxSumsBytes) {
    return Status::invalid(sums + " is more than " + std::to_string(pf::kMaxSumsBytes) + " bytes");
  }
  if (!text.empty() && text.back() != '\n') {
    return Status::invalid(sums + ": the last line does not end with a newline");
  }
  std::vector<PackageFile> out;
  size_t line_no = 0;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    const std::string where = sums + " line " + std::to_string(++line_no);
    if (line_no > pf::kMaxFiles) {
      return Status::invalid(sums + " lists more than " + std::to_string(pf::kMaxFiles) +
                             " files (the limit)");
    }
    if (line.size() < pf::kSumsLineOverhead || line.substr(64, 2) != "  " ||
        !is_lower_hex(line.substr(0, 64))) {
      return Status::invalid(where + ": not \"<64 lowercase hex>  <path>\"");
    }
    const std::string_view path = line.substr(66);
    if (!is_safe_package_path(path)) return Status::invalid(where + ": unsafe path " + shown(path));
    if (is_top_level_reserved(path)) {
      return Status::invalid(where + ": lists " + shown(path) + ", which is never covered");
    }
    if (!out.empty() && !(out.back().path < path)) {
      return Status::invalid(where + ": " + shown(path) +
                             " is out of order or repeated (paths must be sorted bytewise)");
    }
    out.push_back({std::string(path), *digest_from_hex(line.substr(0, 64)), 0});
  }
  return out;
}

std::string package_payload_json(std::string_view id, std::string_view version,
                                 const Digest& manifest_sha256, const Digest& sums_sha256) {
  return JsonWriter()
      .num("version", pf::kPayloadVersion)
      .str("id", id)
      .str("package_version", version)
      .str("manifest_sha256", to_hex(manifest_sha256))
      .str("sums_sha256", to_hex(sums_sha256))
      .done();
}

Result<SignedPackage> sign_package(const fs::path& dir, const NoteSigner& publisher,
                                   const SignOptions& options) {
  auto r = sign_package_unprefixed(dir, publisher, options);
  if (!r.ok()) return r.status().with_context("sign package " + dir.string());
  return r;
}

Result<LoadedPackage> load_package(const fs::path& dir, const TrustStore& trust,
                                   const ManifestCheck& check_manifest) {
  auto r = load_package_unprefixed(dir, trust, check_manifest);
  if (!r.ok()) return r.status().with_context("package " + dir.string());
  return r;
}

}  // namespace aura
