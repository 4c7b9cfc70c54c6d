#include "workers/drivers.h"

namespace aura::workers {

std::unique_ptr<world::WorldDriver> make_driver(std::string_view name) {
  (void)name;
  return nullptr;
}

std::vector<std::string> driver_names() { return {}; }

}  // namespace aura::workers
