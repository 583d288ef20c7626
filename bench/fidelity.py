#!/usr/bin/env python3
"""How well does `strata compare`'s replay predict live behaviour? (bench/README.md)

For each program of the fidelity set (bench/fidelity/ and a few real programs: python3,
perl, sqlite3, the C++ compiler cc1plus), runs

    strata compare --allocators LIST --runs R --out OUT/<name> --json --no-plots -- COMMAND

and the same COMMAND live on every allocator (LD_PRELOAD of the library `strata allocators`
lists; peak RSS and wall time from os.wait4). When results.json already carries live
figures (newer `strata compare` runs the command live itself) those are used; else this
script does the live runs. It then prints, per program, the replay's ranking by peak heap
against the live ranking by peak RSS and their Spearman correlation, the same for time, and
per allocator the predicted heap difference from glibc against the live RSS difference,
with pass/fail against the targets:

    memory rank correlation >= 0.9
    |predicted - live| difference from glibc <= max(10 % of the live one, 2 MiB)
    time rank correlation >= 0.8, judged only where the live run is dominated by allocation

Everything measured goes to OUT/fidelity.json. Usage:

    bench/fidelity.py [--build build] [--out fidelity-out] [--allocators LIST] [--runs R]
                      [--live-runs N] [--programs LIST] [--no-replay] [--own-live]
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SRC = REPO / "bench" / "fidelity"
MIB = 1024.0 * 1024.0

# The targets (docs/fidelity.md).
MEMORY_RHO_TARGET = 0.9
TIME_RHO_TARGET = 0.8
DIFF_TOLERANCE = 0.10
DIFF_FLOOR_BYTES = 2 * MIB


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
        # whose trace then starts afresh (docs/recording.md).
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


def allocators(strata: Path) -> dict[str, str | None]:
    """name -> library path (None for glibc) of every available allocator."""
    out = subprocess.run([str(strata), "allocators"], capture_output=True, text=True).stdout
    found: dict[str, str | None] = {}
    for line in out.splitlines()[1:]:
        parts = line.split(None, 2)
        if len(parts) < 3 or parts[1] != "available":
            continue
        lib = parts[2].strip()
        found[parts[0]] = None if lib.startswith("(") else lib
    return found


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


def first(d: dict, *keys, default=None):
    """The first of `keys` present (and not null) in d."""
    for k in keys:
        if isinstance(d, dict) and d.get(k) is not None:
            return d[k]
    return default


def replay_figures(results: dict) -> tuple[dict, dict]:
    """(replay, live) per allocator from `strata compare`'s results.json.

    With a recorded command, results.json has a "command" block: the combined replay
    verdict over every process compared ("combined": the time summed over processes, the
    largest peak heap) and the live runs ("live": peak RSS from wait4, covering the largest
    process). Those are what a live run is held against. Without one (a trace file), the
    first trace's rows."""
    replay, live = {}, {}
    command = results.get("command") or {}
    combined = (command.get("combined") or {}).get("allocators") or []
    if combined:
        for row in combined:
            if row.get("finished") and row.get("allocator"):
                replay[row["allocator"]] = {"heap_bytes": row.get("predicted_rss_bytes") or row.get("peak_heap_bytes"),
                                            "time_ms": row.get("time_ms"),
                                            "alloc_time_ms": None}
    else:
        traces = results.get("traces") or []
        for row in (traces[0].get("results") or []) if traces else []:
            name = row.get("allocator")
            if not name or row.get("status") != "ok":
                continue
            replay[name] = {"heap_bytes": row.get("peak_heap_bytes"), "time_ms": row.get("time_ms"),
                            "alloc_time_ms": row.get("allocator_ms")
                            if row.get("ratio_basis") == "allocator" else None}
    for row in (command.get("live") or {}).get("results") or []:
        name = row.get("allocator")
        if not name or row.get("status") == "unavailable" or not row.get("max_rss_bytes"):
            continue
        live[name] = {"rss_bytes": row["max_rss_bytes"],
                      "wall_seconds": (row.get("time_ms") or 0) / 1000,
                      "rss_runs": row.get("max_rss_bytes_runs"),
                      "wall_runs": row.get("wall_seconds_runs"),
                      "exit": 0 if row.get("exit") == "exit 0" else 1,
                      "same_output": bool(row.get("stdout_matches", True))}
    return replay, live


def ranks(values: list[float]) -> list[float]:
    """Ranks 1..n, ties sharing their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    r = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a: list[float], b: list[float]) -> float | None:
    """Spearman's rank correlation (Pearson over the ranks); None when undefined."""
    if len(a) < 3:
        return None
    ra, rb = ranks(a), ranks(b)
    ma, mb = statistics.fmean(ra), statistics.fmean(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra)
    vb = sum((y - mb) ** 2 for y in rb)
    return None if va == 0 or vb == 0 else cov / (va * vb) ** 0.5


def judge(name: str, alloc_bound: bool, replay: dict, live: dict) -> dict:
    """The comparison of one program: rankings, correlations, differences, pass/fail."""
    names = [a for a in replay if a in live and replay[a]["heap_bytes"] is not None]
    verdict: dict = {"program": name, "allocators": names, "alloc_bound": alloc_bound}
    if not names:
        return verdict
    heap = [float(replay[a]["heap_bytes"]) for a in names]
    rss = [float(live[a]["rss_bytes"]) for a in names]
    # The replay's time: the allocator's own time when the replay reports it, else wall.
    use_alloc = all(replay[a].get("alloc_time_ms") is not None for a in names)
    rtime = [float(replay[a]["alloc_time_ms" if use_alloc else "time_ms"] or 0) for a in names]
    ltime = [float(live[a]["wall_seconds"]) for a in names]
    verdict["replay_memory_rank"] = [names[i] for i in sorted(range(len(names)), key=heap.__getitem__)]
    verdict["live_memory_rank"] = [names[i] for i in sorted(range(len(names)), key=rss.__getitem__)]
    verdict["replay_time_rank"] = [names[i] for i in sorted(range(len(names)), key=rtime.__getitem__)]
    verdict["live_time_rank"] = [names[i] for i in sorted(range(len(names)), key=ltime.__getitem__)]
    verdict["replay_time_kind"] = "allocator" if use_alloc else "wall"
    verdict["memory_rho"] = spearman(heap, rss)
    verdict["time_rho"] = spearman(rtime, ltime)
    rho = verdict["memory_rho"]
    verdict["memory_rho_pass"] = rho is not None and rho >= MEMORY_RHO_TARGET
    trho = verdict["time_rho"]
    verdict["time_rho_pass"] = (trho is not None and trho >= TIME_RHO_TARGET) if alloc_bound else None
    rows = []
    if "glibc" in names:
        g = names.index("glibc")
        for i, a in enumerate(names):
            predicted = heap[i] - heap[g]
            actual = rss[i] - rss[g]
            allowed = max(DIFF_TOLERANCE * abs(actual), DIFF_FLOOR_BYTES)
            runs = live[a].get("rss_runs") or [rss[i]]
            rows.append({"allocator": a, "replay_heap_bytes": heap[i], "live_rss_bytes": rss[i],
                         "live_rss_spread_bytes": max(runs) - min(runs),
                         "predicted_diff_bytes": predicted, "live_diff_bytes": actual,
                         "allowed_error_bytes": allowed,
                         "pass": None if a == "glibc" else abs(predicted - actual) <= allowed,
                         "replay_time": rtime[i], "live_wall_seconds": ltime[i]})
    verdict["rows"] = rows
    judged = [r for r in rows if r["pass"] is not None]
    verdict["diff_pass"] = sum(1 for r in judged if r["pass"])
    verdict["diff_judged"] = len(judged)
    return verdict


def print_summary(report: list[dict]) -> None:
    """One line per program: the three scores."""
    print(f"{'program':<16}{'memory rho':>11}{'time rho':>10}  differences within tolerance")
    for e in report:
        v = e.get("verdict")
        if not v or "memory_rho" not in v:
            print(f"{e['program']:<16}{'-':>11}{'-':>10}  (live only)")
            continue
        t = fmt_rho(v["time_rho"]) + ("" if v["alloc_bound"] else "*")
        print(f"{e['program']:<16}{fmt_rho(v['memory_rho']):>11}{t:>10}  "
              f"{v['diff_pass']} / {v['diff_judged']}")
    print(f"(targets: memory rho >= {MEMORY_RHO_TARGET}, time rho >= {TIME_RHO_TARGET}; "
          "* not judged: allocation does not dominate the program's run time)")


def fmt_rho(r: float | None) -> str:
    return "n/a" if r is None else f"{r:+.2f}"


def ok(b: bool | None) -> str:
    return "-" if b is None else ("pass" if b else "FAIL")


def print_verdict(v: dict) -> None:
    print(f"== {v['program']}")
    if not v.get("rows") and not v.get("replay_memory_rank"):
        print("   no allocator with both replay and live figures\n")
        return
    print(f"   memory  replay: {' < '.join(v['replay_memory_rank'])}")
    print(f"           live:   {' < '.join(v['live_memory_rank'])}")
    print(f"           rho {fmt_rho(v['memory_rho'])} (target >= {MEMORY_RHO_TARGET}) "
          f"{ok(v['memory_rho_pass'])}")
    print(f"   time    replay ({v['replay_time_kind']}): {' < '.join(v['replay_time_rank'])}")
    print(f"           live:   {' < '.join(v['live_time_rank'])}")
    judged = "" if v["alloc_bound"] else " (not judged: allocation does not dominate)"
    print(f"           rho {fmt_rho(v['time_rho'])} (target >= {TIME_RHO_TARGET}) "
          f"{ok(v['time_rho_pass'])}{judged}")
    print(f"   {'allocator':<16}{'replay heap':>12}{'live RSS':>10}{'pred diff':>11}"
          f"{'live diff':>11}{'allowed':>9}{'spread':>8}  verdict   replay t  live t  (MiB)")
    for r in v["rows"]:
        unit = "ms"
        print(f"   {r['allocator']:<16}{r['replay_heap_bytes'] / MIB:>12.1f}"
              f"{r['live_rss_bytes'] / MIB:>10.1f}{r['predicted_diff_bytes'] / MIB:>+11.1f}"
              f"{r['live_diff_bytes'] / MIB:>+11.1f}{r['allowed_error_bytes'] / MIB:>9.1f}"
              f"{r['live_rss_spread_bytes'] / MIB:>8.1f}  "
              f"{ok(r['pass']) if r['allocator'] != 'glibc' else 'ref':<8}"
              f"{r['replay_time']:>8.1f}{unit} "
              f"{r['live_wall_seconds']:>6.2f}s")
    print()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=str(REPO / "build"), help="the CMake build directory")
    ap.add_argument("--out", default="fidelity-out", help="where results go")
    ap.add_argument("--allocators", default="", help="comma-separated (default: every available)")
    ap.add_argument("--runs", type=int, default=3, help="replays per allocator (compare --runs)")
    ap.add_argument("--live-runs", type=int, default=3, help="live runs per allocator")
    ap.add_argument("--programs", default="", help="comma-separated subset of the programs")
    ap.add_argument("--no-replay", action="store_true", help="live runs only (no strata compare)")
    ap.add_argument("--own-live", action="store_true",
                    help="do the live runs here even when results.json has live figures")
    args = ap.parse_args()

    build = Path(args.build).resolve()
    strata = build / "bin" / "strata"
    if not strata.exists():
        print(f"fidelity: {strata} not found; build the target strata_cli", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    available = allocators(strata)
    wanted = [a for a in args.allocators.split(",") if a] or list(available)
    unknown = [a for a in wanted if a not in available]
    if unknown:
        print(f"fidelity: not available: {', '.join(unknown)} (see 'strata allocators')",
              file=sys.stderr)
        return 2
    libs = {a: available[a] for a in wanted}
    progs = programs(build)
    chosen = [p for p in args.programs.split(",") if p] or list(progs)
    for p in chosen:
        if p not in progs:
            print(f"fidelity: unknown program {p}; known: {', '.join(progs)}", file=sys.stderr)
            return 2

    report = []
    for name in chosen:
        spec = progs[name]
        cmd = spec["cmd"] or cc1plus_command(out)
        if not Path(cmd[0]).exists() and shutil.which(cmd[0]) is None:
            print(f"fidelity: {cmd[0]} not found; skipping {name} (build the fidelity_* targets)",
                  file=sys.stderr)
            continue
        pdir = out / name
        pdir.mkdir(parents=True, exist_ok=True)
        replay, live = {}, {}
        if not args.no_replay:
            compare = [str(strata), "compare", "--allocators", ",".join(wanted), "--runs",
                       str(args.runs), "--out", str(pdir), "--json", "--no-plots", "--", *cmd]
            print(f"fidelity: {name}: {shlex.join(compare)}", file=sys.stderr)
            done = subprocess.run(compare, cwd=REPO, capture_output=True, text=True)
            (pdir / "compare.stderr").write_text(done.stderr)
            try:
                results = json.loads(done.stdout)
            except json.JSONDecodeError:
                results_file = pdir / "results.json"
                results = json.loads(results_file.read_text()) if results_file.exists() else {}
            if not results:
                print(f"fidelity: {name}: strata compare gave no results (exit {done.returncode};"
                      f" see {pdir / 'compare.stderr'})", file=sys.stderr)
            replay, live = replay_figures(results)
        live_source = "strata compare"
        if not live or args.own_live:
            live_source = "fidelity.py"
            print(f"fidelity: {name}: live runs", file=sys.stderr)
            live = live_runs(cmd, libs, args.live_runs, REPO, pdir)
        entry = {"program": name, "command": cmd, "live_source": live_source,
                 "replay": replay, "live": live}
        if replay:
            entry["verdict"] = judge(name, spec["alloc_bound"], replay, live)
            print_verdict(entry["verdict"])
            # A live run that failed or printed something else than glibc's run measured a
            # different program; say so under its figures.
            for a, l in live.items():
                if l.get("exit", 0) != 0 or not l.get("same_output", True):
                    print(f"   warning: {a}'s live run exited {l.get('exit')} or printed other "
                          "output than glibc's\n")
        else:
            print(f"== {name} (live only)")
            for a, l in live.items():
                print(f"   {a:<16} RSS {l['rss_bytes'] / MIB:8.1f} MiB  wall {l['wall_seconds']:6.2f} s"
                      f"{'' if l.get('same_output', True) else '  OUTPUT DIFFERS'}")
            print()
        report.append(entry)
        (out / "fidelity.json").write_text(json.dumps(report, indent=1))
    print_summary(report)
    print(f"fidelity: results in {out / 'fidelity.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
