// TraceFile (trace_file.hpp): a TraceWriter writing to a file, with exceptions naming it.
#include "tracetools/trace_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "support/error.hpp"

namespace strata::tracetools {
namespace {

// Opens `path` for writing a trace, or throws naming it.
int openForWriting(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw support::Error(path + ": cannot create: " + std::strerror(errno));
  return fd;
}

}  // namespace

TraceFile::TraceFile(const std::string& path, WithSites sites, ChunkCompression compression)
    : path_(path), fd_(openForWriting(path)), buffer_(std::size_t{1} << 20),
      siteBuffer_(sites == WithSites::Yes ? std::size_t{1} << 20 : 0),
      writer_(buffer_.data(), buffer_.size(), trace::FdSink{fd_},
              trace::SiteBuffer{siteBuffer_.empty() ? nullptr : siteBuffer_.data(),
                                siteBuffer_.size()},
              compressor(compression)) {
  if (!writer_.ok()) {
    const int err = errno;
    ::close(fd_);
    throw support::Error(path_ + ": cannot write: " + std::strerror(err));
  }
}

trace::ChunkCompressor TraceFile::compressor(ChunkCompression compression) {
  if (compression == ChunkCompression::No) return {};
  const std::size_t size = trace::ZstdCompressor::workspaceSize(trace::kDefaultCompressionLevel);
  zstdWorkspace_.resize((size + 7) / 8);
  zstd_ = std::make_unique<trace::ZstdCompressor>(zstdWorkspace_.data(), size,
                                                  trace::kDefaultCompressionLevel);
  packed_.resize(buffer_.size());
  return zstd_->chunkCompressor(packed_.data(), packed_.size());
}

TraceFile::~TraceFile() {
  if (fd_ >= 0) ::close(fd_);
}

void TraceFile::fail() const {
  throw support::Error(path_ + ": cannot write: " + std::strerror(errno));
}

std::uint64_t TraceFile::append(const trace::Event& e) {
  const std::uint64_t r = writer_.append(e);
  if (r == trace::TraceWriter<trace::FdSink>::kRejected) {
    if (!writer_.ok()) fail();
    throw std::logic_error(path_ + ": the trace writer rejected a malformed event");
  }
  return r;
}

bool TraceFile::program(const trace::ProgramInfo& program) {
  if (writer_.program(program.pid, program.parentPid, program.path)) return true;
  if (!writer_.ok()) fail();
  return false;
}

std::uint64_t TraceFile::defineSite(const std::uint64_t* frames, std::size_t depth) {
  if (!writer_.hasSites() || depth == 0 || depth > trace::kMaxSiteDepth)
    throw std::logic_error(path_ + ": defineSite on a trace without sites or with a bad depth");
  const std::uint64_t id = writer_.defineSite(frames, depth);
  if (id == trace::kNoSite) fail();
  return id;
}

void TraceFile::addModules(const std::vector<trace::ModuleInfo>& modules) {
  if (!writer_.hasSites()) throw std::logic_error(path_ + ": modules in a trace without sites");
  if (!writer_.addModules(modules.data(), modules.size())) {
    if (!writer_.ok()) fail();
    throw std::logic_error(path_ + ": the trace writer rejected a module");
  }
}

void TraceFile::finish() {
  if (!writer_.finish()) fail();
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail();
}

}  // namespace strata::tracetools
