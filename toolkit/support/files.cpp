// Whole files as strings (files.hpp).
#include "files.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "error.hpp"

namespace strata::support {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void writeFileAtomically(const std::string& path, std::string_view text) {
  // The temporary file is hidden, in the same folder (a rename within one file system).
  const std::size_t slash = path.rfind('/');
  const std::string folder = slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
  const std::string temp = folder + "." + path.substr(folder.size()) + ".tmp-" + std::to_string(::getpid());
  const auto fail = [&](int err) {
    std::remove(temp.c_str());
    throw Error(path + ": cannot write: " + std::strerror(err));
  };
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (f == nullptr) throw Error(path + ": cannot write: " + std::strerror(errno));
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int writeErr = errno;
  if (std::fclose(f) != 0 || !written) fail(written ? errno : writeErr);
  if (std::rename(temp.c_str(), path.c_str()) != 0) fail(errno);
}

std::string baseName(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

}  // namespace strata::support
