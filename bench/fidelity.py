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
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from pylib.fidelity_judge import judge, replay_figures
from pylib.fidelity_live import live_runs
from pylib.fidelity_programs import REPO, cc1plus_command, programs
from pylib.fidelity_report import print_entry, print_summary


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


def parse_args() -> argparse.Namespace:
    """The command line."""
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
    return ap.parse_args()


def chosen_allocators(strata: Path, wanted_csv: str) -> dict[str, str | None] | None:
    """name -> library of the allocators asked for (every available one if none); None
    after saying which are not available."""
    available = allocators(strata)
    wanted = [a for a in wanted_csv.split(",") if a] or list(available)
    unknown = [a for a in wanted if a not in available]
    if unknown:
        print(f"fidelity: not available: {', '.join(unknown)} (see 'strata allocators')",
              file=sys.stderr)
        return None
    return {a: available[a] for a in wanted}


def chosen_programs(progs: dict[str, dict], wanted_csv: str) -> list[str] | None:
    """The programs asked for (all if none); None after naming an unknown one."""
    chosen = [p for p in wanted_csv.split(",") if p] or list(progs)
    for p in chosen:
        if p not in progs:
            print(f"fidelity: unknown program {p}; known: {', '.join(progs)}", file=sys.stderr)
            return None
    return chosen


def compare_replay(strata: Path, name: str, cmd: list[str], allocs: list[str], runs: int,
                   pdir: Path) -> tuple[dict, dict]:
    """Runs `strata compare` on the command; (replay, live) figures from its results."""
    compare = [str(strata), "compare", "--allocators", ",".join(allocs), "--runs",
               str(runs), "--out", str(pdir), "--json", "--no-plots", "--", *cmd]
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
    return replay_figures(results)


def measure_program(args: argparse.Namespace, strata: Path, libs: dict[str, str | None],
                    name: str, spec: dict, out: Path) -> dict | None:
    """One program replayed and run live, judged when there is a replay: its report entry,
    or None when its command is not there."""
    cmd = spec["cmd"] or cc1plus_command(out)
    if not Path(cmd[0]).exists() and shutil.which(cmd[0]) is None:
        print(f"fidelity: {cmd[0]} not found; skipping {name} (build the fidelity_* targets)",
              file=sys.stderr)
        return None
    pdir = out / name
    pdir.mkdir(parents=True, exist_ok=True)
    replay, live = {}, {}
    if not args.no_replay:
        replay, live = compare_replay(strata, name, cmd, list(libs), args.runs, pdir)
    live_source = "strata compare"
    if not live or args.own_live:
        live_source = "fidelity.py"
        print(f"fidelity: {name}: live runs", file=sys.stderr)
        live = live_runs(cmd, libs, args.live_runs, REPO, pdir)
    entry = {"program": name, "command": cmd, "live_source": live_source,
             "replay": replay, "live": live}
    if replay:
        entry["verdict"] = judge(name, spec["alloc_bound"], replay, live)
    return entry


def main() -> int:
    """Measures and judges the chosen programs; exit status 2 on bad usage or a missing
    build."""
    args = parse_args()
    build = Path(args.build).resolve()
    strata = build / "bin" / "strata"
    if not strata.exists():
        print(f"fidelity: {strata} not found; build the target strata_cli", file=sys.stderr)
        return 2
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    libs = chosen_allocators(strata, args.allocators)
    progs = programs(build)
    chosen = chosen_programs(progs, args.programs) if libs is not None else None
    if chosen is None:
        return 2
    report = []
    for name in chosen:
        entry = measure_program(args, strata, libs, name, progs[name], out)
        if entry is None:
            continue
        print_entry(entry)
        report.append(entry)
        (out / "fidelity.json").write_text(json.dumps(report, indent=1))
    print_summary(report)
    print(f"fidelity: results in {out / 'fidelity.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
