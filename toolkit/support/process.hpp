// Running a child process and measuring it: the one launcher of every command that starts a
// program (`strata run`, `strata record`, `strata drag`, `strata compare` and `tune`, the
// replays, the benchmarks). Spawn with an environment and a preloaded library, stdin from a
// file or inherited, stdout captured to a file or a string, signals relayed to a child that
// stands in for this process, wait4 for the resource usage, and the exit status or signal in
// words and as a shell reports it.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "support/rss_sampler.hpp"

namespace strata::support {

// What to run and how.
struct ChildSpec {
  std::vector<std::string> argv;  // argv[0] is searched in PATH when it holds no slash
  // The environment: when `env` is set, exactly these NAME=VALUE entries; otherwise this
  // process's environment. Then `unset` names are removed and `set` entries replace or add.
  std::optional<std::vector<std::string>> env;
  std::vector<std::string> unset;
  std::vector<std::string> set;
  std::string preload;                  // a library put in front of LD_PRELOAD; empty: none
  std::string stdinPath = "/dev/null";  // empty: inherit
  std::string stdoutPath;               // a file that receives stdout; empty: see below
  bool captureStdout = false;           // stdout into ProcessResult::out (when no stdoutPath)
  std::string stderrPath;               // a file that receives stderr; empty: inherit (or quiet)
  bool quiet = false;                   // stdout (unless captured) and stderr to /dev/null
  // Start the command from strata-exec (exec_measured.c), a tiny static process, so that its
  // peak RSS is its own: a child forked from this process would otherwise start with this
  // process's resident size counted. Falls back to a plain fork when strata-exec is missing
  // ($STRATA_EXEC, else beside the running executable); ProcessResult::ownPeakRss says which.
  bool ownPeakRss = false;
  // The child stands in for this process (`strata run`, `strata record`): while it runs, a
  // SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2 sent to this process by another
  // (kill) is passed on to the child, and one the terminal sends (Ctrl-C, Ctrl-\, a hangup),
  // which reaches the whole foreground group and so the child too, is left to the child: this
  // process stays to report and pass its status on. One such child at a time.
  bool relaySignals = false;
  // A variable set, in the child's environment, to the child's own pid (which the command
  // keeps across exec; with ownPeakRss it would be strata-exec's): for a protocol that names
  // the process started, such as the recorder's owner pid. Empty: none.
  std::string pidVariable;
  // When set, receives the resident size of the command's processes over its run, sampled
  // from /proc by this process while it waits (rss_sampler.hpp: every 10 ms at first, at
  // most RssSampler::kMaxSamples): the child and all its descendants, strata-exec itself left
  // out with ownPeakRss. The resource usage and the signal relay are as without it.
  std::vector<RssSample>* rssSamples = nullptr;
};

// What the run gave.
struct ProcessResult {
  bool started = false;
  int startErrno = 0;         // why exec failed (ENOENT: not found), when !started
  int exitCode = -1;          // when it exited
  int signal = 0;             // when a signal ended it
  double wallSeconds = 0;
  double userSeconds = 0;     // from wait4's rusage: the child and its waited-for descendants
  double systemSeconds = 0;
  std::uint64_t maxRssBytes = 0;  // ru_maxrss: the largest of those processes' peak RSS
  std::string out;            // stdout when captureStdout
  bool ownPeakRss = false;    // maxRssBytes was measured from strata-exec (ChildSpec)
  double cpuSeconds() const { return userSeconds + systemSeconds; }
  bool succeeded() const { return started && signal == 0 && exitCode == 0; }
  // The shell's convention: the exit code, 128 + signal, 127 not found, 126 not executable.
  int shellStatus() const;
};

// Runs the child and waits for it. Never throws; a child that could not start has
// started == false and startErrno set. As execvp does, a file the kernel will not execute
// (ENOEXEC: a script without "#!") is run by /bin/sh.
ProcessResult runChild(const ChildSpec& spec);

// Ends this process by `signal`, as a child that stood in for it was ended (`strata run`):
// whoever waits for this process sees the signal itself, as if it had exec'd the command.
// stdio is flushed first; no core file is written (the child wrote its own). Returns when
// the signal's default action does not end a process (SIGCHLD, SIGWINCH...).
void raiseAsOwn(int signal);

// Where strata-exec is: $STRATA_EXEC, else beside the running executable; empty when it is
// not there.
std::string measuringLauncher();

// "exit 0", "exit 3", "signal 11 (SIGSEGV)", "not found", "cannot execute: Permission denied".
std::string describeStatus(const ProcessResult& r);

// "SIGSEGV" for 11 (the number as text when it has no name).
std::string signalName(int signal);

// Where `command` runs from: itself when it holds a slash, else the first executable match
// in PATH. Returns empty and sets `why` ("command not found", "Permission denied", "is a
// directory") when it cannot run.
std::string resolveCommand(const std::string& command, std::string& why);

// `args` joined by spaces, each holding a space or a shell character single-quoted, so the
// line can be pasted back into a shell.
std::string shellLine(const std::vector<std::string>& args);

}  // namespace strata::support
