#include "workers/filetree/journal.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>

#include "engine/common/file_io.h"
#include "workers/journal/journal_format.h"

namespace aura::workers::filetree {
namespace fs = std::filesystem;
namespace {

using journal::entry_name;

Status restore(WorldFs& world, const journal::Entry& e) {
  if (!e.existed) {
    auto now = world.stat(e.path);
    if (!now.ok()) return now.status();
    if (!now->has_value()) return Status::ok();
    if ((*now)->type != EntryType::kFile) {
      return Status::invalid(e.path + ": was absent, is now a " +
                             std::string(entry_type_name((*now)->type)) + "; not removed");
    }
    return world.remove_file(e.path);
  }
  if (e.type == "file") return world.write_file(e.path, *e.bytes, e.mode);
  if (e.type == "dir") return world.chmod(e.path, e.mode);
  // The filetree driver never records one: an entry it did not write is not restored.
  return Status::corruption(e.path + ": a " + e.type + " entry; the filetree driver restores none");
}

}  // namespace

Result<std::unique_ptr<Journal>> Journal::open(const fs::path& dir) {
  std::error_code ec;
  const auto st = fs::symlink_status(dir, ec);
  if (ec || st.type() != fs::file_type::directory) {
    return Status::not_found("journal folder " + dir.string() + " is missing");
  }
  return std::unique_ptr<Journal>(new Journal(dir));
}

Result<Journal::Listing> Journal::list() const {
  Listing out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with('.')) continue;  // an unfinished temporary file of a write
    const auto parsed = journal::parse_entry_name(name);
    if (!parsed || parsed->first == 0) {
      return Status::corruption("journal " + dir_.string() + ": unexpected file " + name);
    }
    if (out.entries.size() + out.data.size() >= 2 * kMaxJournalEntries) {
      return Status::corruption("journal " + dir_.string() + ": more than " +
                                std::to_string(kMaxJournalEntries) + " entries");
    }
    (parsed->second == journal::kEntryExt ? out.entries : out.data).push_back(parsed->first);
  }
  if (ec) return Status::io("journal " + dir_.string() + ": " + ec.message());
  std::sort(out.entries.begin(), out.entries.end());
  std::sort(out.data.begin(), out.data.end());
  return out;
}

Result<size_t> Journal::size() const {
  auto l = list();
  if (!l.ok()) return l.status();
  return l->entries.size();
}

Status Journal::record(const WorldFs& world, std::string_view path) {
  auto existing = list();
  if (!existing.ok()) return existing.status();
  if (existing->entries.size() >= kMaxJournalEntries) {
    return Status::failed_precondition("the journal holds " + std::to_string(kMaxJournalEntries) +
                                       " entries; undo before changing more");
  }
  // Owners are not recorded: every file of a filetree world is the lab's (uid and gid 0).
  journal::Entry e;
  e.path = std::string(path);
  auto now = world.stat(path);
  if (!now.ok()) return now.status();
  if (!now->has_value()) {
    e.existed = false;
  } else if ((*now)->type == EntryType::kDir) {
    e.existed = true;
    e.type = "dir";
    e.mode = (*now)->mode;
  } else if ((*now)->type == EntryType::kFile) {
    auto data = world.read_file(path, kMaxFileBytes);
    if (!data.ok()) return data.status();
    if (data->truncated) {
      return Status::invalid(std::string(path) + ": larger than " + std::to_string(kMaxFileBytes) +
                             " bytes; the journal cannot keep it, so it is not changed");
    }
    e.existed = true;
    e.mode = data->mode;
    e.bytes = std::move(data->bytes);
  } else {
    return Status::invalid(std::string(path) + ": a " + std::string(entry_type_name((*now)->type)) +
                           "; refused");
  }
  uint64_t last = 0;
  if (!existing->entries.empty()) last = existing->entries.back();
  if (!existing->data.empty()) last = std::max(last, existing->data.back());
  const uint64_t next = last + 1;
  if (next > journal::kMaxEntries) return Status::failed_precondition("the journal is full");
  // The data first, the entry last: the entry is what undo trusts.
  if (e.bytes) {
    AURA_RETURN_IF_ERROR(file_io::create_file_durably(
                             dir_, dir_ / entry_name(next, journal::kDataExt), *e.bytes, 0600)
                             .with_context("journal"));
  }
  return file_io::create_file_durably(dir_, dir_ / entry_name(next, journal::kEntryExt),
                                      journal::encode_entry(e), 0600)
      .with_context("journal");
}

Result<journal::Entry> Journal::load(uint64_t seq) const {
  const std::string name = entry_name(seq, journal::kEntryExt);
  auto text =
      file_io::read_regular_file(dir_ / name, "journal entry " + name, journal::kMaxEntryJsonBytes);
  if (!text.ok()) return text.status();
  auto decoded = journal::decode_entry(*text);
  if (!decoded.ok()) return decoded.status().with_context("journal entry " + name);
  journal::Entry e = std::move(decoded->entry);
  if (decoded->data_bytes) {
    const std::string data_name = entry_name(seq, journal::kDataExt);
    auto data = file_io::read_regular_file(dir_ / data_name, "journal entry " + data_name,
                                           journal::kMaxDataBytes);
    if (!data.ok()) return data.status();
    if (data->size() != *decoded->data_bytes)
      return Status::corruption("journal entry " + data_name + ": holds " +
                                std::to_string(data->size()) + " bytes, its entry says " +
                                std::to_string(*decoded->data_bytes));
    e.bytes = std::move(*data);
  }
  return e;
}

Status Journal::remove(uint64_t seq) {
  // The entry first: a data file without one is an orphan the next undo removes.
  for (std::string_view ext : {journal::kEntryExt, journal::kDataExt}) {
    const fs::path file = dir_ / entry_name(seq, ext);
    if (::unlink(file.c_str()) != 0 && errno != ENOENT) {
      return Status::io("journal entry " + file.string() +
                        ": unlink: " + file_io::errno_text(errno));
    }
  }
  return Status::ok();
}

Result<std::vector<std::string>> Journal::undo(WorldFs& world) {
  auto existing = list();
  if (!existing.ok()) return existing.status();
  std::vector<std::string> restored;
  for (auto it = existing->entries.rbegin(); it != existing->entries.rend(); ++it) {
    auto e = load(*it);
    if (!e.ok()) return e.status();
    AURA_RETURN_IF_ERROR(
        restore(world, *e).with_context("undo " + entry_name(*it, journal::kEntryExt)));
    AURA_RETURN_IF_ERROR(remove(*it));
    restored.push_back(e->path);
  }
  for (uint64_t seq : existing->data) AURA_RETURN_IF_ERROR(remove(seq));  // orphans
  return restored;
}

}  // namespace aura::workers::filetree
