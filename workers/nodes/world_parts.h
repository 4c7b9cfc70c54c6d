// What the files of NodesWorld share: its limits and deadlines, the image and environment every
// node gets, and the holder process. Internal to the nodes driver: nodes_world.cc (life and
// policy), world_holder.cc, world_state.cc, world_build.cc, world_targets.cc, world_runs.cc and
// world_checks.cc each hold one seam of the world.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "workers/nodes/nodes_world.h"

namespace aura::workers::nodes {

inline constexpr std::string_view kStateFile = "world.json";
inline constexpr std::string_view kStateMagic = "aura-nodes-world 1";
// Runaway guards, never speed bars: a grade must not depend on how fast or busy the machine is.
// Each is many times what its step takes on an idle 2-core machine (a service is ready in well
// under a second, a converge of three nodes takes seconds), so a machine several times slower
// and loaded still finishes well inside it.
inline constexpr auto kReadyTimeout = std::chrono::seconds(60);
inline constexpr auto kBuildStepDeadline = std::chrono::seconds(120);
inline constexpr auto kProbeDeadline =
    std::chrono::seconds(200);  // past the runner's 180 s tool limit
inline constexpr auto kActionDeadline = std::chrono::seconds(300);
inline constexpr size_t kScriptOutputCap = 64 << 10;
// Where a node sees each of its own layers (read-only) while the build copies them onto its root.
inline constexpr std::string_view kLayerMount = "/aura/pkg/";
inline constexpr size_t kAccountsCap = 64 << 10;  // a node's /etc/passwd or /etc/group
// Each node's own cgroup (its services and the lab's setup); calls get groups of their own.
inline constexpr uint64_t kNodeMemoryBytes = 512ull << 20;
inline constexpr uint64_t kNodePidsMax = 512;

// The read-only image every node is made from: programs and libraries, never the host's /etc
// beyond what the dynamic loader and name lookups need (a node's users and groups come from
// its package layers).
const std::vector<std::string>& image();
const std::vector<std::string>& base_env();
std::string random_hex(size_t bytes);
std::string shell_quote(std::string_view s);

// world_holder.cc. Starts aura-holder (holder_main.cc) with the read end of a fresh pipe as its
// fd 3; end_holder kills it (if it is still the one started) and reaps it.
Result<Holder> start_holder(const std::filesystem::path& state_dir);
void end_holder(Holder& h);

}  // namespace aura::workers::nodes
