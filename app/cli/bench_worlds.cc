// `aura bench worlds`: what building and destroying a nodes-driver world costs (every node's
// namespaces, overlay root, layers, owners and services up and ready), against the bare world
// network of the same nodes measured in the same run, and what one probe round trip costs
// (a supervised aura-runner in a node, evidence through the writer into a scratch log).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"
#include "engine/writer/evidence_writer.h"
#include "workers/drivers.h"
#include "workers/netns/world_network.h"
#include "workers/nodes/build_spec.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

int bench_worlds(Invocation& inv) {
  auto runs = inv.get_u64("runs", 10);
  if (!runs.ok() || *runs == 0 || *runs > 1000)
    return inv.fail(Status::invalid("--runs takes 1..1000"), 2);
  if (!inv.has("package")) return inv.fail(Status::invalid("--package DIR is required"), 2);
  const fs::path package = fs::absolute(inv.get("package"));
  auto bytes = file_io::read_regular_file(package / "manifest.json", "manifest.json", 1 << 20);
  if (!bytes.ok()) return inv.fail(bytes.status());
  auto manifest = scenario::parse_manifest(*bytes);
  if (!manifest.ok()) return inv.fail(manifest.status());
  const std::string world_id = inv.get("world", manifest->primary()->id);
  const scenario::WorldSpec* spec = nullptr;
  for (const auto& w : manifest->worlds)
    if (w.id == world_id) spec = &w;
  if (spec == nullptr) return inv.fail(Status::invalid("no world \"" + world_id + "\""), 2);
  if (manifest->driver != "nodes")
    return inv.fail(Status::invalid("the package's driver is " + manifest->driver +
                                    "; bench worlds measures nodes worlds"),
                    2);
  auto build = workers::nodes::parse_build(spec->build_json, "build");
  if (!build.ok()) return inv.fail(build.status());
  std::vector<std::string> names;
  for (const auto& n : build->nodes) names.push_back(n.name);

  auto root = make_bench_root(inv, "/tmp/aura-bench-worlds-XXXXXX");
  if (!root.ok()) return inv.fail(root.status());
  // A scratch log for the probes' evidence: the data folder is never written by a bench.
  auto blobs = BlobStore::open(*root / "data" / "blobs");
  if (!blobs.ok()) return inv.fail(blobs.status());
  EventLog::Options lo;
  lo.blobs = &*blobs;
  auto log = EventLog::open(*root / "data" / "log", lo);
  if (!log.ok()) return inv.fail(log.status());
  writer::RunTokens tokens;
  world::WorldHost host;
  host.log = log->get();
  host.blobs = &*blobs;
  host.tokens = &tokens;
  host.state_dir = *root / "state";
  host.forbidden = {fs::absolute(inv.data_dir), fs::absolute(inv.keys_dir)};
  auto driver = workers::make_driver("nodes", host);
  if (Status s = driver->check_manifest(*manifest); !s.is_ok()) return inv.fail(s);
  auto probe =
      scenario::parse_call(R"({"call":"net.listening"})", manifest->probes, *manifest, "probe");
  const bool can_probe = probe.ok();

  std::cout << "bench worlds: " << *runs << " x world " << world_id << " of " << manifest->id
            << " (" << names.size() << " nodes) built, probed and destroyed; peer: the bare "
            << names.size() << "-node world network, interleaved\n";
  std::vector<double> create_ms, destroy_ms, reset_ms, probe_ms, peer_ms;
  for (uint64_t i = 0; i < *runs; ++i) {
    auto t = Clock::now();
    auto w = driver->create(package, *manifest, world_id, i, *root / ("w" + std::to_string(i)));
    if (!w.ok()) return inv.fail(w.status().with_context("run " + std::to_string(i)));
    create_ms.push_back(ms_since(t));
    (*w)->bind_attempt("00000000000000be");
    if (can_probe) {
      t = Clock::now();
      auto r = (*w)->probe(*probe, 4096);
      if (!r.ok()) return inv.fail(r.status().with_context("probe"));
      probe_ms.push_back(ms_since(t));
    }
    // A reset, as an attempt's is: the used world destroyed, a fresh one built from the package.
    t = Clock::now();
    if (Status s = driver->destroy(std::move(w).value()); !s.is_ok()) return inv.fail(s);
    destroy_ms.push_back(ms_since(t));
    auto fresh = driver->create(package, *manifest, world_id, i, *root / ("r" + std::to_string(i)));
    if (!fresh.ok()) return inv.fail(fresh.status().with_context("reset " + std::to_string(i)));
    reset_ms.push_back(ms_since(t));
    if (Status s = driver->destroy(std::move(fresh).value()); !s.is_ok()) return inv.fail(s);

    char tag[17];
    std::snprintf(tag, sizeof tag, "b%07x%08x", unsigned(::getpid()) & 0xfffffff, unsigned(i));
    t = Clock::now();
    auto net = netns::WorldNetwork::create(tag, names);
    if (!net.ok()) return inv.fail(net.status().with_context("peer world network"));
    if (Status s = net->destroy(); !s.is_ok()) return inv.fail(s);
    peer_ms.push_back(ms_since(t));
    std::cerr << "  " << (i + 1) << "/" << *runs << "\n";
  }
  std::error_code ec;
  if (!inv.has("keep")) fs::remove_all(*root, ec);

  const double c50 = percentile(create_ms, 0.5), c90 = percentile(create_ms, 0.9);
  const double d50 = percentile(destroy_ms, 0.5);
  const double r50 = percentile(reset_ms, 0.5), r90 = percentile(reset_ms, 0.9);
  const double p50 = probe_ms.empty() ? 0 : percentile(probe_ms, 0.5);
  const double n50 = percentile(peer_ms, 0.5);
  std::printf(
      "  create (nodes up, layers, owners, services ready): median %.0f ms, p90 %.0f ms\n"
      "  destroy: median %.0f ms\n"
      "  reset (destroy, then create afresh): median %.0f ms, p90 %.0f ms\n"
      "  probe net.listening on every node (supervised runner, writer, host facts): median "
      "%.1f ms%s\n"
      "  peer: bare world network create + destroy: median %.0f ms\n",
      c50, c90, d50, r50, r90, p50, can_probe ? "" : " (the package offers no net.listening probe)",
      n50);
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("scenario", manifest->id)
                    .str("world", world_id)
                    .num("nodes", uint64_t(names.size()))
                    .num("runs", *runs)
                    .real("create_median_ms", c50)
                    .real("create_p90_ms", c90)
                    .real("destroy_median_ms", d50)
                    .real("reset_median_ms", r50)
                    .real("reset_p90_ms", r90)
                    .real("probe_median_ms", p50)
                    .real("network_create_destroy_median_ms", n50)
                    .done());
  return 0;
}

}  // namespace

void register_bench_worlds_commands(CommandTable& r) {
  r.add({"bench worlds",
         "",
         "measure building, probing, resetting and destroying a nodes-driver world",
         "Builds world --world (default: the primary) of the package folder --package with the "
         "nodes driver,\nruns one net.listening probe on every node through the supervisor into a "
         "scratch log,\nresets it (destroy, then a fresh create, as an attempt's reset does) and "
         "destroys that, --runs times; interleaved with the bare world network of "
         "the same nodes as the peer.\nPrints medians (JSON: create_median_ms, create_p90_ms, "
         "destroy_median_ms, reset_median_ms, reset_p90_ms, "
         "probe_median_ms,\nnetwork_create_destroy_median_ms). Needs root. "
         "Writes nothing to the data folder.",
         {{"package", "DIR", "a scenario package folder whose driver is nodes"},
          {"world", "ID", "the world to build (default: the primary)"},
          {"runs", "N", "how many worlds (default 10)"},
          {"keep", "", "keep the scratch folder"}},
         0,
         0,
         bench_worlds});
}

}  // namespace aura::cli
