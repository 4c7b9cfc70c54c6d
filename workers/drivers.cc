#include "workers/drivers.h"

#include "workers/filetree/filetree_driver.h"

namespace aura::workers {

std::unique_ptr<world::WorldDriver> make_driver(std::string_view name) {
  if (name == filetree::kDriverName) return std::make_unique<filetree::FiletreeDriver>();
  return nullptr;
}

std::vector<std::string> driver_names() { return {std::string(filetree::kDriverName)}; }

}  // namespace aura::workers
