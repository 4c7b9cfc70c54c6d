#include "workers/sandbox/profile.h"

#include "workers/sandbox/seccomp_policy.h"

namespace aura::sandbox {

Result<Profile> named_profile(std::string_view name) {
  Profile p;
  if (name == "probe") return p;
  if (name == "script") {
    p.name = "script";
    p.memory_bytes = 512ull << 20;
    p.pids_max = 128;
    p.wall_deadline_ms = 60'000;
    p.output_cap_bytes = 4u << 20;
    p.tmpfs_bytes = 128ull << 20;
    return p;
  }
  return Status::not_found("sandbox profile '" + std::string(name) +
                           "': unknown (known: probe, script)");
}

Digest profile_digest(const Profile& p) {
  // One "key=value\n" line per field, in declaration order; lists are one line per entry.
  std::string text = "aura-sandbox-profile v1\n";
  text += "name=" + p.name + "\n";
  text += "cpu_quota_us=" + std::to_string(p.cpu_quota_us) + "\n";
  text += "cpu_period_us=" + std::to_string(p.cpu_period_us) + "\n";
  text += "memory_bytes=" + std::to_string(p.memory_bytes) + "\n";
  text += "pids_max=" + std::to_string(p.pids_max) + "\n";
  text += "wall_deadline_ms=" + std::to_string(p.wall_deadline_ms) + "\n";
  text += "output_cap_bytes=" + std::to_string(p.output_cap_bytes) + "\n";
  text += "tmpfs_bytes=" + std::to_string(p.tmpfs_bytes) + "\n";
  text += "linux_caps=" + std::to_string(p.linux_caps) + "\n";
  text += "uid_base=" + std::to_string(p.uid_base) + "\n";
  text += "id_count=" + std::to_string(p.id_count) + "\n";
  text += "hostname=" + p.hostname + "\n";
  for (const std::string& l : p.lower_paths) text += "lower=" + l + "\n";
  text += seccomp_program_text();
  return sha256(text);
}

const std::string& seccomp_program_text() {
  static const std::string text = [] {
    std::string t = "seccomp_policy=" + std::to_string(kSeccompPolicyVersion) + "\n";
    auto program = build_seccomp_program();
    if (!program.ok())
      return t + "seccomp_program=unavailable: " + program.status().message() + "\n";
    std::string bytes;
    for (const sock_filter& f : program->instructions) {
      for (int i = 0; i < 2; ++i) bytes.push_back(char((f.code >> (8 * i)) & 0xff));
      bytes.push_back(char(f.jt));
      bytes.push_back(char(f.jf));
      for (int i = 0; i < 4; ++i) bytes.push_back(char((f.k >> (8 * i)) & 0xff));
    }
    t += "seccomp_instructions=" + std::to_string(program->instructions.size()) + "\n";
    t += "seccomp_program_sha256=" + to_hex(sha256(bytes)) + "\n";
    return t;
  }();
  return text;
}

}  // namespace aura::sandbox
