// Reading the last-use file (drag_last_use.hpp): a parser fed the file in blocks, so a file is
// never held whole; whole 24-byte units are decoded as they complete, a partial one is carried
// to the next block, and each record goes to a callback rather than into memory. Layout: toolkit/protocol/include/strata/protocol/drag.h.
#include "drag/drag_last_use.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "strata/protocol/drag.h"
#include "support/error.hpp"

namespace strata::drag {
namespace {

constexpr std::size_t kWord = 8;
constexpr std::size_t kUnit = 3 * kWord;  // the header, a record and the trailer are 3 words
static_assert(kLastUseAtExit == STRATA_DRAG_AT_EXIT);

std::uint64_t getU64(const unsigned char* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

class Parser {
 public:
  explicit Parser(const std::function<void(const LastUseRecord&)>* onRecord = nullptr)
      : onRecord_(onRecord) {}

  void feed(const unsigned char* p, std::size_t n) {
    while (n != 0) {
      if (trailerSeen_) throw LastUseError(at_, "data after the trailer");
      const std::size_t k = std::min(n, kUnit - fill_);
      std::memcpy(unit_ + fill_, p, k);
      fill_ += k;
      p += k;
      n -= k;
      if (fill_ == kUnit) {
        unit(at_);
        at_ += kUnit;
        fill_ = 0;
      }
    }
  }

  LastUseData finish() {
    if (!headerSeen_) {
      if (std::memcmp(unit_, STRATA_DRAG_MAGIC, std::min(fill_, kWord)) != 0)
        throw LastUseError(0, "not a last-use file (bad magic)");
      throw LastUseError(0, "the file ends in its " + std::to_string(kUnit) + "-byte header (" +
                                std::to_string(fill_) + " bytes)");
    }
    if (fill_ != 0) {
      data_.incomplete = "a record cut short at byte offset " + std::to_string(at_) + " after " +
                         std::to_string(data_.recordCount) +
                         " whole records (the run was killed)";
    } else if (!trailerSeen_) {
      data_.incomplete = "no trailer after " + std::to_string(data_.recordCount) +
                         " records (the run was killed)";
    }
    data_.complete = data_.incomplete.empty();
    return std::move(data_);
  }

 private:
  void unit(std::uint64_t off) {
    const std::uint64_t a = getU64(unit_), b = getU64(unit_ + kWord);
    const std::uint64_t c = getU64(unit_ + 2 * kWord);
    if (!headerSeen_) {
      if (std::memcmp(unit_, STRATA_DRAG_MAGIC, kWord) != 0)
        throw LastUseError(0, "not a last-use file (bad magic)");
      if (b != STRATA_DRAG_VERSION)
        throw LastUseError(kWord, "unsupported last-use file version " + std::to_string(b) +
                                      " (this reader reads version " +
                                      std::to_string(STRATA_DRAG_VERSION) + ")");
      data_.pid = c;
      headerSeen_ = true;
      return;
    }
    if (a == STRATA_DRAG_END) {
      if (b != data_.recordCount)
        throw LastUseError(off + kWord, "the trailer counts " + std::to_string(b) +
                                            " records, the file has " +
                                            std::to_string(data_.recordCount));
      if (c != 0) throw LastUseError(off + 2 * kWord, "the trailer's last word is not 0");
      trailerSeen_ = true;
      return;
    }
    if (b >= STRATA_DRAG_AT_EXIT || (c != STRATA_DRAG_AT_EXIT && b > c))
      throw LastUseError(off, "object " + std::to_string(a) + ": last use at event " +
                                  std::to_string(b) + " after its release at event " +
                                  std::to_string(c));
    ++data_.recordCount;
    if (onRecord_ != nullptr) (*onRecord_)(LastUseRecord{a, b, c, off});
  }

  const std::function<void(const LastUseRecord&)>* onRecord_;
  LastUseData data_;
  unsigned char unit_[kUnit] = {};
  std::size_t fill_ = 0;
  std::uint64_t at_ = 0;  // offset of unit_[0]
  bool headerSeen_ = false;
  bool trailerSeen_ = false;
};

LastUseData parseWith(const unsigned char* data, std::size_t size,
                      const std::function<void(const LastUseRecord&)>* onRecord) {
  Parser p(onRecord);
  p.feed(data, size);
  return p.finish();
}

LastUseData readWith(const std::string& path,
                     const std::function<void(const LastUseRecord&)>* onRecord) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw support::Error(path + ": cannot read: " + std::strerror(errno));
  try {
    Parser p(onRecord);
    std::vector<unsigned char> buf(std::size_t{1} << 16);
    for (;;) {
      const ssize_t n = ::read(fd, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw support::Error(path + ": cannot read: " + std::strerror(errno));
      if (n == 0) break;
      p.feed(buf.data(), static_cast<std::size_t>(n));
    }
    LastUseData d = p.finish();
    ::close(fd);
    d.path = path;
    return d;
  } catch (const LastUseError& e) {
    ::close(fd);
    throw support::Error(path + ": " + e.what());
  } catch (...) {
    ::close(fd);
    throw;
  }
}

}  // namespace

LastUseData parseLastUse(const unsigned char* data, std::size_t size) {
  LastUseData d = parseWith(data, size, nullptr);
  d.bytes.assign(data, data + size);
  return d;
}

LastUseData readLastUseFile(const std::string& path) { return readWith(path, nullptr); }

void forEachLastUseRecord(const LastUseData& data,
                          const std::function<void(const LastUseRecord&)>& f) {
  if (data.path.empty()) (void)parseWith(data.bytes.data(), data.bytes.size(), &f);
  else (void)readWith(data.path, &f);
}

std::string lastUseError(const LastUseData& data, const std::string& what) {
  return data.path.empty() ? what : data.path + ": " + what;
}

}  // namespace strata::drag
