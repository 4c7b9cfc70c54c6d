// A session: the data folder opened as its writer, the publisher trust store, and an attempt
// engine over them with the world drivers wired to this lab's supervisor state (what a dead
// earlier process left is reaped, and recorded, before anything starts). Every front end
// (the CLI's commands, `aura serve`) opens its engine here.
#pragma once

#include <memory>
#include <string>

#include "app/lab/folders.h"
#include "engine/attempt/attempt_engine.h"
#include "engine/writer/evidence_writer.h"

namespace aura::app {

struct SessionOptions {
  // The lab_build_digest receipts bind (hex SHA-256; lab_build_digest() for the running
  // binary); empty: this session issues no receipt.
  std::string build_digest;
  // False when this one process owns every attempt it starts (the judge): its live worlds
  // end with it instead of persisting for later commands.
  bool persist_live_worlds = true;
};

struct Session {
  Session(Writer w, TrustStore t) : writer(std::move(w)), trust(std::move(t)) {}
  Writer writer;
  TrustStore trust;
  writer::RunTokens tokens;
  std::unique_ptr<attempt::AttemptEngine> engine;
  // What `engine` was made with: another engine on the same log, blobs and drivers (the
  // daemon's judge engine) is made from it.
  attempt::EngineContext context;
  std::unique_ptr<attempt::AttemptEngine> new_engine() const {
    return std::make_unique<attempt::AttemptEngine>(context);
  }
};

Result<std::unique_ptr<Session>> open_session(const LabFolders& f, SessionOptions o = {});

// SHA-256 (hex) of the running binary: the receipts' lab_build_digest; empty when it cannot be
// read (a receipt is then refused: it never binds a placeholder).
std::string lab_build_digest();

}  // namespace aura::app
