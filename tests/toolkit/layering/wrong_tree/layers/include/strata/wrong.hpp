// Wrong on purpose: the layers include nothing of the toolkit.
#pragma once
#include "strata/trace/format.hpp"
