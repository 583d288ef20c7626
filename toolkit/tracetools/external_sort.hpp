// Sorting more fixed-size records than memory should hold, for `strata drag`'s passes: records
// are pushed, sorted in memory in runs of a fixed number of records, each full run written to
// a temporary file, and the runs merged at most kFanIn at a time: as soon as kFanIn runs of
// the same level are on disk they become one run of the next level, so the files open stay
// under kFanIn per level (a level multiplies the records by kFanIn). A SpillFile is a
// temporary file unlinked as soon as it is created, so it goes away with its descriptor, also
// when an exception unwinds; it holds a buffer only while being written or read. Memory: one
// run of records plus a 64 KiB buffer per file being merged.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <queue>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/error.hpp"

namespace strata::tracetools {

// The directory for temporary files: `given`, else $TMPDIR, else /tmp.
inline std::string tempDirOr(const std::string& given) {
  if (!given.empty()) return given;
  const char* env = std::getenv("TMPDIR");
  return env != nullptr && *env != '\0' ? env : "/tmp";
}

// A temporary file, written through then read back through one buffer.
class SpillFile {
 public:
  explicit SpillFile(const std::string& dir) {
    std::string name = dir + "/strata-drag-XXXXXX";
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0)
      throw support::Error(dir + ": cannot create a temporary file: " + std::strerror(errno));
    ::unlink(name.c_str());
  }
  ~SpillFile() { ::close(fd_); }
  SpillFile(const SpillFile&) = delete;
  SpillFile& operator=(const SpillFile&) = delete;

  void write(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    if (buf_.empty()) buf_.resize(kBuffer);
    while (n != 0) {
      if (len_ == buf_.size()) flush();
      const std::size_t k = std::min(n, buf_.size() - len_);
      std::memcpy(buf_.data() + len_, c, k);
      len_ += k, c += k, n -= k;
    }
  }
  // Ends writing: what follows reads the file from its start. The buffer is let go until then.
  void rewind() {
    flush();
    if (::lseek(fd_, 0, SEEK_SET) != 0) fail("seek");
    pos_ = len_ = 0;
    std::vector<unsigned char>().swap(buf_);
  }
  // Reads exactly n bytes; false at the end of the file.
  bool read(void* p, std::size_t n) {
    auto* c = static_cast<unsigned char*>(p);
    if (buf_.empty()) buf_.resize(kBuffer);
    while (n != 0) {
      if (pos_ == len_) {
        ssize_t got;
        do got = ::read(fd_, buf_.data(), buf_.size());
        while (got < 0 && errno == EINTR);
        if (got < 0) fail("read");
        if (got == 0) return false;
        pos_ = 0, len_ = static_cast<std::size_t>(got);
      }
      const std::size_t k = std::min(n, len_ - pos_);
      std::memcpy(c, buf_.data() + pos_, k);
      pos_ += k, c += k, n -= k;
    }
    return true;
  }

 private:
  static constexpr std::size_t kBuffer = std::size_t{1} << 16;
  void flush() {
    for (std::size_t at = 0; at < len_;) {
      const ssize_t put = ::write(fd_, buf_.data() + at, len_ - at);
      if (put < 0 && errno == EINTR) continue;
      if (put <= 0) fail("write");
      at += static_cast<std::size_t>(put);
    }
    len_ = 0;
  }
  [[noreturn]] static void fail(const char* what) {
    throw support::Error(std::string("cannot ") + what + " a temporary file: " +
                             std::strerror(errno));
  }
  int fd_ = -1;
  std::vector<unsigned char> buf_;
  std::size_t pos_ = 0, len_ = 0;
};

// Sorts T (trivially copyable) by Less: push everything, then finish(), then next() in order.
template <class T, class Less>
class ExternalSorter {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  static constexpr std::size_t kFanIn = 32;

  ExternalSorter(std::string dir, std::size_t runRecords)
      : dir_(tempDirOr(dir)), runRecords_(std::max<std::size_t>(runRecords, 1)) {}

  void push(const T& v) {
    mem_.push_back(v);
    if (mem_.size() >= runRecords_) spill();
  }

  void finish() {
    if (runs_.empty()) {  // everything fits in one run: no file at all
      std::sort(mem_.begin(), mem_.end(), Less{});
      return;
    }
    if (!mem_.empty()) spill();
    std::vector<T>().swap(mem_);
    while (runs_.size() > kFanIn) mergeLast(kFanIn);  // the newest, smallest ones first
    std::vector<std::unique_ptr<SpillFile>> files;
    for (Run& r : runs_) files.push_back(std::move(r.file));
    runs_.clear();
    merger_ = std::make_unique<Merger>(std::move(files));
  }

  bool next(T& out) {
    if (merger_) return merger_->next(out);
    if (at_ == mem_.size()) return false;
    out = mem_[at_++];
    return true;
  }

  std::size_t runsWritten() const { return spilled_; }  // 0: sorted in memory
  std::size_t runRecords() const { return runRecords_; }

 private:
  void spill() {
    std::sort(mem_.begin(), mem_.end(), Less{});
    auto f = std::make_unique<SpillFile>(dir_);
    f->write(mem_.data(), mem_.size() * sizeof(T));
    f->rewind();
    runs_.push_back(Run{std::move(f), 0});
    mem_.clear();
    ++spilled_;
    for (;;) {  // kFanIn runs of one level make one of the next
      const std::size_t n = runs_.size();
      if (n < kFanIn || runs_[n - kFanIn].level != runs_[n - 1].level) break;
      mergeLast(kFanIn);
    }
  }

  // Merges the last k runs into one, a level above the highest of them.
  void mergeLast(std::size_t k) {
    std::vector<std::unique_ptr<SpillFile>> group;
    unsigned level = 0;
    for (std::size_t i = runs_.size() - k; i < runs_.size(); ++i) {
      level = std::max(level, runs_[i].level);
      group.push_back(std::move(runs_[i].file));
    }
    runs_.resize(runs_.size() - k);
    auto merged = std::make_unique<SpillFile>(dir_);
    {
      Merger m(std::move(group));
      T v;
      while (m.next(v)) merged->write(&v, sizeof v);
    }
    merged->rewind();
    runs_.push_back(Run{std::move(merged), level + 1});
  }

  // Merges sorted files: a heap of each file's next record.
  class Merger {
   public:
    explicit Merger(std::vector<std::unique_ptr<SpillFile>> files) : files_(std::move(files)) {
      for (std::size_t i = 0; i < files_.size(); ++i) pull(i);
    }
    bool next(T& out) {
      if (heap_.empty()) return false;
      const std::size_t i = heap_.top().second;
      out = heap_.top().first;
      heap_.pop();
      pull(i);
      return true;
    }

   private:
    struct Greater {
      bool operator()(const std::pair<T, std::size_t>& a, const std::pair<T, std::size_t>& b) {
        return Less{}(b.first, a.first);
      }
    };
    void pull(std::size_t i) {
      T v;
      if (files_[i]->read(&v, sizeof v)) heap_.emplace(v, i);
    }
    std::vector<std::unique_ptr<SpillFile>> files_;
    std::priority_queue<std::pair<T, std::size_t>, std::vector<std::pair<T, std::size_t>>,
                        Greater>
        heap_;
  };

  std::string dir_;
  std::size_t runRecords_;
  std::vector<T> mem_;
  struct Run {
    std::unique_ptr<SpillFile> file;
    unsigned level = 0;
  };
  std::size_t at_ = 0, spilled_ = 0;
  std::vector<Run> runs_;
  std::unique_ptr<Merger> merger_;
};

}  // namespace strata::tracetools
