"""The programs of the fidelity set (bench/fidelity.py): bench/fidelity's, real programs from
Debian, and the C++ compiler."""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SRC = REPO / "bench" / "fidelity"

# The include directories toolkit/replay/engine.cpp, the file the compiler runs compile, needs.
COMPILE_INCLUDES = ["layers/include", "toolkit/trace/include", "toolkit/replay", "toolkit/registry",
                    "toolkit/support", "toolkit/tracetools"]


def cc1plus_command(out_dir: Path) -> list[str]:
    """The cc1plus command line `g++ -O2 -c` runs for one of this repository's files.

    The compiler proper is cc1plus, a child of the g++ driver; recording g++ would compare
    the driver's trace. Running cc1plus directly makes the recorded, replayed and live
    process the same one. It writes assembly, which is all the allocation work."""
    source = "toolkit/replay/engine.cpp"
    driver = ["g++", "-std=c++20", "-O2"] + ["-I" + d for d in COMPILE_INCLUDES] + [
        "-c", source, "-o", str(out_dir / "engine.o")]
    probe = subprocess.run(driver[:1] + ["-###"] + driver[1:], cwd=REPO, capture_output=True,
                           text=True)
    for line in probe.stderr.splitlines():
        words = shlex.split(line)
        if words and words[0].endswith("/cc1plus"):
            # The driver's temporary .s; keep ours in out_dir and make include paths absolute.
            fixed, it = [], iter(words)
            for w in it:
                if w == "-o":
                    fixed += ["-o", str(out_dir / "engine.s")]
                    next(it, None)
                elif w == "-I":
                    fixed += ["-I", str(REPO / next(it, ""))]
                elif w == source:
                    fixed.append(str(REPO / source))
                else:
                    fixed.append(w)
            return fixed
    raise SystemExit("fidelity: cannot find cc1plus in the output of 'g++ -###'")


def programs(build: Path) -> dict[str, dict]:
    """name -> {"cmd": argv, "alloc_bound": whether allocation dominates its run time}."""
    b = build / "bin"
    progs = {
        "calloc_small": {"cmd": [str(b / "fidelity_calloc_small")], "alloc_bound": True},
        "calloc_large": {"cmd": [str(b / "fidelity_calloc_large")], "alloc_bound": False},
        "small": {"cmd": [str(b / "fidelity_small")], "alloc_bound": True},
        "handoff": {"cmd": [str(b / "fidelity_handoff")], "alloc_bound": True},
        "server": {"cmd": [str(b / "fidelity_server")], "alloc_bound": True},
        "short_threads": {"cmd": [str(b / "fidelity_short_threads")], "alloc_bound": True},
        # Debian's python3, not a wrapper script in PATH (a pyenv shim is a shell script).
        "python3": {"cmd": ["/usr/bin/python3", str(SRC / "workload.py")], "alloc_bound": False},
        # The same with pymalloc off: every object through malloc, so the trace sees what
        # pymalloc's arenas (mapped directly) hide. `env` execs python3 in the same process,
        # whose trace then starts afresh (docs/toolkit/recording.md).
        "python3_malloc": {"cmd": ["/usr/bin/env", "PYTHONMALLOC=malloc", "/usr/bin/python3",
                                   str(SRC / "workload.py")], "alloc_bound": False},
        "perl": {"cmd": ["/usr/bin/perl", str(SRC / "workload.pl")], "alloc_bound": False},
        "sqlite3": {"cmd": ["/usr/bin/sqlite3", ":memory:", ".read " + str(SRC / "workload.sql")],
                    "alloc_bound": False},
        "cc1plus": {"cmd": None, "alloc_bound": False},  # filled in lazily: needs g++ -###
        # The compiler as users run it: the driver starts cc1plus and as; strata compare
        # judges each process that allocates and the command as a whole (the live peak RSS
        # is the largest process's, cc1plus).
        "g++": {"cmd": ["g++", "-std=c++20", "-O2"] +
                       ["-I" + str(REPO / d) for d in COMPILE_INCLUDES] +
                       ["-c", str(REPO / "toolkit/replay/engine.cpp"), "-o", os.devnull],
                "alloc_bound": False},
    }
    return progs
