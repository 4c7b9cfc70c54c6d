#include "engine/log/event_log.h"

#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>

#include <cstring>

#include "engine/blob/evidence_ref.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/crypto/ed25519.h"
#include "engine/log/event_codec.h"
#include "engine/log/event_format.h"

namespace aura {
namespace ef = event_format;

namespace {

constexpr std::string_view kMetaOrigin = "origin";
constexpr std::string_view kMetaTree = "tree";
constexpr std::string_view kMetaFormat = "format";
constexpr std::string_view kFormatName = "aura-log-1";

Status from_rocks(const rocksdb::Status& s, std::string_view what) {
  if (s.ok()) return Status::ok();
  std::string m = std::string(what) + ": " + s.ToString();
  if (s.IsNotFound()) return Status::not_found(m);
  if (s.IsCorruption()) return Status::corruption(m);
  if (s.IsBusy() || s.IsTryAgain()) return Status::busy(m);
  return Status::io(m);
}

uint64_t realtime_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string encode_tree(const merkle::CompactRange& t) {
  std::string v;
  put_u64be(v, t.size());
  for (const auto& p : t.peaks()) v.append(reinterpret_cast<const char*>(p.data()), p.size());
  return v;
}

Result<merkle::CompactRange> decode_tree(std::string_view v) {
  if (v.size() < 8 || (v.size() - 8) % 32 != 0) {
    return Status::corruption("meta tree: " + std::to_string(v.size()) + " bytes");
  }
  uint64_t size = get_u64be(v.data());
  std::vector<merkle::Hash> peaks((v.size() - 8) / 32);
  for (size_t i = 0; i < peaks.size(); ++i) std::memcpy(peaks[i].data(), v.data() + 8 + 32 * i, 32);
  auto r = merkle::CompactRange::restore(size, std::move(peaks));
  if (!r.ok()) return r.status().with_context("meta tree");
  return std::move(r).value();
}

// The stream index key's prefix u8(len) ‖ stream, for memtable insert hints.
class StreamPrefix : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "aura.StreamPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), 1 + uint8_t(key[0]));
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() >= 1 && key.size() >= size_t(1 + uint8_t(key[0]));
  }
};

}  // namespace

struct EventLog::Writer {
  std::span<const EventDraft> drafts;
  bool want_checkpoint = false;
  bool done = false;
  Status status;
  std::vector<Appended> out;
  std::optional<StoredCheckpoint> checkpoint;
  std::condition_variable cv;
};

// Level 0 is the leaf hash of the stored event hash; higher levels come from the tree column.
class EventLog::LogNodeReader : public merkle::NodeReader {
 public:
  explicit LogNodeReader(const EventLog& log) : log_(log) {}
  Result<merkle::Hash> perfect_node(uint8_t level, uint64_t index) override {
    std::string v;
    if (level == 0) {
      auto s = log_.db_->Get(rocksdb::ReadOptions(), log_.events_cf(), seq_key(index + 1), &v);
      if (!s.ok()) return from_rocks(s, "leaf " + std::to_string(index));
      if (v.size() < ef::kFixedBytes) return Status::corruption("leaf " + std::to_string(index));
      return merkle::leaf_hash(as_bytes(std::string_view(v).substr(v.size() - ef::kHashBytes)));
    }
    auto s = log_.db_->Get(rocksdb::ReadOptions(), log_.tree_cf(), node_key(level, index), &v);
    std::string what = "tree node (" + std::to_string(level) + "," + std::to_string(index) + ")";
    if (!s.ok()) return from_rocks(s, what);
    if (v.size() != 32)
      return Status::corruption(what + ": " + std::to_string(v.size()) + " bytes");
    merkle::Hash h;
    std::memcpy(h.data(), v.data(), 32);
    return h;
  }

 private:
  const EventLog& log_;
};

const std::vector<std::string>& EventLog::column_family_names() {
  static const std::vector<std::string> names = {rocksdb::kDefaultColumnFamilyName, "stream",
                                                 "tree", "checkpoint", "meta"};
  return names;
}

std::string EventLog::stream_key(std::string_view stream, uint64_t seq) {
  std::string k;
  k.push_back(char(stream.size()));
  k.append(stream);
  put_u64be(k, seq);
  return k;
}

std::string EventLog::node_key(uint8_t level, uint64_t index) {
  // Keyed by the leaf count at which the node completes, then level: appends
  // write tree keys in increasing order, which keeps memtable inserts cheap.
  std::string k;
  put_u64be(k, (index + 1) << level);
  k.push_back(char(level));
  return k;
}

bool EventLog::parse_node_key(std::string_view key, uint8_t* level, uint64_t* index) {
  if (key.size() != 9) return false;
  const uint64_t end = get_u64be(key.data());
  const uint8_t l = uint8_t(key[8]);
  if (l == 0 || l >= 64 || end == 0 || (end & ((uint64_t(1) << l) - 1)) != 0) return false;
  *level = l;
  *index = (end >> l) - 1;
  return true;
}

EventLog::EventLog(Options options) : options_(std::move(options)) {
  if (!options_.clock_us) options_.clock_us = realtime_us;
}

EventLog::~EventLog() {
  if (db_ && !options_.read_only && sticky_.is_ok()) {
    // Durable already (the WAL is synced); flushing spares the next open a WAL replay.
    rocksdb::FlushOptions fo;
    db_->Flush(fo, cfs_).PermitUncheckedError();
  }
  if (db_) {
    for (auto* h : cfs_) db_->DestroyColumnFamilyHandle(h);
    db_->Close().PermitUncheckedError();
  }
}

Result<std::unique_ptr<EventLog>> EventLog::open(const std::filesystem::path& db_dir,
                                                 Options options) {
  std::unique_ptr<EventLog> log(new EventLog(std::move(options)));
  const Options& o = log->options_;
  rocksdb::DBOptions dbo;
  dbo.create_if_missing = o.create_if_missing && !o.read_only;
  dbo.create_missing_column_families = !o.read_only;
  // After a crash the last WAL record may be torn (never acknowledged: its sync had not
  // returned) and is dropped. Damage anywhere before the tail refuses the open instead
  // of silently cutting the log short there (point-in-time recovery would).
  dbo.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  dbo.info_log_level = rocksdb::InfoLogLevel::WARN_LEVEL;
  dbo.keep_log_file_num = 4;
  // Readers scan the whole log (verify, replay): map the files instead of copying each
  // block out of the page cache.
  if (o.read_only) dbo.allow_mmap_reads = true;
  if (o.env != nullptr) dbo.env = o.env;
  // The log is read mostly front to back (verify, replay, snapshots): large blocks
  // mean fewer block fetches per event.
  rocksdb::BlockBasedTableOptions table;
  table.block_size = 64 << 10;
  rocksdb::ColumnFamilyOptions cfo;
  cfo.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  std::vector<rocksdb::ColumnFamilyDescriptor> cfds;
  for (const auto& n : column_family_names()) cfds.emplace_back(n, cfo);
  // Index keys of one stream arrive in seq order: a per-stream insert hint spares the
  // memtable a full skiplist search for each.
  cfds[1].options.memtable_insert_with_hint_prefix_extractor = std::make_shared<StreamPrefix>();
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s;
  if (o.read_only) {
    if (!std::filesystem::exists(db_dir / "CURRENT")) {
      return Status::not_found("no event log at " + db_dir.string());
    }
    s = rocksdb::DB::OpenForReadOnly(dbo, db_dir.string(), cfds, &log->cfs_, &raw);
  } else {
    std::error_code ec;
    if (o.create_if_missing) std::filesystem::create_directories(db_dir, ec);
    if (ec) return Status::io("create " + db_dir.string() + ": " + ec.message());
    s = rocksdb::DB::Open(dbo, db_dir.string(), cfds, &log->cfs_, &raw);
  }
  if (!s.ok()) return from_rocks(s, "open " + db_dir.string());
  log->db_.reset(raw);
  log->nodes_ = std::make_unique<LogNodeReader>(*log);
  AURA_RETURN_IF_ERROR(log->load_state());
  return log;
}

Status EventLog::load_state() {
  rocksdb::ReadOptions ro;
  std::string v;
  // Format marker and origin, written once when the log is created.
  auto s = db_->Get(ro, meta_cf(), kMetaOrigin, &v);
  if (s.IsNotFound()) {
    if (options_.read_only) return Status::corruption("meta: no origin recorded");
    std::array<uint8_t, 8> id;
    random_bytes(id);
    origin_ = "aura.lab/" + to_hex(id);
    rocksdb::WriteBatch b;
    b.Put(meta_cf(), kMetaFormat, kFormatName);
    b.Put(meta_cf(), kMetaOrigin, origin_);
    b.Put(meta_cf(), kMetaTree, encode_tree(merkle::CompactRange()));
    rocksdb::WriteOptions wo;
    wo.sync = true;
    AURA_RETURN_IF_ERROR(from_rocks(db_->Write(wo, &b), "create log meta"));
  } else if (!s.ok()) {
    return from_rocks(s, "read meta origin");
  } else {
    origin_ = v;
    AURA_RETURN_IF_ERROR(from_rocks(db_->Get(ro, meta_cf(), kMetaFormat, &v), "read meta format"));
    if (v != kFormatName) return Status::corruption("meta: unknown log format '" + v + "'");
  }

  uint64_t last_ts = 0;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, events_cf()));
  it->SeekToLast();
  AURA_RETURN_IF_ERROR(from_rocks(it->status(), "seek head"));
  if (it->Valid()) {
    auto ev = decode_record(it->value().ToStringView());
    Status head_status = ev.status().with_context("head");
    if (ev.ok() && it->key().ToStringView() != seq_key(ev->seq)) {
      head_status = Status::corruption("head: key does not match seq " + std::to_string(ev->seq));
    }
    if (head_status.is_ok()) {
      head_ = {ev->seq, ev->hash};
      last_ts = ev->ts_us;
    } else if (!options_.read_only || it->key().size() != 8) {
      return head_status;
    } else {
      // A reader goes on with the head's seq from its key, so verify can name it.
      head_ = {get_u64be(it->key().data()), Digest{}};
    }
  }
  AURA_RETURN_IF_ERROR(from_rocks(db_->Get(ro, meta_cf(), kMetaTree, &v), "read meta tree"));
  auto tree = decode_tree(v);
  Status tree_status = tree.status();
  if (tree.ok()) {
    meta_tree_size_ = tree->size();
    if (tree->size() != head_.seq) {
      tree_status = Status::corruption("meta tree: size " + std::to_string(tree->size()) +
                                       " but head seq " + std::to_string(head_.seq));
    } else {
      tree_ = std::move(tree).value();
    }
  }
  if (!tree_status.is_ok()) {
    // A writer must not extend a log whose state disagrees; a reader reports it.
    if (!options_.read_only) return tree_status;
    state_problem_ = tree_status.message();
  }

  std::unique_ptr<rocksdb::Iterator> cit(db_->NewIterator(ro, checkpoint_cf()));
  cit->SeekToLast();
  AURA_RETURN_IF_ERROR(from_rocks(cit->status(), "seek checkpoints"));
  if (cit->Valid() && cit->key().size() == 8) last_checkpoint_size_ = get_u64be(cit->key().data());
  last_ts_us_ = last_ts;
  return Status::ok();
}

Result<Appended> EventLog::append(const EventDraft& draft) {
  auto r = append_all(std::span(&draft, 1));
  if (!r.ok()) return r.status();
  return r->front();
}

Result<std::vector<Appended>> EventLog::append_all(std::span<const EventDraft> drafts) {
  if (options_.read_only) return Status::failed_precondition("append: log opened read-only");
  if (drafts.empty()) return Status::invalid("append: no events");
  size_t bytes = 0;
  for (size_t i = 0; i < drafts.size(); ++i) {
    Status s = validate_draft(drafts[i]);
    if (s.is_ok()) s = check_refs(drafts[i]);
    if (!s.is_ok()) {
      return drafts.size() == 1 ? s.with_context("append")
                                : s.with_context("append: event " + std::to_string(i));
    }
    bytes += drafts[i].payload.size();
  }
  if (bytes > options_.max_group_bytes) {
    return Status::invalid("append: " + std::to_string(bytes) +
                           " payload bytes in one call, limit " +
                           std::to_string(options_.max_group_bytes));
  }
  Writer w;
  w.drafts = drafts;
  return submit(w);
}

Status EventLog::check_refs(const EventDraft& draft) const {
  auto refs = extract_refs(draft.payload);
  if (!refs.ok()) return refs.status().with_context("payload");
  if (refs->empty()) return Status::ok();
  if (options_.blobs == nullptr) {
    return Status::failed_precondition("payload references blobs but the log has no blob store");
  }
  for (const auto& r : *refs) {
    Status s = options_.blobs->check(r.sha256, r.bytes);
    if (!s.is_ok()) return s.with_context("refs " + r.id + ": not stored before the event");
  }
  return Status::ok();
}

Result<StoredCheckpoint> EventLog::checkpoint() {
  if (options_.read_only) return Status::failed_precondition("checkpoint: log opened read-only");
  if (options_.signer == nullptr) return Status::failed_precondition("checkpoint: no signing key");
  Writer w;
  w.want_checkpoint = true;
  auto r = submit(w);
  if (!r.ok()) return r.status();
  if (!w.checkpoint) return Status::failed_precondition("checkpoint: the log is empty");
  return *w.checkpoint;
}

// Group commit (LevelDB's writer queue): the writer at the front leads, takes the
// queued writers as one group, writes them as one synced RocksDB batch, and wakes them.
// Groups are strictly serial: a batch never overlaps another write or sync, so a failed
// write cannot leave a later batch durable behind a lost one.
Result<std::vector<Appended>> EventLog::submit(Writer& w) {
  std::unique_lock l(mu_);
  writers_.push_back(&w);
  while (!w.done && &w != writers_.front()) w.cv.wait(l);
  if (w.done) {
    if (!w.status.is_ok()) return w.status;
    return std::move(w.out);
  }

  // This writer leads: take a group from the front of the queue.
  std::vector<Writer*> group;
  size_t events = 0, bytes = 0;
  for (Writer* x : writers_) {
    size_t xb = 0;
    for (const auto& d : x->drafts) xb += d.payload.size();
    if (!group.empty() && (events + x->drafts.size() > options_.max_group_events ||
                           bytes + xb > options_.max_group_bytes)) {
      break;
    }
    group.push_back(x);
    events += x->drafts.size();
    bytes += xb;
  }

  Status s = sticky_;
  if (s.is_ok()) {
    LogHead head = head_;
    merkle::CompactRange tree = tree_;
    uint64_t ts = last_ts_us_;
    uint64_t ckpt_size = last_checkpoint_size_;
    l.unlock();
    s = write_group(group, head, tree, ts, ckpt_size);
    l.lock();
    if (s.is_ok()) {
      head_ = head;
      tree_ = std::move(tree);
      last_ts_us_ = ts;
      last_checkpoint_size_ = ckpt_size;
      stats_.groups += 1;
      stats_.events += events;
      head_cv_.notify_all();
    } else {
      sticky_ = s;  // LevelDB's background-error rule: refuse until reopened
    }
  }
  for (size_t i = 0; i < group.size(); ++i) writers_.pop_front();
  // Wake the next leader first so its group commit overlaps the wake-ups below.
  if (!writers_.empty()) writers_.front()->cv.notify_one();
  for (Writer* x : group) {
    x->status = s;
    x->done = true;
    if (x != &w) x->cv.notify_one();
  }
  if (!s.is_ok()) return s;
  return std::move(w.out);
}

Status EventLog::write_group(std::vector<Writer*>& group, LogHead& head, merkle::CompactRange& tree,
                             uint64_t& last_ts, uint64_t& checkpoint_size) {
  const uint64_t first_seq = head.seq + 1;
  const uint64_t ts = std::max(last_ts, options_.clock_us());
  rocksdb::WriteBatch batch;
  bool want_checkpoint = false;
  for (Writer* w : group) {
    want_checkpoint |= w->want_checkpoint;
    w->out.clear();
    w->out.reserve(w->drafts.size());
    for (const EventDraft& d : w->drafts) {
      const uint64_t seq = head.seq + 1;
      Digest h;
      std::string rec = encode_record(seq, head.hash, ts, d, &h);
      batch.Put(events_cf(), seq_key(seq), rec);
      batch.Put(stream_cf(), stream_key(d.stream, seq), rocksdb::Slice());
      tree.append(merkle::leaf_hash(h), [&](const merkle::PerfectNode& n) {
        batch.Put(tree_cf(), node_key(n.level, n.index),
                  rocksdb::Slice(reinterpret_cast<const char*>(n.hash.data()), n.hash.size()));
      });
      head = {seq, h};
      w->out.push_back({seq, h});
    }
  }
  if (head.seq >= first_seq) batch.Put(meta_cf(), kMetaTree, encode_tree(tree));

  std::optional<StoredCheckpoint> made;
  const uint64_t every = options_.checkpoint_every;
  const bool crossed =
      every > 0 && head.seq >= first_seq && (first_seq - 1) / every != head.seq / every;
  if (options_.signer != nullptr && head.seq > 0 && head.seq != checkpoint_size &&
      (want_checkpoint || crossed)) {
    auto c = make_checkpoint(head.seq, tree.root(), head.hash);
    if (!c.ok()) return c.status();
    batch.Put(checkpoint_cf(), seq_key(c->size), c->signed_note);
    made = std::move(c).value();
  }

  if (batch.Count() > 0) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    AURA_RETURN_IF_ERROR(
        from_rocks(db_->Write(wo, &batch), "append seq=" + std::to_string(first_seq)));
  }
  last_ts = ts;
  if (made) checkpoint_size = made->size;

  if (want_checkpoint && head.seq > 0) {
    std::optional<StoredCheckpoint> existing = made;
    if (!existing) {
      std::string note;
      AURA_RETURN_IF_ERROR(
          from_rocks(db_->Get(rocksdb::ReadOptions(), checkpoint_cf(), seq_key(head.seq), &note),
                     "read checkpoint " + std::to_string(head.seq)));
      existing = StoredCheckpoint{head.seq, std::move(note)};
    }
    for (Writer* w : group) {
      if (w->want_checkpoint) w->checkpoint = existing;
    }
  }
  return Status::ok();
}

Result<StoredCheckpoint> EventLog::make_checkpoint(uint64_t size, const merkle::Hash& root,
                                                   const Digest& chain_head) const {
  Checkpoint c{origin_, size, root, chain_head};
  auto note = sign_checkpoint(c, *options_.signer);
  if (!note.ok()) return note.status().with_context("checkpoint " + std::to_string(size));
  return StoredCheckpoint{size, std::move(note).value()};
}

merkle::CompactRange EventLog::tree_state() const {
  std::lock_guard l(mu_);
  return tree_;
}

EventLog::Stats EventLog::stats() const {
  std::lock_guard l(mu_);
  return stats_;
}

LogHead EventLog::head() const {
  std::lock_guard l(mu_);
  return head_;
}

uint64_t EventLog::wait_for(uint64_t seq, std::chrono::milliseconds timeout) const {
  std::unique_lock l(mu_);
  head_cv_.wait_for(l, timeout, [&] { return head_.seq >= seq; });
  return head_.seq;
}

Result<StoredEvent> EventLog::get(uint64_t seq) const {
  // Only acknowledged events are visible: a group being written is not yet.
  if (seq > head().seq)
    return Status::not_found("event seq=" + std::to_string(seq) + ": not found");
  std::string v;
  auto s = db_->Get(rocksdb::ReadOptions(), events_cf(), seq_key(seq), &v);
  if (s.IsNotFound()) return Status::not_found("event seq=" + std::to_string(seq) + ": not found");
  AURA_RETURN_IF_ERROR(from_rocks(s, "read seq=" + std::to_string(seq)));
  auto ev = decode_record(v);
  if (!ev.ok()) return ev.status().with_context("seq=" + std::to_string(seq));
  if (ev->seq != seq) {
    return Status::corruption("seq=" + std::to_string(seq) + ": record says seq " +
                              std::to_string(ev->seq));
  }
  return StoredEvent::from_view(*ev);
}

Status EventLog::read_range(uint64_t from, uint64_t to,
                            const std::function<bool(const EventView&)>& fn) const {
  if (from == 0) from = 1;
  to = std::min(to, head().seq);
  if (from > to) return Status::ok();
  rocksdb::ReadOptions ro;
  std::string upper = seq_key(to + 1);
  rocksdb::Slice upper_slice(upper);
  if (to != UINT64_MAX) ro.iterate_upper_bound = &upper_slice;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, events_cf()));
  uint64_t expect = from;
  for (it->Seek(seq_key(from)); it->Valid(); it->Next(), ++expect) {
    auto k = it->key();
    if (k.size() != 8)
      return Status::corruption("event key of " + std::to_string(k.size()) + " bytes");
    uint64_t seq = get_u64be(k.data());
    if (seq != expect) return Status::corruption("seq=" + std::to_string(expect) + ": missing");
    auto ev = decode_record(it->value().ToStringView());
    if (!ev.ok()) return ev.status().with_context("seq=" + std::to_string(seq));
    if (ev->seq != seq) {
      return Status::corruption("seq=" + std::to_string(seq) + ": record says seq " +
                                std::to_string(ev->seq));
    }
    if (!fn(*ev)) return Status::ok();
  }
  return from_rocks(it->status(), "read range");
}

Status EventLog::read_stream(std::string_view stream, uint64_t from_seq,
                             const std::function<bool(const EventView&)>& fn) const {
  if (stream.empty() || stream.size() > ef::kMaxStreamBytes) {
    return Status::invalid("stream: bad length " + std::to_string(stream.size()));
  }
  const uint64_t durable = head().seq;
  std::string prefix = stream_key(stream, 0).substr(0, 1 + stream.size());
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), stream_cf()));
  std::string v;
  for (it->Seek(stream_key(stream, from_seq)); it->Valid() && it->key().starts_with(prefix);
       it->Next()) {
    if (it->key().size() != prefix.size() + 8) return Status::corruption("stream index key size");
    uint64_t seq = get_u64be(it->key().data() + prefix.size());
    if (seq > durable) break;
    AURA_RETURN_IF_ERROR(from_rocks(db_->Get(rocksdb::ReadOptions(), events_cf(), seq_key(seq), &v),
                                    "stream index points to seq=" + std::to_string(seq)));
    auto ev = decode_record(v);
    if (!ev.ok()) return ev.status().with_context("seq=" + std::to_string(seq));
    if (ev->seq != seq || ev->stream != stream) {
      return Status::corruption("stream index entry for '" + std::string(stream) +
                                "' points to seq=" + std::to_string(seq) + " of stream '" +
                                std::string(ev->stream) + "'");
    }
    if (!fn(*ev)) return Status::ok();
  }
  return from_rocks(it->status(), "read stream");
}

Result<merkle::Hash> EventLog::root_at(uint64_t size) const {
  if (size > head().seq) {
    return Status::invalid("tree size " + std::to_string(size) + " beyond head " +
                           std::to_string(head().seq));
  }
  return merkle::root_at(size, *nodes_);
}

Result<std::vector<StoredCheckpoint>> EventLog::checkpoints() const {
  std::vector<StoredCheckpoint> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), checkpoint_cf()));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (it->key().size() != 8) return Status::corruption("checkpoint key size");
    out.push_back({get_u64be(it->key().data()), it->value().ToString()});
  }
  AURA_RETURN_IF_ERROR(from_rocks(it->status(), "read checkpoints"));
  return out;
}

Result<std::optional<StoredCheckpoint>> EventLog::latest_checkpoint() const {
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), checkpoint_cf()));
  it->SeekToLast();
  AURA_RETURN_IF_ERROR(from_rocks(it->status(), "read checkpoints"));
  if (!it->Valid()) return std::optional<StoredCheckpoint>();
  if (it->key().size() != 8) return Status::corruption("checkpoint key size");
  return std::optional<StoredCheckpoint>(
      StoredCheckpoint{get_u64be(it->key().data()), it->value().ToString()});
}

}  // namespace aura

namespace aura {
merkle::NodeReader& EventLog::nodes() const { return *nodes_; }
}  // namespace aura
