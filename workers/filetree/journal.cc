#include "workers/filetree/journal.h"

#include <errno.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>

#include "engine/common/file_io.h"

namespace aura::workers::filetree {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic = "aura-filetree-journal 1\n";
constexpr size_t kNameDigits = 8;

enum class State { kAbsent, kFile, kDir };

struct JournalEntry {
  State state = State::kAbsent;
  uint32_t mode = 0;
  std::string path;
  std::string bytes;
};

std::string_view state_name(State s) {
  switch (s) {
    case State::kAbsent:
      return "absent";
    case State::kFile:
      return "file";
    case State::kDir:
      return "dir";
  }
  return "?";
}

// kMagic, then "<state> <mode, 4 octal digits> <path bytes> <content bytes>\n", the path, the
// content.
std::string encode(const JournalEntry& e) {
  char mode[8];
  std::snprintf(mode, sizeof mode, "%04o", e.mode & 07777);
  std::string out(kMagic);
  out += state_name(e.state);
  out += ' ';
  out += mode;
  out += ' ' + std::to_string(e.path.size()) + ' ' + std::to_string(e.bytes.size()) + '\n';
  out += e.path;
  out += e.bytes;
  return out;
}

bool parse_u64(std::string_view text, uint64_t& out, int base = 10) {
  if (text.empty()) return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return ec == std::errc() && end == text.data() + text.size();
}

Result<JournalEntry> decode(std::string_view data, std::string_view name) {
  const auto bad = [&](std::string_view why) {
    return Status::corruption("journal entry " + std::string(name) + ": " + std::string(why));
  };
  if (data.substr(0, kMagic.size()) != kMagic) return bad("bad magic line");
  data.remove_prefix(kMagic.size());
  const size_t nl = data.find('\n');
  if (nl == std::string_view::npos) return bad("no header line");
  std::string_view header = data.substr(0, nl);
  data.remove_prefix(nl + 1);
  std::vector<std::string_view> fields;
  while (!header.empty()) {
    const size_t sp = header.find(' ');
    fields.push_back(header.substr(0, sp));
    header = sp == std::string_view::npos ? std::string_view() : header.substr(sp + 1);
  }
  if (fields.size() != 4) return bad("header has " + std::to_string(fields.size()) + " fields");
  JournalEntry e;
  if (fields[0] == "absent") {
    e.state = State::kAbsent;
  } else if (fields[0] == "file") {
    e.state = State::kFile;
  } else if (fields[0] == "dir") {
    e.state = State::kDir;
  } else {
    return bad("unknown state");
  }
  uint64_t mode = 0, path_bytes = 0, content_bytes = 0;
  if (fields[1].size() != 4 || !parse_u64(fields[1], mode, 8) || mode > 0777) {
    return bad("bad mode");
  }
  if (!parse_u64(fields[2], path_bytes) || !parse_u64(fields[3], content_bytes)) {
    return bad("bad lengths");
  }
  if (path_bytes == 0 || path_bytes > 4096 || content_bytes > kMaxFileBytes ||
      path_bytes + content_bytes != data.size()) {
    return bad("lengths do not match the entry");
  }
  if (e.state != State::kFile && content_bytes != 0) return bad("content on a non-file state");
  e.mode = static_cast<uint32_t>(mode);
  e.path = std::string(data.substr(0, path_bytes));
  e.bytes = std::string(data.substr(path_bytes));
  return e;
}

std::string entry_name(uint64_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08llu", static_cast<unsigned long long>(n));
  return buf;
}

Status restore(WorldFs& world, const JournalEntry& e) {
  switch (e.state) {
    case State::kAbsent: {
      auto now = world.stat(e.path);
      if (!now.ok()) return now.status();
      if (!now->has_value()) return Status::ok();
      if ((*now)->type != EntryType::kFile) {
        return Status::invalid(e.path + ": was absent, is now a " +
                               std::string(entry_type_name((*now)->type)) + "; not removed");
      }
      return world.remove_file(e.path);
    }
    case State::kFile:
      return world.write_file(e.path, e.bytes, e.mode);
    case State::kDir:
      return world.chmod(e.path, e.mode);
  }
  return Status::ok();
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

Result<std::vector<uint64_t>> Journal::entries() const {
  std::vector<uint64_t> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.starts_with('.')) continue;  // an unfinished temporary file of a write
    uint64_t n = 0;
    if (name.size() != kNameDigits || !parse_u64(name, n) || n == 0) {
      return Status::corruption("journal " + dir_.string() + ": unexpected file " + name);
    }
    if (out.size() >= kMaxJournalEntries) {
      return Status::corruption("journal " + dir_.string() + ": more than " +
                                std::to_string(kMaxJournalEntries) + " entries");
    }
    out.push_back(n);
  }
  if (ec) return Status::io("journal " + dir_.string() + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

Result<size_t> Journal::size() const {
  auto e = entries();
  if (!e.ok()) return e.status();
  return e->size();
}

Status Journal::record(const WorldFs& world, std::string_view path) {
  auto existing = entries();
  if (!existing.ok()) return existing.status();
  if (existing->size() >= kMaxJournalEntries) {
    return Status::failed_precondition("the journal holds " + std::to_string(kMaxJournalEntries) +
                                       " entries; undo before changing more");
  }
  JournalEntry e;
  e.path = std::string(path);
  auto now = world.stat(path);
  if (!now.ok()) return now.status();
  if (!now->has_value()) {
    e.state = State::kAbsent;
  } else if ((*now)->type == EntryType::kDir) {
    e.state = State::kDir;
    e.mode = (*now)->mode;
  } else if ((*now)->type == EntryType::kFile) {
    auto data = world.read_file(path, kMaxFileBytes);
    if (!data.ok()) return data.status();
    if (data->truncated) {
      return Status::invalid(std::string(path) + ": larger than " + std::to_string(kMaxFileBytes) +
                             " bytes; the journal cannot keep it, so it is not changed");
    }
    e.state = State::kFile;
    e.mode = data->mode;
    e.bytes = std::move(data->bytes);
  } else {
    return Status::invalid(std::string(path) + ": a " + std::string(entry_type_name((*now)->type)) +
                           "; refused");
  }
  const uint64_t next = existing->empty() ? 1 : existing->back() + 1;
  return file_io::create_file_durably(dir_, dir_ / entry_name(next), encode(e), 0600)
      .with_context("journal");
}

Result<std::vector<std::string>> Journal::undo(WorldFs& world) {
  auto existing = entries();
  if (!existing.ok()) return existing.status();
  std::vector<std::string> restored;
  for (auto it = existing->rbegin(); it != existing->rend(); ++it) {
    const fs::path file = dir_ / entry_name(*it);
    auto bytes =
        file_io::read_regular_file(file, "journal entry " + entry_name(*it), kMaxFileBytes + 8192);
    if (!bytes.ok()) return bytes.status();
    auto e = decode(*bytes, entry_name(*it));
    if (!e.ok()) return e.status();
    AURA_RETURN_IF_ERROR(restore(world, *e).with_context("undo " + entry_name(*it)));
    if (::unlink(file.c_str()) != 0) {
      return Status::io("journal entry " + file.string() +
                        ": unlink: " + file_io::errno_text(errno));
    }
    restored.push_back(e->path);
  }
  return restored;
}

}  // namespace aura::workers::filetree
