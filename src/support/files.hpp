// Whole files as strings, for the tools that read back what a child process wrote.
#pragma once
#include <string>

namespace strata::support {

// The whole content of the file at `path`; empty when it cannot be read.
std::string readFile(const std::string& path);

}  // namespace strata::support
