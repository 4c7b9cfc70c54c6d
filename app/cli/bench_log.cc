// `aura bench log`: append throughput and latency, verify speed, and in the same run
// the physical limits they are compared with (raw synced RocksDB batches, raw SHA-256
// on all cores over the same bytes). Timings are printed, never asserted.
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <map>
#include <thread>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "engine/common/json_writer.h"
#include "engine/events/event_types.h"
#include "engine/keys/key_store.h"
#include "engine/log/event_codec.h"
#include "engine/log/event_log.h"
#include "engine/log/log_verifier.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A ~300-byte payload that differs per event, as a probe result would.
EventDraft sample_event(uint64_t i) {
  std::string note(180, 'x');
  for (size_t k = 0; k < note.size(); ++k) note[k] = char('a' + (i * 31 + k * 7) % 26);
  return {"attempt/bench-" + std::to_string(i % 97), events::kProbeCompleted, "supervisor",
          R"({"probe":"http.get","node":"web-)" + std::to_string(i % 3) +
              R"(","status":200,"bytes":)" + std::to_string(1000 + i % 5000) + R"(,"seq_hint":)" +
              std::to_string(i) + R"(,"note":")" + note + R"("})"};
}

struct Phase {
  uint64_t events = 0;
  double seconds = 0;
  double per_s() const { return seconds > 0 ? double(events) / seconds : 0; }
};

// Runs `appenders` threads appending single events until `budget_s` passes or
// `max_events` are in. Latencies (µs) are collected when `lat` is given.
Result<Phase> run_appenders(EventLog& log, unsigned appenders, double budget_s, uint64_t max_events,
                            uint64_t& counter, std::vector<double>* lat) {
  std::atomic<uint64_t> next{counter};
  const uint64_t stop_at = counter + max_events;
  std::atomic<bool> failed{false};
  Status first_error;
  std::mutex mu;
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::duration<double>(budget_s);
  std::vector<std::thread> threads;
  std::vector<std::vector<double>> lats(appenders);
  for (unsigned t = 0; t < appenders; ++t) {
    threads.emplace_back([&, t] {
      while (!failed && Clock::now() < deadline) {
        uint64_t i = next.fetch_add(1);
        if (i >= stop_at) break;
        EventDraft d = sample_event(i);
        auto a0 = Clock::now();
        auto r = log.append(d);
        if (lat)
          lats[t].push_back(std::chrono::duration<double, std::micro>(Clock::now() - a0).count());
        if (!r.ok()) {
          std::lock_guard l(mu);
          first_error = r.status();
          failed = true;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  Phase p;
  p.seconds = seconds_since(t0);
  if (failed) return first_error;
  p.events = log.head().seq - (counter);
  counter = log.head().seq;
  if (lat) {
    for (auto& v : lats) lat->insert(lat->end(), v.begin(), v.end());
  }
  return p;
}

int bench_log(Invocation& inv) {
  auto events_target = inv.get_u64("events", 1000000);
  if (!events_target.ok()) return inv.fail(events_target.status(), 2);
  const double phase_s = 4.0;
  const bool keep = inv.has("keep");
  auto bench_dir = make_bench_root(inv, "/tmp/aura-bench-XXXXXX");
  if (!bench_dir.ok()) return inv.fail(bench_dir.status());
  const fs::path root = *bench_dir;
  auto cleanup = [&] {
    if (!keep) fs::remove_all(root);
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  auto say = [&](const std::string& s) {
    if (!inv.json) std::cerr << s << std::endl;
  };

  // The bytes every phase works on: the records of the sample events.
  std::vector<std::string> records;
  const size_t kSamples = 4096;
  for (size_t i = 0; i < kSamples; ++i) {
    records.push_back(encode_record(i + 1, Digest{}, 0, sample_event(i), nullptr));
  }
  size_t total_bytes = 0;
  for (auto& r : records) total_bytes += r.size();
  const double record_bytes = double(total_bytes) / double(records.size());

  // 1. Raw SHA-256 on all cores over the same record bytes.
  say("raw SHA-256 on " + std::to_string(cores) + " cores ...");
  std::atomic<uint64_t> hashed{0};
  std::atomic<uint8_t> hash_sink{0};
  {
    auto t0 = Clock::now();
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < cores; ++t) {
      ts.emplace_back([&, t] {
        uint64_t n = 0;
        uint8_t sink = 0;
        while (seconds_since(t0) < 2.0) {
          for (size_t i = t; i < records.size(); i += cores) {
            sink ^= sha256(records[i])[0];
            ++n;
          }
        }
        hash_sink ^= sink;  // keeps the hashing observable to the optimiser
        hashed += n;
      });
    }
    for (auto& t : ts) t.join();
    hashed = uint64_t(double(hashed) / seconds_since(t0));
  }
  const double raw_sha = double(hashed.load());

  // 2. Raw RocksDB: synced batches of 64 of the same records, no hashing.
  say("raw RocksDB synced batches of 64 ...");
  Phase raw;
  {
    rocksdb::Options o;
    o.create_if_missing = true;
    rocksdb::DB* db = nullptr;
    auto s = rocksdb::DB::Open(o, (root / "raw-rocksdb").string(), &db);
    if (!s.ok()) {
      cleanup();
      return inv.fail(Status::io("raw rocksdb: " + s.ToString()));
    }
    rocksdb::WriteOptions wo;
    wo.sync = true;
    auto t0 = Clock::now();
    uint64_t seq = 0;
    while (seconds_since(t0) < phase_s / 2) {
      rocksdb::WriteBatch b;
      for (int i = 0; i < 64; ++i, ++seq) b.Put(seq_key(seq + 1), records[seq % records.size()]);
      if (!db->Write(wo, &b).ok()) break;
    }
    raw.seconds = seconds_since(t0);
    raw.events = seq;
    delete db;
    fs::remove_all(root / "raw-rocksdb");
  }

  // 3. The event log with 1, 8 and 64 appenders.
  auto keys = KeyStore::init(root / "keys");
  if (!keys.ok()) {
    cleanup();
    return inv.fail(keys.status());
  }
  EventLog::Options lo;
  lo.signer = &keys->lab_signer();
  auto log = EventLog::open(root / "data" / "log", lo);
  if (!log.ok()) {
    cleanup();
    return inv.fail(log.status());
  }
  uint64_t counter = 0;
  std::vector<double> lat;
  std::map<unsigned, Phase> appends;
  std::map<unsigned, double> group_size;
  for (unsigned n : {1u, 8u, 64u}) {
    say("appends with " + std::to_string(n) + " appenders ...");
    const EventLog::Stats before = (*log)->stats();
    // Each timed phase may use a quarter of --events; the rest is filled below.
    const uint64_t room = *events_target - std::min(*events_target, counter);
    auto p = run_appenders(**log, n, n == 1 ? phase_s / 2 : phase_s,
                           std::min(room, std::max<uint64_t>(1, *events_target / 4)), counter,
                           n == 1 ? &lat : nullptr);
    if (!p.ok()) {
      cleanup();
      return inv.fail(p.status());
    }
    appends[n] = *p;
    const EventLog::Stats after = (*log)->stats();
    group_size[n] = double(after.events - before.events) /
                    double(std::max<uint64_t>(1, after.groups - before.groups));
  }

  // 4. Fill up to the target size with batched appends (not a headline figure).
  Phase fill;
  if (counter < *events_target) {
    say("filling to " + std::to_string(*events_target) + " events ...");
    auto t0 = Clock::now();
    std::atomic<uint64_t> next{counter};
    std::vector<std::thread> ts;
    std::atomic<bool> failed{false};
    for (unsigned t = 0; t < 8; ++t) {
      ts.emplace_back([&] {
        std::vector<EventDraft> batch;
        for (;;) {
          uint64_t i = next.fetch_add(256);
          if (i >= *events_target || failed) break;
          batch.clear();
          for (uint64_t k = i; k < std::min(*events_target, i + 256); ++k)
            batch.push_back(sample_event(k));
          if (!(*log)->append_all(batch).ok()) failed = true;
        }
      });
    }
    for (auto& t : ts) t.join();
    fill.seconds = seconds_since(t0);
    fill.events = (*log)->head().seq - counter;
    counter = (*log)->head().seq;
    if (failed) {
      cleanup();
      return inv.fail(Status::io("fill failed"));
    }
  }
  auto ck = (*log)->checkpoint();
  if (!ck.ok()) {
    cleanup();
    return inv.fail(ck.status());
  }

  // 5. Verify everything just written, as an auditor would: the log closed, then
  // opened read-only.
  log->reset();
  EventLog::Options ro;
  ro.read_only = true;
  auto audit = EventLog::open(root / "data" / "log", ro);
  if (!audit.ok()) {
    cleanup();
    return inv.fail(audit.status());
  }
  say("verify " + std::to_string(counter) + " events ...");
  VerifyOptions vo;
  vo.keys = {keys->lab_verifier()};
  VerifyReport vr = verify_log(**audit, vo);
  audit->reset();
  if (!vr.ok()) {
    cleanup();
    return inv.fail(Status::corruption("verify of the bench log failed at seq " +
                                       std::to_string(*vr.first_bad_seq()) + ": " +
                                       vr.problems.front().what));
  }
  const double verify_eps = double(vr.events_checked) / vr.seconds;
  const double verify_mbs = double(vr.bytes_checked) / vr.seconds / 1e6;

  const double p50 = percentile(lat, 0.50), p99 = percentile(lat, 0.99);
  std::printf("aura bench log: %llu events of ~%.0f bytes, %u cores\n", (unsigned long long)counter,
              record_bytes, cores);
  std::printf("  %-40s %12s\n", "phase", "events/s");
  for (auto& [n, p] : appends) {
    std::printf("  %-40s %12.0f  (%.1f events per group commit)\n",
                ("append, " + std::to_string(n) + " appenders").c_str(), p.per_s(), group_size[n]);
  }
  std::printf("  %-40s %12.0f\n", "raw RocksDB synced batches of 64", raw.per_s());
  std::printf("  %-40s %12.0f  (%.0f%% of raw RocksDB)\n", "append, 64 appenders vs raw",
              appends[64].per_s(), 100.0 * appends[64].per_s() / std::max(1.0, raw.per_s()));
  std::printf("  %-40s %12.0f  (%.1f MB/s, %.0f%% of raw SHA-256)\n", "verify (parallel)",
              verify_eps, verify_mbs, 100.0 * verify_eps / std::max(1.0, raw_sha));
  std::printf("  %-40s %12.0f\n", ("raw SHA-256 on " + std::to_string(cores) + " cores").c_str(),
              raw_sha);
  if (fill.events) std::printf("  %-40s %12.0f\n", "fill (append_all, 256 per call)", fill.per_s());
  std::printf("  single-append latency: p50 %.0f us, p99 %.0f us\n", p50, p99);
  if (keep) {
    std::printf("  kept: --data %s --keys %s\n", (root / "data").c_str(), (root / "keys").c_str());
  }
  inv.emit_json(JsonWriter()
                    .num("events", counter)
                    .real("record_bytes", record_bytes)
                    .num("cores", cores)
                    .raw("appends_per_s", JsonWriter()
                                              .real("1", appends[1].per_s())
                                              .real("8", appends[8].per_s())
                                              .real("64", appends[64].per_s())
                                              .done())
                    .real("raw_rocksdb_per_s", raw.per_s())
                    .real("append_p50_us", p50)
                    .real("append_p99_us", p99)
                    .real("verify_events_per_s", verify_eps)
                    .real("verify_mb_per_s", verify_mbs)
                    .real("raw_sha256_events_per_s", raw_sha)
                    .real("fill_events_per_s", fill.per_s())
                    .done());
  cleanup();
  return 0;
}

}  // namespace

void register_bench_commands(CommandTable& r) {
  r.add({"bench log",
         "",
         "measure appends, latency and verify against raw RocksDB and raw SHA-256",
         "Phases are time-boxed (the whole run stays under a minute on 2 cores). Figures are "
         "printed,\n"
         "never asserted; record them in docs/PERFORMANCE.md with this command.",
         {{"events", "N", "size of the log to build and verify (default 1000000)"},
          {"keep", "DIR", "keep the log in DIR/data and its keys in DIR/keys"}},
         0,
         0,
         bench_log});
}

}  // namespace aura::cli
