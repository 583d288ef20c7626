// Progress of a long subcommand on stderr. When stderr is a terminal it is one line redrawn in
// place, "[#####.....] 7/21 web-proxy: jemalloc run 2/3", erased before anything else is
// printed; otherwise (a log, a pipe, CI) it prints nothing per step and the caller prints one
// short line per phase with note(), so logs stay readable.
#pragma once
#include <cstdint>
#include <string>

namespace strata::support {

class Progress {
 public:
  // `total` steps will be run; `interactive` forces the mode (tests), by default isatty(2).
  explicit Progress(std::uint64_t total);
  Progress(std::uint64_t total, bool interactive);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Starts step number done()+1, described by `what`; redraws the bar when interactive.
  void step(const std::string& what);
  // Marks `n` steps as done without running them (a failed allocator's skipped runs).
  void skip(std::uint64_t n);
  // A line for the log: printed as is when not interactive, not at all when interactive.
  void note(const std::string& line);
  // Erases the bar (before the caller writes to stdout or stderr); the next step redraws it.
  void clear();

  bool interactive() const { return interactive_; }
  std::uint64_t done() const { return done_; }

 private:
  void draw();

  std::uint64_t total_;
  std::uint64_t done_ = 0;
  bool interactive_;
  bool shown_ = false;
  std::string what_;
};

}  // namespace strata::support
