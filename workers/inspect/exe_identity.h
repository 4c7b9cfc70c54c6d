// Which program a process runs, told by content and by where the file lives, never by name: the
// file /proc/PID/exe refers to (the kernel's reference to the executable, opened from the host,
// whatever the process calls itself and wherever the file is now), hashed, with the mount it was
// run from. A renamed copy, a decoy with the same comm, or another file put at the program's path
// all differ from the image's program; so does a byte-identical copy in the node's writable
// layer, which is never the image's program (the checks compare the mount against the node's
// read-only image mounts recorded at build: workers/nodes).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "engine/common/status.h"

namespace aura::inspect {

struct ExeFile {
  std::string digest;   // SHA-256 (64 hex) of its bytes
  uint64_t mnt_id = 0;  // the mount it was run from (statx STATX_MNT_ID; ids are system-wide)
};

// The executable of host process `pid`. kNotFound when the process is gone (or is a kernel
// thread). Digests are cached by mount, device, inode, size, mtime and ctime: ctime is the
// kernel's alone (no call sets it), so a file rewritten in place with its size and mtime kept
// is hashed again. Thread-safe.
Result<ExeFile> exe_file(pid_t pid);

// SHA-256 (64 hex) of the regular file at `path` on the host, opened without following a
// symlink in its last component. kInvalidArgument for anything but a regular file.
Result<std::string> file_digest(const std::filesystem::path& path);

}  // namespace aura::inspect
