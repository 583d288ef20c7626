// Whole files as strings (files.hpp).
#include "files.hpp"

#include <fstream>
#include <iterator>

namespace strata::support {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace strata::support
