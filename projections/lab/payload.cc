#include "projections/lab/payload.h"

namespace aura::lab {

int64_t attempt_key(std::string_view id) {
  uint64_t v = 0;
  for (char c : id) v = (v << 4) | uint64_t(c <= '9' ? c - '0' : c - 'a' + 10);
  return static_cast<int64_t>(v);
}

}  // namespace aura::lab
