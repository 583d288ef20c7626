// The signals around a child that stands in for this process (ChildSpec::relaySignals),
// private to process.cpp: the relay set up before the fork and undone after the wait.
#pragma once
#include <signal.h>
#include <sys/types.h>

namespace strata::support::detail {

// The signals relayed (process.hpp says which and why).
inline constexpr int kRelayed[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
inline constexpr int kRelayedCount = sizeof kRelayed / sizeof kRelayed[0];

// Relays the signals while a child runs (when `on`). They are blocked from before the fork
// until the child's pid is known, so none is lost or taken by the old disposition; the
// child gets the old dispositions and mask back before it execs (an ignored SIGINT stays
// ignored, as it would have without strata in between). One relay at a time.
class SignalRelay {
 public:
  explicit SignalRelay(bool on);
  SignalRelay(const SignalRelay&) = delete;
  SignalRelay& operator=(const SignalRelay&) = delete;
  ~SignalRelay();
  // In this process, once the child is forked.
  void started(pid_t child);
  // In the child, before exec: async-signal-safe.
  void inChild() const;

 private:
  bool on_;
  sigset_t oldMask_{};
  struct sigaction old_[kRelayedCount] {};
};

}  // namespace strata::support::detail
