// Placeholder: implemented by issue 5 work in progress.
#include "trace_stats.hpp"
