// The Python the plot scripts run with, and where the scripts are; shared by `strata compare`
// (plots.py) and `strata tune` (tune_plot.py).
#pragma once
#include <optional>
#include <string>
#include <string_view>

namespace strata::support {

// $STRATA_PYTHON when set, else /usr/bin/python3 (where Debian's python3-matplotlib is), else
// python3 in PATH: the first that imports matplotlib; nullopt when none does.
std::optional<std::string> findPython();

}  // namespace strata::support
