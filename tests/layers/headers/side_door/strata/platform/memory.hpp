// The fixture's platform layer: what is here may call the kernel.
#pragma once
#include <sys/mman.h>
