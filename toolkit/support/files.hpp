// Files for the tools: whole files as strings (what a child process wrote), and the names of
// output files.
#pragma once
#include <string>
#include <string_view>

namespace strata::support {

// The whole content of the file at `path`; empty when it cannot be read.
std::string readFile(const std::string& path);

// The whole content of the file at `path`; throws support::Error "PATH: cannot read: REASON".
std::string readWholeFile(const std::string& path);

// Writes `text` to `path` whole: into a temporary file beside it, renamed over it, so a reader
// never sees half a file and an interrupted write leaves the old one. Throws support::Error
// "PATH: cannot write: REASON".
void writeFileAtomically(const std::string& path, std::string_view text);

// Why the file at `path` cannot be read as a regular file ("No such file or directory", "not a
// regular file", "Permission denied"); empty when it can.
std::string unreadable(const std::string& path);

// `s` usable as a file name: letters, digits, '.', '_' and '-' kept, anything else '_';
// "trace" when `s` is empty.
std::string fileSafe(std::string_view s);

// The last component of a path, trailing slashes ignored ("a/b/prog" -> "prog", "a/b/" -> "b"):
// what a command's output files are named after.
std::string baseName(std::string_view path);

}  // namespace strata::support
