// `strata record [-o FILE] -- COMMAND [ARGS...]`: runs COMMAND with the recorder
// (libstrata-record.so, toolkit/record/) preloaded, waits for it, prints what was recorded, and
// exits with COMMAND's status. docs/recording.md describes the recorder.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "allocator_registry.hpp"
#include "command.hpp"
#include "files.hpp"
#include "helpers.hpp"
#include "options.hpp"
#include "strata/trace/reader.hpp"
#include "trace_files.hpp"

namespace strata::cli {
namespace {

constexpr std::string_view kHelp =
    "usage: strata record [-o FILE] [--clock tsc|fine|coarse] [--touch-min SIZE|off]\n"
    "                     [--touch-all] [--sites] -- COMMAND [ARGS...]\n"
    "\n"
    "Runs COMMAND with Strata's recorder preloaded and writes every malloc, calloc, realloc,\n"
    "free, aligned allocation and operator new/delete it makes (and its reap/region calls when\n"
    "it uses Strata's C APIs), with the thread and time of each, to a trace file that\n"
    "`strata stats`, `strata replay` and `strata compare` read.\n"
    "\n"
    "  -o FILE, --output FILE   the trace file (default: <name of COMMAND>.trace here)\n"
    "  --clock tsc|fine|coarse  the time stamps: tsc (default where the kernel's clocksource\n"
    "                           is the TSC) reads the CPU's time-stamp counter, calibrated\n"
    "                           against CLOCK_MONOTONIC; fine is CLOCK_MONOTONIC itself (the\n"
    "                           default elsewhere); coarse is CLOCK_MONOTONIC_COARSE, cheaper\n"
    "                           but advancing only every kernel tick (1-4 ms)\n"
    "  --touch-min SIZE|off     record how much of each object of at least SIZE bytes the\n"
    "                           program touched (default and smallest: two pages), so that a\n"
    "                           replay writes only that; off: replays write every byte. Each\n"
    "                           such object's pages are given back to the kernel when it is\n"
    "                           made and faulted in again as the program touches them, the\n"
    "                           main cost of recording programs with many large objects.\n"
    "                           Objects of a size the program keeps writing whole are\n"
    "                           measured one in 16 (the others count as touched whole)\n"
    "  --touch-all              measure every such object\n"
    "  --sites                  also record where each object was allocated: the stack of\n"
    "                           return addresses (up to 8 deep) at each allocating call, and\n"
    "                           the loaded objects, for `strata stats --sites`. Walking the\n"
    "                           stack makes each allocation much slower (docs/recording.md)\n"
    "\n"
    "Every other process COMMAND starts (fork, or programs it runs) writes FILE.<pid>. A\n"
    "program that crashes, is killed or calls _exit leaves a valid trace of everything up to\n"
    "that point. A summary of each trace written goes to stderr.\n"
    "\n"
    "Exit status: COMMAND's (128+N when it was killed by signal N); 127 when COMMAND is not\n"
    "found, 126 when it cannot be executed; 2 for a wrong invocation or when the recorder\n"
    "library is not built; 1 when FILE cannot be written.\n"
    "\n"
    "example: strata record -o ls.trace -- ls -l /usr\n";

// A wrong invocation: the reason and the usage (command.hpp); exit status 2.
int usageError(const std::string& why) { return cli::usageError("record", kHelp, why); }

// `path` made absolute against the current directory, so the program may chdir.
std::string absolutePath(const std::string& path) {
  if (!path.empty() && path[0] == '/') return path;
  std::vector<char> cwd(4096);
  while (::getcwd(cwd.data(), cwd.size()) == nullptr) {
    if (errno != ERANGE) return path;
    cwd.resize(cwd.size() * 2);
  }
  std::string dir = cwd.data();
  if (dir.empty() || dir.back() != '/') dir += '/';
  return dir + path;
}

// A trace written by this run: the file, and the pid of the process that wrote it (0 for
// the main FILE).
struct TraceFile {
  std::string path;
  long pid = 0;
};

// Whether `path` holds data and was modified at or after `since` (this run wrote it).
bool writtenSince(const std::string& path, const timespec& since) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || st.st_size == 0) return false;
  return st.st_mtim.tv_sec > since.tv_sec ||
         (st.st_mtim.tv_sec == since.tv_sec && st.st_mtim.tv_nsec >= since.tv_nsec);
}

// The traces this run wrote: FILE, then FILE.<pid> of the other processes in pid order.
std::vector<TraceFile> tracesWritten(const std::string& file, const timespec& since) {
  std::vector<TraceFile> out;
  if (writtenSince(file, since)) out.push_back({file, 0});
  for (const std::string& child : childTraces(file))
    if (writtenSince(child, since)) out.push_back({child, pidSuffix(child)});
  return out;
}

// Reads one trace back and prints its line of the summary. False when it does not read.
bool summarise(const TraceFile& t) {
  const int fd = ::open(t.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    std::fprintf(stderr, "strata record: cannot read %s: %s\n", t.path.c_str(), std::strerror(errno));
    return false;
  }
  trace::TraceReader<trace::FdSource> reader(trace::FdSource{fd});
  trace::Event e;
  trace::ReadStatus s;
  while ((s = reader.next(e)) == trace::ReadStatus::Event) {
  }
  ::close(fd);
  if (s == trace::ReadStatus::Error) {
    std::fprintf(stderr, "strata record: %s: %s\n", t.path.c_str(), reader.error().message().c_str());
    return false;
  }
  std::fprintf(stderr,
               "strata record: %s%s: %llu events, %llu objects, %llu threads, %s%llu bytes, %s\n",
               t.path.c_str(),
               t.pid != 0 ? (" (process " + std::to_string(t.pid) + ")").c_str() : "",
               static_cast<unsigned long long>(reader.eventsRead()),
               static_cast<unsigned long long>(reader.objects()),
               static_cast<unsigned long long>(reader.threads()),
               reader.hasSites() ? (std::to_string(reader.sites().siteCount()) + " sites, " +
                                    std::to_string(reader.sites().moduleCount()) + " modules, ")
                                       .c_str()
                                 : "",
               static_cast<unsigned long long>(reader.bytesRead()),
               reader.complete() ? "complete"
                                 : "incomplete (no trailer: the process crashed or was killed; "
                                   "every event up to its last write is there)");
  return true;
}

// In the child: environment for the recorder, then exec. On failure, sends errno through
// the pipe and exits 127.
[[noreturn]] void execRecorded(char* const* command, const std::string& preload,
                               const std::string& file, const std::string& clock,
                               const std::string& touchMin, bool touchAll, bool sites,
                               int errPipe) {
  if (!clock.empty()) ::setenv("STRATA_TRACE_CLOCK", clock.c_str(), 1);
  if (sites) ::setenv("STRATA_TRACE_SITES", "1", 1);
  if (!touchMin.empty()) ::setenv("STRATA_TRACE_TOUCH_MIN", touchMin.c_str(), 1);
  if (touchAll) ::setenv("STRATA_TRACE_TOUCH_ALL", "1", 1);
  ::setenv("LD_PRELOAD", preload.c_str(), 1);
  ::setenv("STRATA_TRACE_FILE", file.c_str(), 1);
  ::setenv("STRATA_TRACE_PID", std::to_string(::getpid()).c_str(), 1);
  ::execvp(command[0], command);
  const int err = errno;
  const ssize_t ignored = ::write(errPipe, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

// Parses the arguments, runs the command under the recorder and reports; see kHelp.
int runRecord(std::span<char* const> args) {
  std::string output, clock, touchMin;
  bool touchAll = false;
  bool sites = false;
  static constexpr support::OptionSpec kOptions[] = {
      {"--output", true, "-o", "a FILE"},
      {"--clock", true, {}, "tsc, fine or coarse"},
      {"--touch-min", true, {}, "a SIZE or off"},
      {"--touch-all", false, {}, {}},
      {"--sites", false}};
  support::ParsedArgs parsed;
  if (std::string err = support::parseArgs(args, kOptions, parsed); !err.empty())
    return usageError(err);
  if (!parsed.operands.empty())
    return usageError("missing '--' before the command '" + parsed.operands[0] + "'");
  for (const support::GivenOption& o : parsed.options) {
    if (o.name == "--output") {
      output = o.value;
      if (output.empty()) return usageError("the output FILE is empty");
    } else if (o.name == "--touch-all") {
      touchAll = true;
    } else if (o.name == "--sites") {
      sites = true;
    } else if (o.name == "--touch-min") {
      if (o.value == "off") {
        touchMin = "off";
      } else {
        const std::optional<std::uint64_t> n = support::parseSize(o.value);
        if (!n || *n == 0)
          return usageError("--touch-min takes a size (bytes, or with K, M, G) or off, not '" +
                            o.value + "'");
        touchMin = std::to_string(*n);
      }
    } else {
      clock = o.value;
      if (clock != "tsc" && clock != "fine" && clock != "coarse")
        return usageError("--clock takes tsc, fine or coarse, not '" + clock + "'");
    }
  }
  if (!parsed.dashDash) return usageError("missing '--' and the COMMAND to record");
  if (parsed.command.empty()) return usageError("missing the COMMAND to record after '--'");
  // The command is the tail of main's argv, null-terminated, as execvp wants it.
  char* const* command = args.data() + (args.size() - parsed.command.size());
  if (command[0][0] == '\0') return usageError("the COMMAND is empty");
  if (output.empty()) output = support::baseName(command[0]) + ".trace";
  const std::string file = absolutePath(output);

  if (!support::helperPresent(support::HelperId::Recorder)) {
    std::fprintf(stderr, "strata record: the recorder %s\n",
                 support::helperMissing(support::HelperId::Recorder).c_str());
    return 2;
  }
  const std::string library = support::helperPath(support::HelperId::Recorder);
  if (library.find_first_of(": \t") != std::string::npos) {
    std::fprintf(stderr, "strata record: the library path '%s' holds a space or colon, which "
                 "LD_PRELOAD cannot carry\n", library.c_str());
    return 2;
  }
  std::string preload = library;
  if (const char* existing = std::getenv("LD_PRELOAD"); existing != nullptr && existing[0] != '\0')
    preload += std::string(":") + existing;

  // Fail early and clearly when FILE cannot be written (the recorder would only warn); left
  // empty, so that a FILE with data afterwards is this run's.
  const int probe = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (probe < 0) {
    std::fprintf(stderr, "strata record: cannot write %s: %s\n", file.c_str(), std::strerror(errno));
    return 1;
  }
  ::close(probe);

  timespec start{};
  ::clock_gettime(CLOCK_REALTIME, &start);
  // File times come from the kernel's coarse clock, a tick behind this one.
  start.tv_nsec -= 50000000;
  if (start.tv_nsec < 0) {
    start.tv_nsec += 1000000000;
    start.tv_sec -= 1;
  }
  int errPipe[2];
  if (::pipe2(errPipe, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "strata record: pipe: %s\n", std::strerror(errno));
    return 1;
  }
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child < 0) {
    std::fprintf(stderr, "strata record: fork: %s\n", std::strerror(errno));
    return 1;
  }
  if (child == 0) {
    ::close(errPipe[0]);
    execRecorded(command, preload, file, clock, touchMin, touchAll, sites, errPipe[1]);
  }
  ::close(errPipe[1]);
  // Ctrl-C and Ctrl-\ reach the whole foreground group: the program decides what they do,
  // and strata stays to report and pass its status on.
  struct sigaction ignore {}, oldInt{}, oldQuit{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGINT, &ignore, &oldInt);
  ::sigaction(SIGQUIT, &ignore, &oldQuit);
  int execErr = 0;
  ssize_t got;
  while ((got = ::read(errPipe[0], &execErr, sizeof execErr)) < 0 && errno == EINTR) {
  }
  ::close(errPipe[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  ::sigaction(SIGINT, &oldInt, nullptr);
  ::sigaction(SIGQUIT, &oldQuit, nullptr);
  if (got == static_cast<ssize_t>(sizeof execErr)) {
    if (execErr == ENOENT || execErr == ENOTDIR) {
      std::fprintf(stderr, "strata record: %s: command not found\n", command[0]);
      return 127;
    }
    std::fprintf(stderr, "strata record: cannot execute %s: %s\n", command[0], std::strerror(execErr));
    return 126;
  }

  int exitStatus;
  if (WIFSIGNALED(status)) {
    exitStatus = 128 + WTERMSIG(status);
    std::fprintf(stderr, "strata record: %s was killed by signal %d (%s)\n", command[0],
                 WTERMSIG(status), strsignal(WTERMSIG(status)));
  } else {
    exitStatus = WEXITSTATUS(status);
    if (exitStatus != 0)
      std::fprintf(stderr, "strata record: %s exited with status %d\n", command[0], exitStatus);
  }
  const std::vector<TraceFile> traces = tracesWritten(file, start);
  if (traces.empty() || traces.front().pid != 0)
    std::fprintf(stderr,
                 "strata record: %s was not written: the recorder did not start in %s (a "
                 "statically linked or set-user-ID program ignores LD_PRELOAD)\n",
                 file.c_str(), command[0]);
  // Each trace listed is read back (a bad one is reported); with many processes only FILE
  // and the first kListed others are listed, the rest counted.
  constexpr std::size_t kListed = 10;
  std::size_t listed = 0, others = 0;
  for (const TraceFile& t : traces) {
    if (t.pid == 0 || listed < kListed) {
      if (t.pid != 0) ++listed;
      summarise(t);
    } else {
      ++others;
    }
  }
  if (others != 0)
    std::fprintf(stderr, "strata record: and %zu more traces %s.<pid> from other processes\n",
                 others, file.c_str());
  return exitStatus;
}

}  // namespace

const Command kRecordCommand{"record", "record a program's allocations into a trace file", kHelp,
                             &runRecord};

}  // namespace strata::cli
