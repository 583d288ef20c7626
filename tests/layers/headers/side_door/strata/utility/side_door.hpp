// Wrong on purpose, for headers.platform_door_catches_side_doors: a layer that reads the
// environment and writes to stderr itself instead of through platform/.
#pragma once
#include <unistd.h>

#include <cstdlib>

inline void sideDoor() {
  if (std::getenv("SIDE_DOOR") != nullptr) (void)::write(2, "x", 1);
}
