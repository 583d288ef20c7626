// Wrong on purpose: support is below cli.
#include "command_table.hpp"
