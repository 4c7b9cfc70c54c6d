// How a long-running service (the daemon, the front) asks glibc's allocator to give memory back:
// requests of a megabyte come and go in bursts, and glibc's defaults keep what a burst freed.
#pragma once

#include <cstdint>
#include <string_view>

namespace aura {

// Allocations of 128 KiB and more are mapped on their own and unmapped when freed (glibc
// otherwise raises that threshold as large blocks are freed, and later ones then come from its
// heaps, where freed memory stays), and at most four heaps serve the threads (glibc's default
// is eight per core, each keeping what was freed in it). Call once at start, before threads.
void bound_allocator();

// Hands the allocator's free memory back to the system (malloc_trim): after a burst.
void release_free_memory();

// A /proc/meminfo field ("MemTotal", "MemAvailable") in bytes; 0 when it cannot be read.
uint64_t meminfo_bytes(std::string_view field);

}  // namespace aura
