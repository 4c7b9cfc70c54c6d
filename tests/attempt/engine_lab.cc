#include "tests/attempt/engine_lab.h"

#include <doctest/doctest.h>

#include <cstdlib>
#include <stdexcept>

namespace aura::testing {
namespace fs = std::filesystem;

void copy_t0_package(const fs::path& scenarios_dir) {
  const char* src = std::getenv("AURA_T0_PACKAGE");
  if (src == nullptr) throw std::runtime_error("AURA_T0_PACKAGE is not set (run through meson)");
  const fs::path dest = scenarios_dir / std::string(kT0);
  fs::create_directories(dest);
  fs::copy(src, dest, fs::copy_options::recursive);
  // The source tree may hold a signature made on this machine: the lab signs its own copy, as
  // committed (set-up signs only files that match the committed SHA256SUMS).
  fs::remove(dest / "package.sig.json");
}

EngineLab::EngineLab() {
  copy_t0_package(lab / "scenarios");
  package_dir = lab / "scenarios" / std::string(kT0);
  CliResult r = lab.aura({"setup", "--scenarios", (lab / "scenarios").string()});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  auto bytes = read_file(package_dir / "manifest.json");
  auto m = scenario::parse_manifest(bytes);
  REQUIRE(m.ok());
  manifest = std::move(m).value();
  reopen();
}

EngineLab::~EngineLab() { close(); }

void EngineLab::close() {
  log = nullptr;
  blobs = nullptr;
  keys = nullptr;
  engine = nullptr;
  session.reset();
}

void EngineLab::reopen() {
  auto s = app::open_session({lab.data(), lab.keys()}, {.build_digest = std::string(64, 'b')});
  REQUIRE_MESSAGE(s.ok(), s.status().message());
  session = std::move(s).value();
  log = session->writer.log.get();
  blobs = session->writer.blobs.get();
  keys = session->writer.keys.get();
  engine = session->engine.get();
}

const scenario::JudgeCase& EngineLab::judge(std::string_view name) const {
  const auto* c = manifest.find_judge(name);
  REQUIRE(c != nullptr);
  return *c;
}

std::string EngineLab::start_and_probe(std::string_view judge_case, std::string_view learner,
                                       std::string_view mode) {
  attempt::StartRequest req;
  req.learner = std::string(learner);
  req.scenario_id = std::string(kT0);
  req.mode = std::string(mode);
  req.seed = 11;
  auto id = engine->start(req);
  REQUIRE_MESSAGE(id.ok(), id.status().message());
  Status s = engine->predict(*id, learner, "stale-override", "a stale override on web2", 70);
  REQUIRE_MESSAGE(s.is_ok(), s.message());
  for (const auto& call : judge(judge_case).probe_calls_json) {
    auto p = engine->probe(*id, learner, call);
    REQUIRE_MESSAGE(p.ok(), p.status().message());
  }
  return *id;
}

std::string EngineLab::up_to_gate(std::string_view judge_case, std::string_view learner,
                                  std::string_view mode) {
  const std::string id = start_and_probe(judge_case, learner, mode);
  auto rev = engine->submit(id, learner, judge(judge_case).ir_json);
  REQUIRE_MESSAGE(rev.ok(), rev.status().message());
  auto applied = engine->apply(id, learner);
  REQUIRE_MESSAGE(applied.ok(), applied.status().message());
  Status s = engine->ack(id, learner, "");
  REQUIRE_MESSAGE(s.is_ok(), s.message());
  auto v = engine->verify(id, learner);
  REQUIRE_MESSAGE(v.ok(), v.status().message());
  return id;
}

}  // namespace aura::testing
