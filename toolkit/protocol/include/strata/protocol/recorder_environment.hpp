// What the toolkit tells the recorder (libstrata-record.so) it preloads: environment variables
// read once, when the recorder starts in each process (docs/toolkit/recording.md). `strata record`,
// `strata drag` and the benchmarks set them; the recorder reads them with getenv. Anyone may
// set them by hand: LD_PRELOAD=.../libstrata-record.so STRATA_TRACE_FILE=out.trace program.
//
// Character arrays and constants only: the recorder includes this header, and it is built
// -fno-builtin with hidden visibility and must do nothing at load time but read the names.
#pragma once

namespace strata::protocol::env {

// The trace file. Unset or empty: the recorder records nothing and only forwards the calls.
// The process named by kOwnerPid writes this file; every other process writes FILE.<pid>.
inline constexpr char kFile[] = "STRATA_TRACE_FILE";

// The pid of the process that writes kFile itself (`strata record` names the child it
// starts). Unset: the first process the recorder starts in takes the role and sets it for
// its descendants.
inline constexpr char kOwnerPid[] = "STRATA_TRACE_PID";

// The clock events are stamped with: kClockTsc (the default where the TSC can be trusted),
// kClockFine (CLOCK_MONOTONIC) or kClockCoarse (CLOCK_MONOTONIC_COARSE).
inline constexpr char kClock[] = "STRATA_TRACE_CLOCK";
inline constexpr char kClockTsc[] = "tsc";
inline constexpr char kClockFine[] = "fine";
inline constexpr char kClockCoarse[] = "coarse";

// Large objects (touch events) start at this many bytes (never below two pages); kTouchOff
// writes no touch events at all.
inline constexpr char kTouchMin[] = "STRATA_TRACE_TOUCH_MIN";
inline constexpr char kTouchOff[] = "off";

// On/off settings: on when set and neither empty nor "0". kOn is what the toolkit sets.
// kTouchAll measures every large object (no sampling); kSites records allocation sites;
// kDrag tells the drag tool of `strata drag` where each object lives (Valgrind requests,
// strata/protocol/drag.h); kPlain writes plain event chunks (format version 2) rather than
// zstd-compressed ones (version 3, the default).
inline constexpr char kTouchAll[] = "STRATA_TRACE_TOUCH_ALL";
inline constexpr char kSites[] = "STRATA_TRACE_SITES";
inline constexpr char kDrag[] = "STRATA_TRACE_DRAG";
inline constexpr char kPlain[] = "STRATA_TRACE_PLAIN";
inline constexpr char kOn[] = "1";

// Whether an on/off setting's value (getenv's, null when unset) turns it on.
constexpr bool settingOn(const char* value) noexcept {
  return value != nullptr && value[0] != '\0' && !(value[0] == '0' && value[1] == '\0');
}

}  // namespace strata::protocol::env
