// The lines a library has for the user while it works ("recording ls into out/ls.trace"): the
// command passes a sink and decides where they go. A library never writes to stdout or stderr
// itself; it returns its results and errors and says what it is doing through one of these.
#pragma once
#include <functional>
#include <string>

namespace strata::support {

using Notes = std::function<void(const std::string& line)>;

}  // namespace strata::support
