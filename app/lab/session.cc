#include "app/lab/session.h"

#include <fstream>
#include <sstream>

#include "engine/crypto/sha256.h"
#include "workers/drivers.h"
#include "workers/supervisor/supervisor.h"

namespace aura::app {
namespace fs = std::filesystem;

std::string lab_build_digest() {
  // /proc/self/exe is a link to the binary: followed here on purpose.
  std::ifstream in("/proc/self/exe", std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in.good() && !in.eof()) return std::string();
  const std::string b = bytes.str();
  return b.empty() ? std::string() : to_hex(sha256(b));
}

Result<std::unique_ptr<Session>> open_session(const LabFolders& f, SessionOptions o) {
  auto trust = publisher_trust(f.keys);
  if (!trust.ok()) return trust.status();
  auto writer = open_writer(f);
  if (!writer.ok()) return writer.status();
  auto session = std::make_unique<Session>(std::move(writer).value(), std::move(trust).value());
  attempt::EngineContext ctx;
  ctx.log = session->writer.log.get();
  ctx.blobs = session->writer.blobs.get();
  ctx.trust = &session->trust;
  ctx.lab_signer = &session->writer.keys->lab_signer();
  ctx.worlds_dir = f.data / "worlds";
  // Worlds that run processes keep their leak ledger and stage folders beside the sandbox's;
  // what a dead earlier process left there is reaped (and recorded) before anything starts.
  world::WorldHost host;
  host.log = ctx.log;
  host.blobs = ctx.blobs;
  host.tokens = &session->tokens;
  host.state_dir = fs::absolute(f.data / "sandbox");
  host.forbidden = {fs::absolute(f.data), fs::absolute(f.keys)};
  if (auto reaped = supervisor::reap_and_record(host.state_dir, *ctx.log); !reaped.ok())
    return reaped.status().with_context("reaping what an earlier supervisor left");
  ctx.drivers = [host](std::string_view name) { return workers::make_driver(name, host); };
  ctx.lab_build_digest = o.build_digest;
  ctx.persist_live_worlds = o.persist_live_worlds;
  session->context = ctx;
  session->engine = std::make_unique<attempt::AttemptEngine>(std::move(ctx));
  return session;
}

}  // namespace aura::app
