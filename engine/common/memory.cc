#include "engine/common/memory.h"

#include <malloc.h>

namespace aura {

void bound_allocator() {
  (void)::mallopt(M_MMAP_THRESHOLD, 128 * 1024);
  (void)::mallopt(M_ARENA_MAX, 4);
}

void release_free_memory() { (void)::malloc_trim(0); }

}  // namespace aura
