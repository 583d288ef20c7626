// Whole files as strings (files.hpp).
#include "support/files.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "support/error.hpp"

namespace strata::support {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string readWholeFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw Error(path + ": cannot read: " + std::strerror(errno));
  std::string text;
  char buf[65536];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  std::fclose(f);
  if (failed) throw Error(path + ": cannot read: " + std::strerror(err));
  return text;
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

std::string unreadable(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (::access(path.c_str(), R_OK) != 0) return std::strerror(errno);
  return {};
}

std::string fileSafe(std::string_view s) {
  std::string out;
  for (const char c : s) {
    const bool keep =
        std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    out += keep ? c : '_';
  }
  return out.empty() ? std::string("trace") : out;
}

}  // namespace strata::support
