// Placeholder: implemented by issue 5 work in progress.
#include "replay_runner.hpp"
