// The one sandbox profile type: every limit a run gets, with a default on each field. Filled
// from a scenario package or the command line alike; its digest is stamped on each run.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"

namespace aura::sandbox {

struct Profile {
  std::string name = "probe";
  // CPU time per CFS period: 100000/100000 is one CPU's worth.
  uint64_t cpu_quota_us = 100'000;
  uint64_t cpu_period_us = 100'000;
  // cgroup memory limit (swap included where the kernel accounts it); the tmpfs root counts.
  uint64_t memory_bytes = 256ull << 20;
  // cgroup pids.max: processes and threads alive at once, so a fork bomb stops here.
  uint64_t pids_max = 64;
  // Wall-clock time from start until the supervisor kills the whole run.
  uint64_t wall_deadline_ms = 10'000;
  // Bytes kept of each of stdout and stderr; the rest is read and dropped (and flagged).
  uint64_t output_cap_bytes = 1u << 20;
  // Size of the tmpfs that holds the root and every overlay's upper layer.
  uint64_t tmpfs_bytes = 64ull << 20;
  // Capabilities kept inside (bit n = CAP n, in the run's own user namespace). None by default.
  uint64_t linux_caps = 0;
  // Root inside maps to [uid_base, uid_base + id_count) outside; same for gids.
  uint32_t uid_base = 100'000;
  uint32_t id_count = 65'536;
  std::string hostname = "aura-sandbox";
  // Host paths that make the read-only lower image (same path inside). Directories become an
  // overlay (host read-only below, tmpfs above); files are bound read-only; symlinks are copied.
  // Missing paths are skipped. Never "/", never the data or key folders (run() refuses them).
  std::vector<std::string> lower_paths = {
      "/usr",
      "/bin",
      "/sbin",
      "/lib",
      "/lib32",
      "/lib64",
      "/libx32",
      "/etc/alternatives",
      "/etc/passwd",
      "/etc/group",
      "/etc/nsswitch.conf",
      "/etc/ld.so.cache",
      "/etc/localtime",
      "/etc/hosts",
  };
};

// The built-in profiles by name, for `--profile NAME` and scenario packages:
//   "probe"  — the defaults above: one CPU, 256 MiB, 64 pids, 10 s;
//   "script" — an authorised gray-path script: one CPU, 512 MiB, 128 pids, 60 s, 4 MiB output.
// kNotFound names the known ones.
Result<Profile> named_profile(std::string_view name);

// SHA-256 over a canonical text form of every field and the seccomp program itself
// (seccomp_program_text), so two runs with the same digest had the same isolation.
Digest profile_digest(const Profile& profile);

// The runner seccomp program as installed, in canonical text: "seccomp_policy=<version>",
// "seccomp_instructions=<n>" and "seccomp_program_sha256=<hex>" lines, the digest over the
// instructions serialised field by field (code u16, jt u8, jf u8, k u32, little-endian), so any
// change to the allowlist changes it. When libseccomp cannot build the program, the line says
// "seccomp_program=unavailable: <why>". Built once per process (the policy is fixed in a build).
// Thread-safe.
const std::string& seccomp_program_text();

}  // namespace aura::sandbox
