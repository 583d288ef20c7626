// The recorder's life cycle: starting (STRATA_TRACE_* from the environment, the trace file,
// the clock, the hooks), the end of the process (the trailer at exit, _exit and quick_exit;
// what is written on a fatal signal), threads starting and ending, and fork (the child starts
// a trace of its own, fork.cpp). docs/toolkit/recording.md describes the behaviour.
#pragma once
#include <stddef.h>
#include <sys/types.h>

namespace strata::record {

// This process's trace file: fd, the process it belongs to (pid), STRATA_TRACE_FILE (path),
// and STRATA_TRACE_PID (ownerPid: the process that writes path itself; the others write
// path.<pid>); the file it opened (path or path.<pid>) and the bytes written to it.
struct TraceFile {
  int fd = -1;
  pid_t pid = 0;
  pid_t ownerPid = 0;
  char path[4096] = {};
  char opened[4096 + 32] = {};
  unsigned long long written = 0;
};
[[gnu::visibility("hidden")]] extern TraceFile gTraceFile;

// Opens this process's trace file (gTraceFile.pid's). False (after one warning on stderr)
// when it cannot.
bool openTrace() noexcept;

// The writer's sink: write(2) to the trace file, as trace::FdSink does. When a write fails (a
// full disk, a quota) it says so once on stderr, naming the file, the reason and the bytes
// written, cuts the file back to the end of the chunk before (the part of the chunk this
// write managed to store goes), and returns false: the writer stops, the trace is valid and
// incomplete, and the program runs on unrecorded. Async-signal-safe.
struct TraceFileSink {
  int fd;
  bool operator()(const unsigned char* data, size_t len) const noexcept;
};

// Starts a fresh trace for this process on gTraceFile.fd: new writer, time base and thread
// numbering; the trace begins with the program chunk (which process, started by which, runs
// which program), so that the traces of one run can be told apart and put in order.
void startWriter() noexcept;

// Writes the trailer (a clean end) once; later calls in this process pass through.
void finishTrace() noexcept;

// The fork handlers (fork.cpp), registered with pthread_atfork at start.
void beforeFork() noexcept;
void afterForkParent() noexcept;
void afterForkChild() noexcept;

}  // namespace strata::record
