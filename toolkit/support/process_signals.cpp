// The signals around a child that stands in for this process (process_signals.hpp), and
// raiseAsOwn (process.hpp).
#include "support/process_signals.hpp"

#include <sys/resource.h>

#include <atomic>
#include <cerrno>
#include <cstdio>

#include "support/process.hpp"

namespace strata::support {
namespace detail {
namespace {

std::atomic<pid_t> gRelayTo{0};

void relaySignal(int sig, siginfo_t* info, void*) {
  // A process's kill (si_code <= 0: SI_USER, SI_QUEUE, SI_TKILL) is passed on; the kernel's
  // (SI_KERNEL: the terminal's Ctrl-C, Ctrl-\ and hangup) went to the child's group already.
  const pid_t child = gRelayTo.load(std::memory_order_relaxed);
  if (info == nullptr || info->si_code > 0 || child <= 0) return;
  const int saved = errno;
  ::kill(child, sig);
  errno = saved;
}

sigset_t relayedSet() {
  sigset_t set;
  ::sigemptyset(&set);
  for (const int sig : kRelayed) ::sigaddset(&set, sig);
  return set;
}

}  // namespace

SignalRelay::SignalRelay(bool on) : on_(on) {
  if (!on_) return;
  const sigset_t block = relayedSet();
  ::sigprocmask(SIG_BLOCK, &block, &oldMask_);
  struct sigaction relay {};
  relay.sa_sigaction = relaySignal;
  relay.sa_flags = SA_SIGINFO | SA_RESTART;
  ::sigemptyset(&relay.sa_mask);
  for (int i = 0; i < kRelayedCount; ++i) ::sigaction(kRelayed[i], &relay, &old_[i]);
}

SignalRelay::~SignalRelay() {
  if (!on_) return;
  const sigset_t block = relayedSet();
  ::sigprocmask(SIG_BLOCK, &block, nullptr);
  for (int i = 0; i < kRelayedCount; ++i) ::sigaction(kRelayed[i], &old_[i], nullptr);
  gRelayTo.store(0, std::memory_order_relaxed);
  ::sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
}

void SignalRelay::started(pid_t child) {
  if (!on_) return;
  gRelayTo.store(child, std::memory_order_relaxed);
  ::sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
}

void SignalRelay::inChild() const {
  if (!on_) return;
  for (int i = 0; i < kRelayedCount; ++i) ::sigaction(kRelayed[i], &old_[i], nullptr);
  ::sigprocmask(SIG_SETMASK, &oldMask_, nullptr);
}

}  // namespace detail

void raiseAsOwn(int signal) {
  std::fflush(nullptr);
  const rlimit noCore{0, 0};
  ::setrlimit(RLIMIT_CORE, &noCore);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigaction(signal, &dfl, nullptr);
  sigset_t only;
  ::sigemptyset(&only);
  ::sigaddset(&only, signal);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(signal);
}

}  // namespace strata::support
