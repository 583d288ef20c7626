"""Live runs for bench/fidelity.py: each allocator by LD_PRELOAD, peak RSS and wall time."""
from __future__ import annotations

import os
import statistics
import subprocess
import time
from pathlib import Path


def run_live(cmd: list[str], lib: str | None, cwd: Path, scratch: Path) -> dict:
    """One live run: peak RSS (bytes), wall seconds, exit status, stdout.

    The peak RSS a process reports (ru_maxrss) survives exec: a child forked from this
    Python would carry Python's own resident size. So the command runs under /usr/bin/time
    (a small C program) and `env`, which sets LD_PRELOAD for the command only; time's
    wait4 figure then starts from a process of a few hundred KiB. Without /usr/bin/time,
    os.wait4 here, whose figure is at least this script's own RSS (small programs read
    high)."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    preload = ["env", "LD_PRELOAD=" + lib] if lib else ["env", "-u", "LD_PRELOAD"]
    timer = Path("/usr/bin/time")
    report = scratch / "time.out"
    argv = ([str(timer), "-f", "%M", "-o", str(report)] if timer.exists() else []) + preload + cmd
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    stdout = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    rss_kib = usage.ru_maxrss
    if timer.exists():
        lines = [l for l in report.read_text().splitlines() if l.strip().isdigit()]
        rss_kib = int(lines[-1]) if lines else 0
    return {"rss_bytes": rss_kib * 1024, "wall_seconds": wall,
            "exit": os.waitstatus_to_exitcode(status), "stdout": stdout.decode(errors="replace")}


def live_runs(cmd: list[str], libs: dict[str, str | None], runs: int, cwd: Path,
              scratch: Path) -> dict:
    """Every allocator `runs` times, taking turns; the median RSS and wall time of each."""
    samples: dict[str, list[dict]] = {a: [] for a in libs}
    for _ in range(runs):
        for name, lib in libs.items():
            samples[name].append(run_live(cmd, lib, cwd, scratch))
    reference = samples.get("glibc", next(iter(samples.values())))[0]["stdout"]
    live = {}
    for name, s in samples.items():
        live[name] = {
            "rss_bytes": statistics.median(r["rss_bytes"] for r in s),
            "wall_seconds": statistics.median(r["wall_seconds"] for r in s),
            "rss_runs": [r["rss_bytes"] for r in s],
            "wall_runs": [r["wall_seconds"] for r in s],
            "exit": max(r["exit"] for r in s),
            "same_output": all(r["stdout"] == reference for r in s),
        }
    return live
