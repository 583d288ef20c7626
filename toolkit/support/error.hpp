// The toolkit's one error convention (docs/architecture.md, "Errors"):
//
//  - A failure the user must hear about is thrown as support::Error, where it is found. Its
//    message is one whole sentence that names the input at fault and, where there is one,
//    what to do ("trace.bin: not a Strata trace (expected \"STRATATR\")").
//  - A wrong invocation (an unknown option, a missing operand, a value out of range) is a
//    support::UsageError: the command prints its usage after the message and exits 2.
//  - Both are caught once, by the `strata` executable's dispatcher, which prints
//    "strata COMMAND: message" on stderr and exits with the error's status: 1, or 2 for a
//    usage error and for an input the user named that cannot be used at all (an unknown
//    allocator, a COMMAND that is not found). No library prints an error or exits.
//  - An outcome that is not a failure of the command (a program that exited non-zero or was
//    killed, an allocator that is not installed, a replay that ran out of memory) is a value
//    in the result: a status enum whose text is said once, where results are rendered.
//  - Code that runs inside another program (the recorder, strata-probe, strata-exec, the
//    replay loop under the allocator it measures) does not throw: it reports through its
//    protocol (an exit status, a status field), and the toolkit side turns that into an Error
//    or a status.
#pragma once
#include <stdexcept>
#include <string>

namespace strata::support {

// A failure of the command, with a message for the user. The exit status is 1, or 2 for an
// input the user named that cannot be used at all (an unknown allocator, a COMMAND that is not
// found), which the commands' help lists beside wrong invocations but without the usage.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exitStatus = 1)
      : std::runtime_error(message), exitStatus_(exitStatus) {}
  int exitStatus() const { return exitStatus_; }

 private:
  int exitStatus_;
};

// A wrong invocation: the message, then the command's usage; exit status 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message, 2) {}
};

}  // namespace strata::support
