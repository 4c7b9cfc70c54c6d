// `aura keys …`, `aura blob …` and `aura log …`.
#include <simdjson.h>

#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/cli/daemon_forward.h"
#include "app/lab/operator_events.h"
#include "engine/blob/blob_store.h"
#include "engine/blob/evidence_ref.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/common/json_writer.h"
#include "engine/events/event_types.h"
#include "engine/keys/key_store.h"
#include "engine/log/data_dir.h"
#include "engine/log/event_log.h"
#include "engine/log/log_verifier.h"
#include "engine/log/snapshot.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

std::string hashes_json(const std::vector<merkle::Hash>& hs) {
  JsonArray a;
  for (const auto& h : hs) a.str(to_hex(h));
  return a.done();
}

std::string event_json(const EventView& ev) {
  return JsonWriter()
      .num("seq", ev.seq)
      .str("prev_hash", to_hex(ev.prev_hash))
      .num("ts_us", ev.ts_us)
      .str("stream", ev.stream)
      .str("type", ev.type)
      .str("actor", ev.actor)
      .raw("payload", ev.payload)
      .str("hash", to_hex(ev.hash))
      .done();
}

// ---- keys ----

int keys_init(Invocation& inv) {
  if (Status s = check_folders(inv); !s.is_ok()) return inv.fail(s);
  auto ks = KeyStore::init(inv.keys_dir);
  if (!ks.ok()) return inv.fail(ks.status());
  const std::string vkey = format_verifier_key(ks->lab_verifier());
  std::cout << "created lab signing key " << ks->lab_signer().name()
            << "\n  private: " << (inv.keys_dir / KeyStore::kPrivateKeyFile).string()
            << " (0600)\n  public:  " << (inv.keys_dir / KeyStore::kPublicKeyFile).string()
            << "\n  " << vkey << "\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("keys", inv.keys_dir.string())
                    .str("name", ks->lab_signer().name())
                    .str("public_key", vkey)
                    .done());
  return 0;
}

// ---- blobs ----

int blob_put(Invocation& inv) {
  auto dd = DataDir::open_writer(inv.data_dir);
  if (!dd.ok()) return inv.fail(dd.status());
  auto store = BlobStore::open(dd->blob_dir());
  if (!store.ok()) return inv.fail(store.status());
  auto bytes = read_small_file(inv.positional[0], store->max_blob_bytes());
  if (!bytes.ok()) return inv.fail(bytes.status());
  auto info = store->put(as_bytes(*bytes));
  if (!info.ok()) return inv.fail(info.status());
  EvidenceRef ref{inv.get("id", "blob-" + to_hex(info->sha256).substr(0, 12)), info->sha256,
                  inv.get("kind", "file"), info->bytes};
  if (Status s = validate_evidence_ref(ref); !s.is_ok()) return inv.fail(s);
  std::cout << evidence_ref_json(ref) << std::endl;
  return 0;
}

// ---- log ----

int log_append(Invocation& inv) {
  EventDraft d{inv.get("stream"), inv.get("type"), inv.get("actor", std::string(kOperatorActor)),
               inv.get("payload", "{}")};
  if (Status s = app::check_operator_event(d); !s.is_ok()) return inv.fail(s, 2);
  if (d.payload.rfind("@", 0) == 0) {
    auto p = read_small_file(d.payload.substr(1), 2 << 20);
    if (!p.ok()) return inv.fail(p.status());
    d.payload = std::move(p).value();
  }
  // A running daemon holds the data folder: it appends (and checks the event again).
  if (auto forwarded = forward_log_append(inv, d)) return *forwarded;
  auto w = open_writer(inv);
  if (!w.ok()) return inv.fail(w.status());
  auto a = w->log->append(d);  // refuses refs to blobs not already stored
  if (!a.ok()) return inv.fail(a.status());
  std::cout << "appended seq=" << a->seq << " hash=" << to_hex(a->hash) << "\n";
  inv.emit_json(
      JsonWriter().boolean("ok", true).num("seq", a->seq).str("hash", to_hex(a->hash)).done());
  return 0;
}

int log_head(Invocation& inv) {
  auto log = open_reader(inv);
  if (!log.ok()) return inv.fail(log.status());
  const LogHead h = (*log)->head();
  auto latest = (*log)->latest_checkpoint();
  if (!latest.ok()) return inv.fail(latest.status());
  const uint64_t ck = *latest ? (*latest)->size : 0;
  std::cout << "origin " << (*log)->origin() << "\nhead seq=" << h.seq << " hash=" << to_hex(h.hash)
            << "\nlatest checkpoint size=" << ck << " (" << (h.seq - ck)
            << " events not yet covered)\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("origin", (*log)->origin())
                    .num("head_seq", h.seq)
                    .str("head_hash", to_hex(h.hash))
                    .num("checkpoint_size", ck)
                    .done());
  return 0;
}

int log_verify(Invocation& inv) {
  auto from = inv.get_u64("from", 1);
  if (!from.ok()) return inv.fail(from.status(), 2);
  auto keys = pinned_keys(inv);
  if (!keys.ok()) return inv.fail(keys.status());
  VerifyOptions o;
  o.from_seq = *from;
  o.keys = *keys;
  if (inv.has("trusted")) {
    auto t = read_small_file(inv.get("trusted"), 1 << 20);
    if (!t.ok()) return inv.fail(t.status().with_context("--trusted"), 2);
    // A note that does not verify is bad input, not a fault of the log.
    if (auto c = open_checkpoint(*t, *keys); !c.ok()) {
      return inv.fail(c.status().with_context("--trusted " + inv.get("trusted")), 2);
    }
    o.trusted_checkpoint = std::move(t).value();
  }
  auto log = open_reader(inv);
  if (!log.ok()) return inv.fail(log.status());
  if (*from == 0 || *from > (*log)->head().seq + 1) {
    return inv.fail(Status::invalid("--from " + std::to_string(*from) + ": the log holds seqs 1.." +
                                    std::to_string((*log)->head().seq)),
                    2);
  }
  // A missing blobs folder is not created (verify writes nothing): every blob an event
  // references is then reported missing.
  std::optional<BlobStore> blobs;
  if (fs::exists(inv.data_dir / "blobs")) {
    auto b = BlobStore::open(inv.data_dir / "blobs");
    if (!b.ok()) return inv.fail(b.status());
    blobs.emplace(std::move(b).value());
    o.blobs = &*blobs;
  }
  const bool tty = !inv.json && isatty(2);
  std::atomic<uint64_t> last_print{0};
  if (tty) {
    o.progress = [&](uint64_t done, uint64_t total) {
      if (done - last_print.load() < 250000 && done != total) return;
      last_print = done;
      std::cerr << "\rverifying: " << done << "/" << total << " events" << std::flush;
    };
  }
  VerifyReport r = verify_log(**log, o);
  if (tty) std::cerr << "\r\033[K";
  const double eps = r.seconds > 0 ? double(r.events_checked) / r.seconds : 0;
  if (r.ok()) {
    std::cout << "ok: " << r.events_checked << " events (seq " << o.from_seq << ".." << r.head_seq
              << "), " << r.tree_nodes_checked << " tree nodes, " << r.index_entries_checked
              << " index entries, " << r.blobs_checked << " blobs, " << r.checkpoints_checked
              << " checkpoints verified in " << r.seconds << " s (" << uint64_t(eps)
              << " events/s)\n"
              << "head seq=" << r.head_seq << " hash=" << to_hex(r.head_hash) << "\n";
    if (r.checkpoints_checked == 0) {
      std::cout << "no checkpoint yet: all " << r.head_seq << " events are uncovered\n";
    } else {
      std::cout << "latest checkpoint size=" << r.latest_checkpoint_size
                << "; uncovered tail: " << r.uncovered_tail << " events\n";
    }
    if (r.trusted_size)
      std::cout << "extends the trusted checkpoint of size " << *r.trusted_size << "\n";
  } else {
    std::cout << "FAILED: first bad seq " << *r.first_bad_seq() << ": " << r.problems.front().what
              << "\n";
    for (size_t i = 1; i < r.problems.size() && i < 10; ++i) {
      std::cout << "  also seq " << r.problems[i].seq << ": " << r.problems[i].what << "\n";
    }
  }
  JsonArray problems;
  for (const auto& p : r.problems)
    problems.raw(JsonWriter().num("seq", p.seq).str("what", p.what).done());
  JsonWriter j;
  j.boolean("ok", r.ok())
      .num("head_seq", r.head_seq)
      .str("head_hash", to_hex(r.head_hash))
      .num("events_checked", r.events_checked)
      .num("bytes_checked", r.bytes_checked)
      .num("tree_nodes_checked", r.tree_nodes_checked)
      .num("index_entries_checked", r.index_entries_checked)
      .num("blobs_checked", r.blobs_checked)
      .num("checkpoints_checked", r.checkpoints_checked)
      .num("latest_checkpoint_size", r.latest_checkpoint_size)
      .num("uncovered_tail", r.uncovered_tail)
      .real("seconds", r.seconds)
      .real("events_per_s", eps);
  if (r.trusted_size)
    j.num("trusted_size", *r.trusted_size);
  else
    j.null("trusted_size");
  if (r.first_bad_seq())
    j.num("first_bad_seq", *r.first_bad_seq());
  else
    j.null("first_bad_seq");
  j.raw("problems", problems.done());
  inv.emit_json(j.done());
  return r.ok() ? 0 : 1;
}

int log_dump(Invocation& inv) {
  auto from = inv.get_u64("from", 1);
  auto to = inv.get_u64("to", UINT64_MAX);
  if (!from.ok()) return inv.fail(from.status(), 2);
  if (!to.ok()) return inv.fail(to.status(), 2);
  auto log = open_reader(inv);
  if (!log.ok()) return inv.fail(log.status());
  uint64_t printed = 0;
  auto print = [&](const EventView& ev) {
    std::cout << event_json(ev) << "\n";
    ++printed;
    return true;
  };
  Status s = inv.has("stream")
                 ? (*log)->read_stream(
                       inv.get("stream"), *from,
                       [&](const EventView& ev) { return ev.seq > *to ? false : print(ev); })
                 : (*log)->read_range(*from, std::min(*to, (*log)->head().seq), print);
  std::cout << std::flush;
  if (!s.is_ok()) return inv.fail(s);
  inv.emit_json(JsonWriter().boolean("ok", true).num("events", printed).done());
  return 0;
}

int log_tail(Invocation& inv) {
  auto count = inv.get_u64("lines", 10);
  if (!count.ok()) return inv.fail(count.status(), 2);
  uint64_t next = 0;
  for (;;) {
    auto log = open_reader(inv);
    if (!log.ok()) return inv.fail(log.status());
    const uint64_t head = (*log)->head().seq;
    if (next == 0) {
      auto from = inv.get_u64("from", head > *count ? head - *count + 1 : 1);
      if (!from.ok()) return inv.fail(from.status(), 2);
      next = std::max<uint64_t>(1, *from);
    }
    Status s = (*log)->read_range(next, head, [&](const EventView& ev) {
      std::cout << event_json(ev) << "\n";
      next = ev.seq + 1;
      return true;
    });
    std::cout << std::flush;
    if (!s.is_ok()) return inv.fail(s);
    if (!inv.has("follow")) return 0;
    // A read-only open sees the log as of the open: reopen to see new events.
    log->reset();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

int log_checkpoint(Invocation& inv) {
  if (auto forwarded = forward_operator(inv)) return *forwarded;
  auto w = open_writer(inv);
  if (!w.ok()) return inv.fail(w.status());
  auto c = w->log->checkpoint();
  if (!c.ok()) return inv.fail(c.status());
  std::cout << c->signed_note;
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .num("size", c->size)
                    .str("checkpoint", c->signed_note)
                    .done());
  return 0;
}

Result<StoredCheckpoint> checkpoint_for(const EventLog& log, std::optional<uint64_t> size) {
  auto list = log.checkpoints();
  if (!list.ok()) return list.status();
  if (list->empty())
    return Status::not_found("no checkpoint yet; make one with 'aura log checkpoint'");
  if (!size) return list->back();
  for (const auto& c : *list) {
    if (c.size == *size) return c;
  }
  return Status::not_found("no checkpoint at size " + std::to_string(*size));
}

int log_prove(Invocation& inv) {
  auto seq = parse_u64(inv.positional[0]);
  if (!seq || *seq == 0)
    return inv.fail(Status::invalid("SEQ: '" + inv.positional[0] + "' is not a seq (1, 2, ...)"),
                    2);
  std::optional<uint64_t> size;
  if (inv.has("size")) {
    auto s = inv.get_u64("size", 0);
    if (!s.ok()) return inv.fail(s.status(), 2);
    size = *s;
  }
  auto log = open_reader(inv);
  if (!log.ok()) return inv.fail(log.status());
  auto ck = checkpoint_for(**log, size);
  if (!ck.ok()) return inv.fail(ck.status());
  if (*seq > ck->size) {
    return inv.fail(Status::invalid(
        "seq " + std::to_string(*seq) + " is not covered by the checkpoint of size " +
        std::to_string(ck->size) + "; make a newer one with 'aura log checkpoint'"));
  }
  auto ev = (*log)->get(*seq);
  if (!ev.ok()) return inv.fail(ev.status());
  auto proof = merkle::inclusion_proof(*seq - 1, ck->size, (*log)->nodes());
  if (!proof.ok()) return inv.fail(proof.status());
  std::cout << JsonWriter()
                   .str("kind", "inclusion")
                   .num("seq", *seq)
                   .str("event_hash", to_hex(ev->hash))
                   .num("tree_size", ck->size)
                   .raw("proof", hashes_json(*proof))
                   .str("checkpoint", ck->signed_note)
                   .done()
            << std::endl;
  return 0;
}

int log_consistency(Invocation& inv) {
  auto m = parse_u64(inv.positional[0]);
  auto n = parse_u64(inv.positional[1]);
  if (!m || !n || *m == 0 || *m > *n) {
    return inv.fail(Status::invalid("OLD_SIZE and NEW_SIZE must satisfy 0 < OLD_SIZE <= NEW_SIZE"),
                    2);
  }
  auto log = open_reader(inv);
  if (!log.ok()) return inv.fail(log.status());
  if (*n > (*log)->head().seq) {
    return inv.fail(Status::invalid("NEW_SIZE " + std::to_string(*n) + " beyond the head " +
                                    std::to_string((*log)->head().seq)));
  }
  auto proof = merkle::consistency_proof(*m, *n, (*log)->nodes());
  auto r1 = (*log)->root_at(*m);
  auto r2 = (*log)->root_at(*n);
  if (!proof.ok()) return inv.fail(proof.status());
  if (!r1.ok()) return inv.fail(r1.status());
  if (!r2.ok()) return inv.fail(r2.status());
  JsonWriter j;
  j.str("kind", "consistency")
      .num("old_size", *m)
      .num("new_size", *n)
      .str("old_root", to_hex(*r1))
      .str("new_root", to_hex(*r2))
      .raw("proof", hashes_json(*proof));
  if (auto c = checkpoint_for(**log, *m); c.ok()) j.str("old_checkpoint", c->signed_note);
  if (auto c = checkpoint_for(**log, *n); c.ok()) j.str("new_checkpoint", c->signed_note);
  std::cout << j.done() << std::endl;
  return 0;
}

Result<std::vector<merkle::Hash>> parse_hashes(simdjson::dom::array a) {
  std::vector<merkle::Hash> out;
  for (auto e : a) {
    std::string_view s;
    if (e.get(s)) return Status::invalid("proof: entries must be hex strings");
    auto d = digest_from_hex(s);
    if (!d) return Status::invalid("proof: '" + std::string(s) + "' is not 64 hex digits");
    if (out.size() >= 128) return Status::invalid("proof: too many hashes");
    out.push_back(*d);
  }
  return out;
}

// Verifies a proof document from `log prove` or `log consistency`, offline.
int log_check_proof(Invocation& inv) {
  auto text = read_small_file(inv.positional[0], 1 << 20);
  if (!text.ok()) return inv.fail(text.status());
  auto keys = pinned_keys(inv);
  if (!keys.ok()) return inv.fail(keys.status());
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(*text).get(o)) return inv.fail(Status::invalid("proof file: not a JSON object"));
  std::string_view kind;
  simdjson::dom::array arr;
  if (o["kind"].get(kind)) return inv.fail(Status::invalid("proof file: no kind"));
  if (o["proof"].get(arr)) return inv.fail(Status::invalid("proof file: no proof array"));
  auto proof = parse_hashes(arr);
  if (!proof.ok()) return inv.fail(proof.status());
  auto open_ck = [&](std::string_view field) -> Result<std::optional<Checkpoint>> {
    std::string_view note;
    if (o[field].get(note)) return std::optional<Checkpoint>();
    auto c = open_checkpoint(note, *keys);
    if (!c.ok()) return c.status().with_context(std::string(field));
    return std::optional<Checkpoint>(*c);
  };
  if (kind == "inclusion") {
    uint64_t seq = 0, size = 0;
    std::string_view hash_hex;
    if (o["seq"].get(seq) || o["tree_size"].get(size) || o["event_hash"].get(hash_hex)) {
      return inv.fail(Status::invalid("proof file: inclusion needs seq, tree_size and event_hash"));
    }
    auto ck = open_ck("checkpoint");
    if (!ck.ok()) return inv.fail(ck.status());
    if (!*ck) return inv.fail(Status::invalid("proof file: inclusion needs its signed checkpoint"));
    if ((*ck)->size != size)
      return inv.fail(Status::invalid("proof file: tree_size differs from the checkpoint's size"));
    auto h = digest_from_hex(hash_hex);
    if (!h || seq == 0) return inv.fail(Status::invalid("proof file: bad seq or event_hash"));
    Status s = merkle::verify_inclusion(merkle::leaf_hash(*h), seq - 1, size, *proof, (*ck)->root);
    if (!s.is_ok()) return inv.fail(s);
    std::cout << "ok: event seq=" << seq << " hash=" << hash_hex << " is in the log "
              << (*ck)->origin << " at checkpoint size " << size << " (signature verified)\n";
    inv.emit_json(JsonWriter()
                      .boolean("ok", true)
                      .str("kind", "inclusion")
                      .num("seq", seq)
                      .num("tree_size", size)
                      .done());
    return 0;
  }
  if (kind == "consistency") {
    uint64_t m = 0, n = 0;
    std::string_view r1s, r2s;
    if (o["old_size"].get(m) || o["new_size"].get(n) || o["old_root"].get(r1s) ||
        o["new_root"].get(r2s)) {
      return inv.fail(Status::invalid(
          "proof file: consistency needs old_size, new_size, old_root and new_root"));
    }
    auto r1 = digest_from_hex(r1s), r2 = digest_from_hex(r2s);
    if (!r1 || !r2) return inv.fail(Status::invalid("proof file: roots must be 64 hex digits"));
    bool signed_old = false, signed_new = false;
    for (auto [field, size, root, flag] : {std::tuple{"old_checkpoint", m, *r1, &signed_old},
                                           std::tuple{"new_checkpoint", n, *r2, &signed_new}}) {
      auto ck = open_ck(field);
      if (!ck.ok()) return inv.fail(ck.status());
      if (*ck) {
        if ((*ck)->size != size || (*ck)->root != root) {
          return inv.fail(Status::invalid(std::string("proof file: ") + field +
                                          " differs from the stated size or root"));
        }
        *flag = true;
      }
    }
    Status s = merkle::verify_consistency(m, n, *proof, *r1, *r2);
    if (!s.is_ok()) return inv.fail(s);
    std::cout << "ok: the tree of size " << n << " extends the tree of size " << m << " (old root "
              << (signed_old ? "signed" : "UNSIGNED") << ", new root "
              << (signed_new ? "signed" : "UNSIGNED") << ")\n";
    inv.emit_json(JsonWriter()
                      .boolean("ok", true)
                      .str("kind", "consistency")
                      .num("old_size", m)
                      .num("new_size", n)
                      .boolean("old_signed", signed_old)
                      .boolean("new_signed", signed_new)
                      .done());
    return 0;
  }
  return inv.fail(Status::invalid("proof file: unknown kind '" + std::string(kind) + "'"));
}

int log_snapshot(Invocation& inv) {
  if (!inv.has("out")) return inv.fail(Status::invalid("--out DIR is required"), 2);
  // A running daemon holds the data folder: it makes the snapshot (appends go on meanwhile).
  if (auto forwarded = forward_snapshot(inv)) return *forwarded;
  auto w = open_writer(inv);
  if (!w.ok()) return inv.fail(w.status());
  auto m = make_snapshot(*w->log, *w->blobs, inv.get("out"), w->keys->lab_signer());
  if (!m.ok()) return inv.fail(m.status());
  std::cout << "snapshot " << inv.get("out") << ": head seq=" << m->head_seq
            << " hash=" << to_hex(m->head_hash) << " root=" << to_hex(m->merkle_root) << ", "
            << m->files.size() << " files, signed manifest " << kSnapshotManifestFile << "\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("out", inv.get("out"))
                    .num("head_seq", m->head_seq)
                    .str("head_hash", to_hex(m->head_hash))
                    .str("merkle_root", to_hex(m->merkle_root))
                    .num("files", uint64_t(m->files.size()))
                    .done());
  return 0;
}

int log_restore(Invocation& inv) {
  if (!inv.has("data"))
    return inv.fail(Status::invalid("--data DIR (the empty target) is required"), 2);
  if (Status s = check_folders(inv); !s.is_ok()) return inv.fail(s);
  auto keys = pinned_keys(inv, inv.positional[0]);
  if (!keys.ok()) return inv.fail(keys.status());
  auto m = restore_snapshot(inv.positional[0], inv.data_dir, *keys);
  if (!m.ok()) return inv.fail(m.status());
  auto log = open_reader(inv);
  if (!log.ok()) return inv.fail(log.status());
  auto blobs = BlobStore::open(inv.data_dir / "blobs");
  if (!blobs.ok()) return inv.fail(blobs.status());
  VerifyOptions o;
  o.keys = *keys;
  o.blobs = &*blobs;
  VerifyReport r = verify_log(**log, o);
  if (!r.ok()) {
    return inv.fail(Status::corruption("restored log fails verify at seq " +
                                       std::to_string(*r.first_bad_seq()) + ": " +
                                       r.problems.front().what));
  }
  std::cout << "restored " << inv.positional[0] << " into " << inv.data_dir.string()
            << ": head seq=" << m->head_seq << " hash=" << to_hex(m->head_hash) << "; verify ok\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .num("head_seq", m->head_seq)
                    .str("head_hash", to_hex(m->head_hash))
                    .boolean("verified", true)
                    .done());
  return 0;
}

}  // namespace

void register_log_commands(CommandTable& r) {
  r.add({"keys init",
         "",
         "create the lab's Ed25519 signing key in the keys folder (0600)",
         "",
         {},
         0,
         0,
         keys_init});
  r.add({"blob put",
         "FILE",
         "store FILE in the content-addressed blob store and print its EvidenceRef",
         "",
         {{"kind", "KIND", "evidence kind (default file)"},
          {"id", "ID", "EvidenceRef id (default from the digest)"}},
         1,
         1,
         blob_put});
  r.add({"log append",
         "",
         "append one operator event (JSON object payload) and wait until it is durable",
         "Only the operator's own events: the type must be operator.NAME and the actor operator.\n"
         "Every other type (engine, supervisor, gate, receipt, runner, attempt, scenario,\n"
         "capabilities) is written only by the lab itself; it, or another actor, is refused with\n"
         "exit status 2 and nothing is appended. So is a stream of the lab's own (attempt/...,\n"
         "lab/...): an attempt's stream is what its receipt binds. When the lab's daemon holds\n"
         "--data, it appends the event (and checks it again).",
         {{"stream", "S", "stream name, e.g. ops/notes"},
          {"type", "T", "event type operator.NAME, e.g. operator.note"},
          {"actor", "A", "who: operator (the default, and the only one accepted)"},
          {"payload", "JSON", "payload object, or @FILE"}},
         0,
         0,
         log_append});
  r.add({"log head",
         "",
         "print the head seq and hash, and the latest checkpoint",
         "",
         {},
         0,
         0,
         log_head});
  r.add({"log verify",
         "",
         "recompute the chain, Merkle nodes, checkpoints, stream index and blobs",
         "Exit status 0 only when all is well; on failure names the first bad seq (first_bad_seq "
         "in --json).\n"
         "The public key is pinned: --pubkey FILE, or lab.pub in the keys folder; never one in the "
         "data folder.",
         {{"from", "N", "trust events before seq N (incremental audit)"},
          {"pubkey", "FILE", "pinned lab public key (default KEYS/lab.pub)"},
          {"trusted", "CHECKPOINT", "a signed checkpoint the log must extend"}},
         0,
         0,
         log_verify});
  r.add({"log dump",
         "",
         "print events as JSON lines",
         "",
         {{"from", "N", "first seq (default 1)"},
          {"to", "N", "last seq"},
          {"stream", "S", "only this stream"}},
         0,
         0,
         log_dump});
  r.add({"log tail",
         "",
         "print the newest events as JSON lines",
         "",
         {{"lines", "N", "how many (default 10)"},
          {"from", "N", "start at seq N"},
          {"follow", "", "keep printing new events"}},
         0,
         0,
         log_tail});
  r.add({"log checkpoint",
         "",
         "sign a checkpoint at the current head now",
         "",
         {},
         0,
         0,
         log_checkpoint});
  r.add({"log prove",
         "SEQ",
         "print an inclusion proof of event SEQ against the latest checkpoint",
         "",
         {{"size", "N", "use the checkpoint of this size instead"}},
         1,
         1,
         log_prove});
  r.add({"log consistency",
         "OLD_SIZE NEW_SIZE",
         "print a consistency proof between two tree sizes",
         "",
         {},
         2,
         2,
         log_consistency});
  r.add({"log check-proof",
         "FILE",
         "verify a proof printed by 'log prove' or 'log consistency', offline",
         "",
         {{"pubkey", "FILE", "pinned lab public key (default KEYS/lab.pub)"}},
         1,
         1,
         log_check_proof});
  r.add(
      {"log snapshot",
       "",
       "write a consistent, signed copy of the log and its blobs",
       "The copy is made while appends go on: a RocksDB checkpoint, then the blobs it "
       "references, then a\n"
       "signed manifest. Only the public key travels with it. When the lab's daemon holds --data,\n"
       "it makes the snapshot (the lab keeps serving).",
       {{"out", "DIR", "the snapshot folder (must not exist or be empty)"}},
       0,
       0,
       log_snapshot});
  r.add({"log restore",
         "SNAPSHOT",
         "restore a snapshot into an empty --data folder and verify it",
         "",
         {{"pubkey", "FILE", "pinned lab public key (default KEYS/lab.pub)"}},
         1,
         1,
         log_restore});
}

}  // namespace aura::cli
