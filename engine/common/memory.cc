#include "engine/common/memory.h"

#include <malloc.h>

#include <fstream>
#include <sstream>
#include <string>

namespace aura {

void bound_allocator() {
  (void)::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  (void)::mallopt(M_ARENA_MAX, 4);
}

void release_free_memory() { (void)::malloc_trim(0); }

uint64_t meminfo_bytes(std::string_view field) {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.size() > field.size() && line.compare(0, field.size(), field) == 0 &&
        line[field.size()] == ':') {
      uint64_t kib = 0;
      std::istringstream(line.substr(field.size() + 1)) >> kib;
      return kib * 1024;
    }
  }
  return 0;
}

}  // namespace aura
