// The world drivers this build has, by the name a manifest's "driver" field uses.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/world/world_driver.h"

namespace aura::workers {

// A new driver for `name`, or nullptr if this build has no such driver.
std::unique_ptr<world::WorldDriver> make_driver(std::string_view name);
// The same, configured with what it needs from the engine (WorldDriver::configure).
std::unique_ptr<world::WorldDriver> make_driver(std::string_view name,
                                                const world::WorldHost& host);

// The names make_driver() knows, sorted.
std::vector<std::string> driver_names();

}  // namespace aura::workers
