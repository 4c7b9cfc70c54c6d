#include "engine/log/log_verifier.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>

#include "engine/blob/evidence_ref.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/log/event_codec.h"
#include "engine/log/event_format.h"

namespace aura {
namespace {

namespace ef = event_format;

// Events are checked in aligned chunks of 2^kChunkLevel, so every perfect Merkle
// node up to that level lies inside one chunk and is recomputed there.
constexpr int kChunkLevel = 16;
constexpr uint64_t kChunk = uint64_t(1) << kChunkLevel;
constexpr size_t kMaxProblems = 100;

uint64_t stream_tag(std::string_view stream) {
  return std::hash<std::string_view>()(stream) | 1;  // 0 means "no entry"
}

class Problems {
 public:
  void add(uint64_t seq, std::string what) {
    std::lock_guard l(mu_);
    list_.push_back({seq, std::move(what)});
  }
  std::vector<VerifyProblem> take() {
    std::lock_guard l(mu_);
    std::stable_sort(list_.begin(), list_.end(),
                     [](const auto& a, const auto& b) { return a.seq < b.seq; });
    if (list_.size() > kMaxProblems) list_.resize(kMaxProblems);
    return std::move(list_);
  }

 private:
  std::mutex mu_;
  std::vector<VerifyProblem> list_;
};

std::string seq_text(uint64_t seq) { return "seq=" + std::to_string(seq); }

// One pass over everything: read ahead, and keep the scan out of the block cache.
rocksdb::ReadOptions scan_options() {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.readahead_size = 2 << 20;
  return ro;
}

// A node mismatch does not say which event under it changed; it is filed under the
// last seq it covers, so a forged event under it is still the first bad seq.
uint64_t last_seq_of(uint8_t level, uint64_t index) { return (index + 1) << level; }

std::string node_name(uint8_t level, uint64_t index) {
  return "tree node (" + std::to_string(level) + "," + std::to_string(index) + ") over seqs " +
         std::to_string((index << level) + 1) + ".." + std::to_string(last_seq_of(level, index));
}

class Verifier {
 public:
  Verifier(const EventLog& log, const VerifyOptions& o) : log_(log), o_(o) {}

  VerifyReport run() {
    auto t0 = std::chrono::steady_clock::now();
    VerifyReport r;
    const LogHead head = log_.head();
    n_ = head.seq;
    r.head_seq = head.seq;
    r.head_hash = head.hash;
    if (!log_.state_problem().empty()) {
      problems_.add(std::min(log_.meta_tree_size(), n_) + 1, log_.state_problem());
    }
    from_ = std::clamp<uint64_t>(o_.from_seq, 1, n_ + 1);
    first_chunk_ = (from_ - 1) / kChunk;
    const uint64_t chunks = (n_ + kChunk - 1) / kChunk;
    event_tags_.assign(n_ + 1, 0);
    index_tags_.assign(n_ + 1, 0);
    chunk_roots_.assign(chunks, merkle::Hash{});
    chunk_valid_.assign(chunks, false);

    std::thread index_thread([&] { scan_stream_index(); });
    unsigned threads = o_.threads ? o_.threads : std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    std::atomic<uint64_t> next{first_chunk_};
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back([&] {
        for (uint64_t c; (c = next.fetch_add(1)) < chunks;) check_chunk(c);
      });
    }
    for (auto& t : pool) t.join();
    index_thread.join();

    compare_stream_index();
    check_upper_tree();
    check_meta_tree();
    check_checkpoints(r);
    if (o_.trusted_checkpoint) check_trusted(r);

    r.events_checked = events_checked_;
    r.bytes_checked = bytes_checked_;
    r.tree_nodes_checked = nodes_checked_;
    r.index_entries_checked = index_entries_;
    r.blobs_checked = blobs_checked_;
    r.problems = problems_.take();
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  // Reads the stored hash of `seq` (for a chunk's first chain link).
  std::optional<Digest> stored_hash(uint64_t seq) {
    if (seq == 0) return Digest{};
    std::string v;
    if (!log_.db()->Get(rocksdb::ReadOptions(), log_.events_cf(), seq_key(seq), &v).ok()) {
      return std::nullopt;
    }
    auto ev = decode_record(v);
    if (!ev.ok()) return std::nullopt;
    return ev->hash;
  }

  void check_chunk(uint64_t c) {
    const uint64_t a = c * kChunk + 1;
    const uint64_t b = std::min(n_, (c + 1) * kChunk);
    std::vector<merkle::Hash> level(b - a + 1);
    std::vector<bool> have(b - a + 1, false);
    std::optional<Digest> prev = stored_hash(a - 1);
    uint64_t prev_ts = 0;
    if (a > 1) {
      std::string v;
      if (log_.db()->Get(rocksdb::ReadOptions(), log_.events_cf(), seq_key(a - 1), &v).ok()) {
        if (auto ev = decode_record(v); ev.ok()) prev_ts = ev->ts_us;
      }
    }
    uint64_t bytes = 0, checked = 0;

    rocksdb::ReadOptions ro = scan_options();
    std::string upper = seq_key(b + 1);
    rocksdb::Slice upper_slice(upper);
    ro.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(log_.db()->NewIterator(ro, log_.events_cf()));
    uint64_t expect = a;
    for (it->Seek(seq_key(a)); it->Valid(); it->Next()) {
      auto k = it->key();
      if (k.size() != 8) {
        problems_.add(expect, seq_text(expect) + ": malformed key");
        break;
      }
      const uint64_t seq = get_u64be(k.data());
      for (; expect < seq; ++expect) {
        problems_.add(expect, seq_text(expect) + ": event missing");
        prev.reset();
      }
      expect = seq + 1;
      std::string_view rec = it->value().ToStringView();
      bytes += rec.size();
      ++checked;
      auto ev = decode_record(rec);
      if (!ev.ok()) {
        problems_.add(seq, seq_text(seq) + ": " + ev.status().message());
        prev.reset();
        continue;
      }
      const Digest computed = compute_record_hash(rec);
      bool good = false;
      if (ev->seq != seq) {
        problems_.add(seq, seq_text(seq) + ": record carries seq " + std::to_string(ev->seq) +
                               " (moved or reordered)");
      } else if (computed != ev->hash) {
        problems_.add(seq, seq_text(seq) + ": stored hash does not match its bytes");
      } else if (prev && *prev != ev->prev_hash) {
        problems_.add(seq, seq_text(seq) + ": prev_hash does not match the hash of seq " +
                               std::to_string(seq - 1));
      } else if (ev->ts_us < prev_ts) {
        problems_.add(seq, seq_text(seq) + ": timestamp goes backwards");
      } else {
        good = true;
      }
      prev = ev->hash;
      prev_ts = ev->ts_us;
      // A bad event is reported once, at its own seq: the Merkle nodes over it are
      // then not compared, so they cannot report an earlier seq for the same damage.
      level[seq - a] = merkle::leaf_hash(ev->hash);
      have[seq - a] = good;
      event_tags_[seq] = stream_tag(ev->stream);
      if (o_.check_blobs) check_refs(seq, ev->payload);
    }
    if (!it->status().ok()) {
      // RocksDB names the damaged block; the events after it in this chunk are unreadable,
      // not missing.
      problems_.add(expect, seq_text(expect) + ": read failed: " + it->status().ToString());
    } else {
      for (; expect <= b; ++expect) problems_.add(expect, seq_text(expect) + ": event missing");
    }

    check_chunk_tree(c, a, level, have);
    events_checked_ += checked;
    bytes_checked_ += bytes;
    if (o_.progress) o_.progress(events_checked_.load(), n_ - from_ + 1);
  }

  // Recomputes every perfect node inside the chunk, in the order the tree column
  // stores them (by completing leaf count, then level), and merge-compares it with
  // the stored nodes: a mismatch, a missing node and an extra node are all named.
  void check_chunk_tree(uint64_t c, uint64_t a, const std::vector<merkle::Hash>& leaves,
                        const std::vector<bool>& have) {
    struct Entry {
      merkle::Hash hash;
      uint8_t level;
      bool ok;  // every event under it checked out
    };
    const uint64_t base = a - 1;  // leaf index of the chunk's first leaf
    const uint64_t m = leaves.size();
    std::string lower, upper;
    put_u64be(lower, base + 1);
    put_u64be(upper, base + m + 1);
    rocksdb::Slice upper_slice(upper);
    rocksdb::ReadOptions ro = scan_options();
    ro.iterate_upper_bound = &upper_slice;
    std::unique_ptr<rocksdb::Iterator> it(log_.db()->NewIterator(ro, log_.tree_cf()));
    it->Seek(lower);
    uint64_t checked = 0;
    bool read_failed = false;  // reported once per chunk: RocksDB names the damaged block

    // Advances past nodes above chunk level (the upper pass checks those).
    auto skip_upper = [&] {
      for (; it->Valid(); it->Next()) {
        uint8_t l;
        uint64_t i;
        if (!EventLog::parse_node_key(it->key().ToStringView(), &l, &i) || l <= kChunkLevel) break;
      }
    };
    auto extra = [&](std::string_view key) {
      uint8_t l;
      uint64_t i;
      if (EventLog::parse_node_key(key, &l, &i)) {
        problems_.add(last_seq_of(l, i), node_name(l, i) + " should not exist");
      } else {
        problems_.add(base + 1, "tree column: malformed key " + to_hex(as_bytes(key)));
      }
    };
    auto compare = [&](uint64_t end, const Entry& e) {
      const std::string want = EventLog::node_key(e.level, (end >> e.level) - 1);
      for (skip_upper(); it->Valid() && it->key().ToStringView() < want; it->Next(), skip_upper()) {
        extra(it->key().ToStringView());
      }
      const uint64_t index = (end >> e.level) - 1;
      if (!it->Valid() && !it->status().ok()) {
        if (!read_failed) {
          read_failed = true;
          problems_.add(last_seq_of(e.level, index),
                        node_name(e.level, index) + ": read failed: " + it->status().ToString());
        }
        return;
      }
      if (!it->Valid() || it->key().ToStringView() != want) {
        problems_.add(last_seq_of(e.level, index), node_name(e.level, index) + " missing");
        return;
      }
      ++checked;
      if (e.ok &&
          (it->value().size() != 32 || std::memcmp(it->value().data(), e.hash.data(), 32) != 0)) {
        problems_.add(last_seq_of(e.level, index),
                      node_name(e.level, index) + " does not match the events it covers");
      }
      it->Next();
    };

    std::vector<Entry> stack;
    for (uint64_t j = 0; j < m; ++j) {
      Entry e{leaves[j], 0, have[j]};
      const uint64_t end = base + j + 1;
      while (!stack.empty() && stack.back().level == e.level) {
        const Entry left = stack.back();
        stack.pop_back();
        e = Entry{merkle::node_hash(left.hash, e.hash), uint8_t(e.level + 1), left.ok && e.ok};
        compare(end, e);
      }
      stack.push_back(e);
    }
    for (skip_upper(); it->Valid(); it->Next(), skip_upper()) extra(it->key().ToStringView());
    if (m == kChunk) {
      chunk_roots_[c] = stack.front().hash;
      chunk_valid_[c] = stack.front().ok;
    }
    nodes_checked_ += checked;
  }

  void check_refs(uint64_t seq, std::string_view payload) {
    auto refs = extract_refs(payload);
    if (!refs.ok()) {
      problems_.add(seq, seq_text(seq) + ": " + refs.status().message());
      return;
    }
    for (const auto& ref : *refs) {
      ++blobs_checked_;
      Status s = o_.blobs != nullptr ? o_.blobs->check(ref.sha256, ref.bytes)
                                     : Status::not_found("no blob store in the data folder");
      if (!s.is_ok()) {
        problems_.add(seq, seq_text(seq) + ": blob " + ref.id + " (" + to_hex(ref.sha256) +
                               "): " + s.message());
      }
    }
  }

  // Rebuilds seq -> stream from the index column (sorted by stream, not seq).
  void scan_stream_index() {
    std::unique_ptr<rocksdb::Iterator> it(log_.db()->NewIterator(scan_options(), log_.stream_cf()));
    uint64_t count = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ++count;
      auto k = it->key().ToStringView();
      if (k.size() < 10 || size_t(uint8_t(k[0])) + 9 != k.size()) {
        problems_.add(n_ + 1, "stream index: malformed key");
        continue;
      }
      const uint64_t seq = get_u64be(k.data() + k.size() - 8);
      const std::string_view stream = k.substr(1, k.size() - 9);
      if (seq == 0 || seq > n_) {
        problems_.add(seq == 0 ? 1 : seq,
                      "stream index: entry for seq " + std::to_string(seq) + " beyond the head");
        continue;
      }
      if (index_tags_[seq] != 0) {
        problems_.add(seq, seq_text(seq) + ": stream index has two entries");
        continue;
      }
      index_tags_[seq] = stream_tag(stream);
    }
    if (!it->status().ok())
      problems_.add(1, "stream index: read failed: " + it->status().ToString());
    index_entries_ = count;
  }

  void compare_stream_index() {
    for (uint64_t seq = from_; seq <= n_; ++seq) {
      if (event_tags_[seq] == 0) continue;  // the event itself is already reported
      if (index_tags_[seq] == 0) {
        problems_.add(seq, seq_text(seq) + ": stream index entry missing");
      } else if (index_tags_[seq] != event_tags_[seq]) {
        problems_.add(seq, seq_text(seq) + ": stream index names another stream");
      }
    }
  }

  // Nodes above chunk level, from the chunk roots (earlier chunks' roots are read
  // from storage when verifying from a later seq).
  void check_upper_tree() {
    const uint64_t full = n_ / kChunk;
    std::vector<merkle::Hash> level(full);
    std::vector<bool> valid(full);
    for (uint64_t c = 0; c < full; ++c) {
      if (c < first_chunk_) {
        auto h = log_.nodes().perfect_node(kChunkLevel, c);
        if (!h.ok()) {
          problems_.add(c * kChunk + 1, h.status().message());
          return;
        }
        level[c] = *h;
        valid[c] = true;
      } else {
        level[c] = chunk_roots_[c];
        valid[c] = chunk_valid_[c];
      }
    }
    for (int l = kChunkLevel + 1; level.size() >= 2; ++l) {
      std::vector<merkle::Hash> up(level.size() / 2);
      std::vector<bool> up_valid(up.size());
      for (size_t i = 0; i < up.size(); ++i) {
        up[i] = merkle::node_hash(level[2 * i], level[2 * i + 1]);
        up_valid[i] = valid[2 * i] && valid[2 * i + 1];
        const uint64_t leaf_seq = last_seq_of(uint8_t(l), i);
        auto stored = log_.nodes().perfect_node(uint8_t(l), i);
        ++nodes_checked_;
        if (!stored.ok()) {
          problems_.add(leaf_seq, stored.status().message());
        } else if (up_valid[i] && *stored != up[i]) {
          problems_.add(leaf_seq,
                        node_name(uint8_t(l), i) + " does not match the events it covers");
        }
      }
      level = std::move(up);
      valid = std::move(up_valid);
    }
    // No stored node may lie beyond the tree (keys are ordered by completing leaf count).
    std::string beyond;
    put_u64be(beyond, n_ + 1);
    std::unique_ptr<rocksdb::Iterator> it(
        log_.db()->NewIterator(rocksdb::ReadOptions(), log_.tree_cf()));
    it->Seek(beyond);
    if (it->Valid()) {
      problems_.add(n_ + 1, "tree column: key " + to_hex(as_bytes(it->key().ToStringView())) +
                                " lies beyond the head");
    }
  }

  // The compact range in meta (what the next append extends) must hold the perfect
  // subtrees that make up the head's tree, as recomputed above.
  void check_meta_tree() {
    if (!log_.state_problem().empty()) return;
    const merkle::CompactRange stored = log_.tree_state();
    uint64_t begin = 0;
    size_t i = 0;
    for (int level = 63; level >= 0; --level) {
      if (!((n_ >> level) & 1)) continue;
      auto node = log_.nodes().perfect_node(uint8_t(level), begin >> level);
      if (!node.ok() || i >= stored.peaks().size() || stored.peaks()[i] != *node) {
        problems_.add(std::max<uint64_t>(n_, 1),
                      "meta tree: peak " + std::to_string(i) + " differs from the stored tree");
        return;
      }
      begin += uint64_t(1) << level;
      ++i;
    }
  }

  void check_checkpoints(VerifyReport& r) {
    auto list = log_.checkpoints();
    if (!list.ok()) {
      problems_.add(1, list.status().message());
      return;
    }
    for (const auto& c : *list) {
      ++r.checkpoints_checked;
      const std::string where = "checkpoint at size " + std::to_string(c.size);
      auto cp = open_checkpoint(c.signed_note, o_.keys);
      if (!cp.ok()) {
        problems_.add(c.size, where + ": " + cp.status().message());
        continue;
      }
      if (cp->size != c.size) {
        problems_.add(c.size, where + ": note says size " + std::to_string(cp->size));
        continue;
      }
      if (cp->origin != log_.origin()) {
        problems_.add(c.size,
                      where + ": origin " + cp->origin + " is not this log's " + log_.origin());
        continue;
      }
      if (c.size > n_ || c.size == 0) {
        problems_.add(std::max<uint64_t>(1, n_ + 1), where + ": beyond the head");
        continue;
      }
      auto root = log_.root_at(c.size);
      auto chain = stored_hash(c.size);
      if (!root.ok() || *root != cp->root) {
        problems_.add(c.size, where + ": Merkle root does not match the log");
      } else if (!chain || *chain != cp->chain_head) {
        problems_.add(c.size, where + ": chain head does not match seq " + std::to_string(c.size));
      }
      r.latest_checkpoint_size = c.size;
    }
    r.uncovered_tail = n_ - std::min(n_, r.latest_checkpoint_size);
  }

  void check_trusted(VerifyReport& r) {
    auto cp = open_checkpoint(*o_.trusted_checkpoint, o_.keys);
    if (!cp.ok()) {
      problems_.add(1, "trusted checkpoint: " + cp.status().message());
      return;
    }
    const std::string where = "trusted checkpoint at size " + std::to_string(cp->size);
    if (cp->origin != log_.origin()) {
      problems_.add(1, where + ": origin " + cp->origin + " is not this log's " + log_.origin());
      return;
    }
    if (cp->size > n_) {
      problems_.add(n_ + 1,
                    where + ": the log has only " + std::to_string(n_) + " events (truncated?)");
      return;
    }
    if (cp->size == 0) {
      r.trusted_size = 0;
      return;
    }
    // Prove it: the consistency proof from the trusted size to the head must verify
    // against the trusted root and the head root recomputed from verified nodes.
    auto head_root = log_.root_at(n_);
    auto proof = merkle::consistency_proof(cp->size, n_, log_.nodes());
    if (!head_root.ok() || !proof.ok()) {
      problems_.add(cp->size, where + ": cannot build a consistency proof");
      return;
    }
    Status s = merkle::verify_consistency(cp->size, n_, *proof, cp->root, *head_root);
    if (!s.is_ok()) {
      problems_.add(cp->size, where + ": the log does not extend it: " + s.message());
      return;
    }
    auto chain = stored_hash(cp->size);
    if (!chain || *chain != cp->chain_head) {
      problems_.add(cp->size, where + ": chain head differs at seq " + std::to_string(cp->size));
      return;
    }
    r.trusted_size = cp->size;
  }

  const EventLog& log_;
  const VerifyOptions& o_;
  uint64_t n_ = 0, from_ = 1, first_chunk_ = 0;
  Problems problems_;
  std::vector<uint64_t> event_tags_, index_tags_;
  std::vector<merkle::Hash> chunk_roots_;
  std::vector<uint8_t> chunk_valid_;  // bytes, not bits: chunks write theirs concurrently
  std::atomic<uint64_t> events_checked_{0}, bytes_checked_{0}, nodes_checked_{0}, blobs_checked_{0};
  uint64_t index_entries_ = 0;
};

}  // namespace

VerifyReport verify_log(const EventLog& log, const VerifyOptions& options) {
  return Verifier(log, options).run();
}

VerifyReport verify_events(const EventLog& log, std::span<const uint64_t> seqs, uint64_t tree_size,
                           const merkle::Hash& root, const BlobStore* blobs) {
  const auto t0 = std::chrono::steady_clock::now();
  VerifyReport r;
  const LogHead head = log.head();
  r.head_seq = head.seq;
  r.head_hash = head.hash;
  auto problem = [&](uint64_t seq, std::string what) {
    if (r.problems.size() < kMaxProblems) r.problems.push_back({seq, seq_text(seq) + ": " + what});
  };
  // A record read into `bytes` and checked against them: its view (into `bytes`), or why not.
  auto record = [&](uint64_t seq, std::string& bytes) -> Result<EventView> {
    rocksdb::Status st =
        log.db()->Get(rocksdb::ReadOptions(), log.events_cf(), seq_key(seq), &bytes);
    if (st.IsNotFound()) return Status::not_found("event missing");
    if (!st.ok()) return Status::io("read failed: " + st.ToString());
    auto ev = decode_record(bytes);
    if (!ev.ok()) return ev.status();
    if (ev->seq != seq) {
      return Status::corruption("record carries seq " + std::to_string(ev->seq) +
                                " (moved or reordered)");
    }
    if (compute_record_hash(bytes) != ev->hash) {
      return Status::corruption("stored hash does not match its bytes");
    }
    return ev;
  };
  std::string bytes, prev_bytes;
  std::vector<uint64_t> sorted(seqs.begin(), seqs.end());
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  for (uint64_t seq : sorted) {
    if (seq == 0 || seq > tree_size) {
      problem(seq, "not among the " + std::to_string(tree_size) + " events the root covers");
      continue;
    }
    auto rec = record(seq, bytes);
    if (!rec.ok()) {
      problem(seq, rec.status().message());
      continue;
    }
    ++r.events_checked;
    r.bytes_checked += bytes.size();
    const EventView& ev = *rec;
    // Bound to the trusted root through the log's tree.
    const merkle::Hash leaf = merkle::leaf_hash(ev.hash);
    auto proof = merkle::inclusion_proof(seq - 1, tree_size, log.nodes());
    if (!proof.ok()) {
      problem(seq, "no inclusion proof from the log's tree: " + proof.status().message());
    } else {
      r.tree_nodes_checked += proof->size();
      if (Status s = merkle::verify_inclusion(leaf, seq - 1, tree_size, *proof, root); !s.is_ok()) {
        problem(seq, "not in the tree of the trusted root: " + s.message());
      }
    }
    // Linked to the event before it.
    if (seq > 1) {
      auto prev = record(seq - 1, prev_bytes);
      if (!prev.ok()) {
        problem(seq - 1, prev.status().message());
      } else if (prev->hash != ev.prev_hash) {
        problem(seq, "prev_hash does not match the hash of seq " + std::to_string(seq - 1));
      } else if (ev.ts_us < prev->ts_us) {
        problem(seq, "timestamp goes backwards");
      }
    } else if (ev.prev_hash != Digest{}) {
      problem(seq, "the first event's prev_hash is not zero");
    }
    // Its evidence.
    auto refs = extract_refs(ev.payload);
    if (!refs.ok()) {
      problem(seq, refs.status().message());
      continue;
    }
    for (const auto& ref : *refs) {
      ++r.blobs_checked;
      Status s = blobs != nullptr ? blobs->check(ref.sha256, ref.bytes)
                                  : Status::not_found("no blob store in the data folder");
      if (!s.is_ok())
        problem(seq, "blob " + ref.id + " (" + to_hex(ref.sha256) + "): " + s.message());
    }
  }
  std::stable_sort(r.problems.begin(), r.problems.end(),
                   [](const auto& a, const auto& b) { return a.seq < b.seq; });
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace aura
