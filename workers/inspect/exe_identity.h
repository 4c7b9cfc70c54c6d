// Which program a process runs, told by content, not by name: the file /proc/PID/exe refers to
// (the kernel's reference to the executable, opened from the host, whatever the process calls
// itself and wherever the file is now), hashed. A renamed copy, a decoy with the same comm, or
// another file put at the program's path all differ from the image's program.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "engine/common/status.h"

namespace aura::inspect {

// SHA-256 (64 hex) of the executable of host process `pid`. kNotFound when the process is gone
// (or is a kernel thread). Digests are cached by the file's device, inode, size and mtime, so a
// check over many processes of one program hashes it once. Thread-safe.
Result<std::string> exe_digest(pid_t pid);

// SHA-256 (64 hex) of the regular file at `path` on the host, opened without following a
// symlink in its last component. kInvalidArgument for anything but a regular file.
Result<std::string> file_digest(const std::filesystem::path& path);

}  // namespace aura::inspect
