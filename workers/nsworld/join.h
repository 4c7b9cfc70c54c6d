// Joining a world node from a program the host loaded (Node::exec with
// ExecOptions::host_program): the supervisor's fork joins only the call's cgroup and execve's the
// host's copy of the program (the host's loader and libraries, nothing of the node read before
// main); the program joins the node itself, first thing in main, through the descriptors below.
// Invariant: the process is non-dumpable, holds only stdio and the writer, and has its node
// credentials, capabilities and seccomp filter before any process of it is visible in the node.
// Linked into aura-runner: only libc, no allocation in join_node(). Contract: docs/RUNNER.md.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>

namespace aura::nsworld {

// The descriptors a host program started by Node::exec(host_program) gets: 0..2 stdio, 3 the
// writer socket (or nothing), then these; every other descriptor is closed.
inline constexpr int kJoinNsFirstFd = 4;  // 4..9: /proc/<init>/ns/{net,user,mnt,uts,ipc,pid}
inline constexpr int kJoinNsCount = 6;
inline constexpr int kJoinRootFd = 10;  // /proc/<init>/root, a directory
inline constexpr int kJoinSpecFd = 11;  // a memfd holding the join spec (below)
inline constexpr int kJoinLastFd = kJoinSpecFd;
// Set (to "1") in the program's environment exactly when the descriptors above are there.
inline constexpr char kJoinEnv[] = "AURA_NODE_JOIN";

// The join spec, written by the supervisor: u32 version (1), u32 filter length n (1..4096),
// u64 capabilities kept (bit n = CAP n), then n struct sock_filter (the seccomp program), all
// native-endian. It is the supervisor's own data: the node never sees it.
inline constexpr uint32_t kJoinSpecVersion = 1;
inline constexpr size_t kJoinSpecHeaderBytes = 16;
inline constexpr uint32_t kJoinMaxFilter = 4096;

// Writes the spec to `fd` (a fresh memfd) and rewinds it. 0 or errno.
int write_join_spec(int fd, uint64_t keep_caps, const sock_filter* filter, size_t count);

// What join_node() failed at, for the one line the program prints before it exits.
struct JoinFailure {
  const char* step = nullptr;  // null: no failure
  int err = 0;
};

// Called first thing in main by a program Node::exec(host_program) started (kJoinEnv set): makes
// the process non-dumpable, reads the spec, joins the node's namespaces (net, user, mnt, uts,
// ipc, pid) and root, closes every descriptor but 0..2 and `keep_fd`, becomes the node's root,
// makes itself non-dumpable again (a uid change resets it to fs.suid_dumpable), keeps only the
// spec's capabilities, sets no_new_privs and installs the spec's seccomp filter, and only then
// forks: a PID namespace applies to children, so the child is the first of this program the node
// can see. Returns in that child (failure.step null); the parent, never visible in the node, waits
// for it and exits with its exit code (128 + the signal that killed it). On a failure before the
// fork it returns with `failure` set: the caller prints it and exits.
// REQUIRES: single-threaded (setns into a user namespace demands it).
void join_node(int keep_fd, JoinFailure& failure);

}  // namespace aura::nsworld
