// InterventionIR: the learner's typed fix. A document is parsed from untrusted JSON and
// validated against the scenario's manifest and the attempt's unlocked evidence before anything
// is applied; an Intervention exists only if every check passed. Schema and limits:
// docs/formats/intervention-ir.md.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"

namespace aura::intervention {

inline constexpr size_t kMaxIrBytes = 256 << 10;     // the whole document
inline constexpr size_t kMaxDepth = 16;              // JSON nesting
inline constexpr size_t kMaxTextBytes = 4096;        // hypothesis, falsifier, notes
inline constexpr size_t kMaxActions = 32;            // actions, and rollback actions
inline constexpr size_t kMaxEvidence = 64;           // cited evidence ids
inline constexpr size_t kMaxScriptBytes = 64 << 10;  // a gray-path script's text

// One step of the fix or of its rollback: a catalog action, or (gray path) a script.
struct Action {
  bool is_script = false;
  scenario::Call call;  // !is_script
  std::string script;   // is_script: the exact script text (run with /bin/sh in the sandbox)
  scenario::Target script_target;  // is_script: where it runs (a node role/selector/literal)
  Digest script_sha256{};          // is_script: SHA-256 of `script`; what authorisation names
};

struct Intervention {
  int version = 1;                          // "v": 1, the first member
  std::string hypothesis;                   // the hypothesis id it acts on (from the manifest)
  std::string claim;                        // the cause in the learner's words, 1..4096 bytes
  std::vector<std::string> evidence;        // cited EvidenceRef ids, 1..64, each unlocked
  std::string falsifier;                    // what observation would prove the claim wrong
  std::vector<Action> actions;              // 1..32
  std::vector<std::string> postconditions;  // check ids (kind postcondition) it promises
  std::vector<std::string> invariants;      // check ids (kind invariant) it promises to keep
  std::vector<Action> rollback;             // 1..32: how to undo `actions`
};

// The context a document is validated in.
struct IrContext {
  const scenario::Manifest* manifest = nullptr;
  std::set<std::string> unlocked_evidence;  // EvidenceRef ids unlocked in this attempt
};

// Parses and validates. Refuses, with kInvalidArgument and the JSON path ("$.actions[2].params
// .path: ..."): more than kMaxIrBytes or kMaxDepth, invalid UTF-8 or JSON, duplicate or unknown
// members, wrong types, a hypothesis not in the manifest, an evidence id not unlocked here
// (or cited twice), an empty falsifier or rollback, an action not in the action catalog or a
// parameter failing its schema (path escapes included), a script when the manifest does not
// allow scripts, postcondition/invariant ids that are not checks of that kind, and any text
// or list over its bound.
Result<Intervention> parse_intervention(std::string_view json, const IrContext& context);

// SHA-256 of the document's exact bytes: what receipts and authorisations bind.
Digest intervention_digest(std::string_view json);

// The scripts (gray path) an intervention contains, in actions then rollback order.
std::vector<const Action*> scripts_of(const Intervention& ir);

}  // namespace aura::intervention
