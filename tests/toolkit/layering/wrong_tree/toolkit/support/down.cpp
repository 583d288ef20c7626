// Wrong on purpose: support is below cli, and a bare name does not say whose header it is.
#include "cli/command_table.hpp"
#include "command_table.hpp"
