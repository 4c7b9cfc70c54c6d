// `aura receipt verify`: checks an Intervention Receipt offline against a pinned lab key and,
// with --replay, against the log in --data.
#include <filesystem>
#include <iostream>
#include <optional>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "engine/blob/blob_store.h"
#include "engine/common/json_writer.h"
#include "engine/receipt/receipt.h"
#include "engine/receipt/receipt_format.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

int receipt_verify(Invocation& inv) {
  // The key is pinned by the operator: never one from the data folder or the receipt.
  auto keys = pinned_keys(inv);
  if (!keys.ok()) return inv.fail(keys.status(), 2);
  auto envelope = read_small_file(inv.positional[0], receipt::receipt_format::kMaxEnvelopeBytes);
  if (!envelope.ok()) return inv.fail(envelope.status().with_context("receipt"), 2);

  std::unique_ptr<EventLog> log;
  std::optional<BlobStore> blobs;
  std::optional<receipt::ReplayContext> replay;
  if (inv.has("replay")) {
    auto opened = open_reader(inv);
    if (!opened.ok()) return inv.fail(opened.status().with_context("--replay"));
    log = std::move(opened).value();
    // Opened only if present: replay writes nothing, and a missing store fails the replay.
    if (fs::exists(inv.data_dir / "blobs")) {
      auto b = BlobStore::open(inv.data_dir / "blobs");
      if (!b.ok()) return inv.fail(b.status().with_context("--replay"));
      blobs.emplace(std::move(b).value());
    }
    replay = receipt::ReplayContext{log.get(), blobs ? &*blobs : nullptr};
  }

  const receipt::ReceiptReport r = receipt::verify_receipt(*envelope, keys->front(), replay);
  if (!r.attempt.empty()) {
    std::cout << "receipt of attempt " << r.attempt << " (scenario " << r.scenario_id
              << "): verdict " << r.verdict << ", events seq " << r.first_seq << ".." << r.last_seq
              << ", checkpoint size " << r.checkpoint_size << "\n";
  }
  for (const auto& c : r.passed) std::cout << "  ok    " << c << "\n";
  for (const auto& f : r.failures) std::cout << "  FAIL  " << f.field << ": " << f.what << "\n";
  if (r.ok()) {
    std::cout << "ok: the receipt holds" << (r.replayed ? ", and replays from the log" : " offline")
              << "\n";
  } else {
    std::cout << "FAILED: " << r.failures.size() << " check" << (r.failures.size() == 1 ? "" : "s")
              << " did not hold\n";
  }

  JsonArray passed, failures;
  for (const auto& c : r.passed) passed.str(c);
  for (const auto& f : r.failures)
    failures.raw(JsonWriter().str("field", f.field).str("what", f.what).done());
  inv.emit_json(JsonWriter()
                    .boolean("ok", r.ok())
                    .boolean("replayed", r.replayed)
                    .str("attempt", r.attempt)
                    .str("scenario", r.scenario_id)
                    .str("verdict", r.verdict)
                    .num("first_seq", r.first_seq)
                    .num("last_seq", r.last_seq)
                    .num("checkpoint_size", r.checkpoint_size)
                    .raw("passed", passed.done())
                    .raw("failures", failures.done())
                    .done());
  return r.ok() ? 0 : 1;
}

}  // namespace

void register_receipt_commands(CommandTable& r) {
  r.add({"receipt verify",
         "RECEIPT",
         "verify an Intervention Receipt offline, and with --replay against the log",
         "Offline: the DSSE signature by the pinned lab key, the document, every section hash, the "
         "gate verdict,\n"
         "the checkpoint note and each event's inclusion proof. --replay also verifies the log in "
         "--data as\n"
         "'log verify' does, finds every bound event in it, rebuilds every section from the "
         "events and\n"
         "re-grades the recorded facts. Prints each check and each failure (field: what "
         "differs).\n"
         "Exit status 0 only when every check holds, 1 otherwise, 2 on usage errors.\n"
         "The public key is pinned: --pubkey FILE, or lab.pub in the keys folder; never one in the "
         "data folder\n"
         "or the receipt.",
         {{"pubkey", "FILE", "pinned lab public key (default KEYS/lab.pub)"},
          {"replay", "", "replay against the log and blobs in --data (opened read-only)"}},
         1,
         1,
         receipt_verify});
}

}  // namespace aura::cli
