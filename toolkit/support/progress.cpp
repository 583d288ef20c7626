// The progress line of a long subcommand (see progress.hpp).
#include "support/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace strata::support {

namespace {
constexpr int kBarWidth = 20;
}  // namespace

Progress::Progress(std::uint64_t total) : Progress(total, ::isatty(STDERR_FILENO) == 1) {}

Progress::Progress(std::uint64_t total, bool interactive)
    : total_(total == 0 ? 1 : total), interactive_(interactive) {}

Progress::~Progress() { clear(); }

void Progress::step(const std::string& what) {
  what_ = what;
  draw();
  ++done_;
}

void Progress::skip(std::uint64_t n) { done_ += n; }

void Progress::note(const std::string& line) {
  if (interactive_) return;
  std::fprintf(stderr, "%s\n", line.c_str());
  std::fflush(stderr);
}

void Progress::clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

// Draws "[####......] n/total what" over the current line; the count is the step being run.
void Progress::draw() {
  if (!interactive_) return;
  const std::uint64_t current = done_ + 1 > total_ ? total_ : done_ + 1;
  const int filled = static_cast<int>(done_ * kBarWidth / total_);
  std::string bar(static_cast<std::size_t>(kBarWidth), '.');
  for (int i = 0; i < filled && i < kBarWidth; ++i) bar[static_cast<std::size_t>(i)] = '#';
  std::fprintf(stderr, "\r\033[K[%s] %llu/%llu %s", bar.c_str(),
               static_cast<unsigned long long>(current), static_cast<unsigned long long>(total_),
               what_.c_str());
  std::fflush(stderr);
  shown_ = true;
}

}  // namespace strata::support
