// The bounds parse_manifest() applies to manifest.json: every count, byte length, number and
// nesting depth it accepts. docs/SCENARIOS.md lists the same values; change both together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/package/package_format.h"
#include "engine/scenario/call.h"

namespace aura::scenario::manifest_format {

// "schema": the first member of manifest.json.
inline constexpr int64_t kSchemaVersion = 1;

// The whole document, and how deeply arrays and objects may nest in it (the root is level 1;
// a judge IR sits at level 4 and may nest 16 levels of its own).
inline constexpr size_t kMaxManifestBytes = package_format::kMaxManifestBytes;
inline constexpr size_t kMaxDepth = 24;

// Top level.
inline constexpr size_t kMaxBriefingBytes = 8192;
inline constexpr size_t kMaxDriverBytes = 32;  // [a-z][a-z0-9_-]{0,31}
inline constexpr int64_t kMinProbeBudget = 1;
inline constexpr int64_t kMaxProbeBudget = 1000;
inline constexpr uint32_t kDefaultProbeBudget = 10;

// "requires": each list of capability ids (capability_ids.h) holds at most this many.
inline constexpr size_t kMaxRequiredCapabilities = 64;

// Free text: descriptions, summaries and hypothesis texts.
inline constexpr size_t kMaxDescriptionBytes = 1024;
inline constexpr size_t kMaxSummaryBytes = 256;
inline constexpr size_t kMaxHypothesisTextBytes = 1024;

// Hypotheses: 2..16, ids [a-z][a-z0-9_-]{0,31}.
inline constexpr size_t kMinHypotheses = 2;
inline constexpr size_t kMaxHypotheses = 16;
inline constexpr size_t kMaxHypothesisIdBytes = 32;

// Targets: names [a-z][a-z0-9_-]{0,63}, kinds [a-z][a-z0-9_-]{0,31}.
inline constexpr size_t kMaxTargets = 64;
inline constexpr size_t kMaxTargetNameBytes = 64;
inline constexpr size_t kMaxTargetKindBytes = 32;
inline constexpr int64_t kMaxMatches = 1024;

// Worlds: ids [a-z][a-z0-9_-]{0,63}; 3..32 (one primary, one control, at least one twin).
inline constexpr size_t kMinWorlds = 3;
inline constexpr size_t kMaxWorlds = 32;
inline constexpr size_t kMaxWorldIdBytes = 64;
inline constexpr size_t kMaxBuildBytes = 64 << 10;  // the minified "build" object

// Catalogs. Call names: [a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+, at most 64 bytes.
inline constexpr size_t kMaxProbes = 64;
inline constexpr size_t kMaxActions = 64;
inline constexpr size_t kMaxCallNameBytes = 64;
inline constexpr int64_t kMaxProbeCost = 100;
inline constexpr int64_t kMaxProbeOutputBytes = 1 << 20;

// Parameter schemas: names [a-z][a-z0-9_]{0,31}.
inline constexpr size_t kMaxParams = 32;
inline constexpr size_t kMaxParamNameBytes = 32;
inline constexpr int64_t kMaxStringBytes = 65536;  // string max_bytes
inline constexpr int64_t kMaxPathBytes = 4096;     // path max_bytes
inline constexpr size_t kMaxEnumValues = 64;
inline constexpr size_t kMaxPrefixes = 16;
inline constexpr int64_t kMaxLiteralBytes = 1024;  // target max_literal_bytes
inline constexpr uint32_t kModeBits = 07777;

// Checks: ids [a-z][a-z0-9_.-]{0,63}; "world.fingerprint" is the gate's own and reserved.
inline constexpr size_t kMaxChecks = 64;
inline constexpr size_t kMaxCheckIdBytes = 64;
inline constexpr size_t kMaxCheckParamsBytes = 16 << 10;  // the minified "params" object
inline constexpr std::string_view kReservedCheckId = "world.fingerprint";
// Every check id under "world." is the gate's own (world.fingerprint, world.changes).
inline constexpr std::string_view kReservedCheckPrefix = "world.";

// The change surface: rules per list, patterns per rule, bytes per pattern.
// Policies (Manifest::policies).
inline constexpr size_t kMaxPolicies = 32;
inline constexpr size_t kMaxPolicyNameBytes = 64;  // [a-z][a-z0-9_-]{0,63}
inline constexpr size_t kMaxPolicyParams = 16;     // members of a policy's "params"

inline constexpr size_t kMaxSurfaceRules = 64;
inline constexpr size_t kMaxSurfacePaths = 32;
inline constexpr size_t kMaxSurfacePatternBytes = 256;
inline constexpr size_t kMaxSurfaceNameBytes = 64;

// Judge cases: each probe call as its minified text, and the IR.
inline constexpr size_t kMaxJudgeProbes = 16;
inline constexpr size_t kMaxJudgeProbeBytes = kMaxCallJsonBytes;
inline constexpr size_t kMaxJudgeIrBytes = 256 << 10;

static_assert(kMaxPathBytes <= kMaxStringBytes);
static_assert(kMaxBuildBytes < kMaxManifestBytes && kMaxJudgeIrBytes < kMaxManifestBytes);
static_assert(kMinWorlds == 3, "one primary, one twin and one control at least");

}  // namespace aura::scenario::manifest_format
