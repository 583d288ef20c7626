#!/usr/bin/env python3
"""The drop-in suite: whole malloc libraries judged by LD_PRELOAD (bench/README.md).

Runs a set of programs -- the C workloads of bench/dropin/ and real programs from Debian
(python3, perl, sqlite3, g++, redis-server) -- once per round under each allocator that
`strata allocators --paths` lists (glibc = nothing preloaded), every run a fresh process
started through dropin_launch (which reports the child's own peak RSS), and prints per
workload the median wall time, its paired ratios to glibc and to mimalloc, the median peak
RSS and its paired ratio to glibc; then a summary: per allocator the geometric mean of each
ratio over the workloads, the worst time ratio to the fastest peer (glibc, jemalloc,
mimalloc, tcmalloc) and the worst RSS ratio to glibc. A run that fails, times out, prints
the wrong output or did not get the preloaded malloc is an error in the table.

    bench/dropin_suite.py [--build DIR] [--allocators a,LABEL=LIB.so] [--workloads a,b] [--rounds N]
                          [--quick] [--timeout S] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pylib.dropin_checks import binding_probe
from pylib.dropin_runner import Runner
from pylib.dropin_runs import run_once
from pylib.dropin_tables import mark_odd_results, summary, workload_table
from pylib.dropin_workloads import gxx_source, workloads


def allocators(strata: Path) -> dict[str, str | None]:
    """name -> library (None = nothing preloaded) from `strata allocators --paths`."""
    out = subprocess.run([str(strata), "allocators", "--paths"], capture_output=True,
                         text=True, check=True).stdout
    found = {}
    for line in out.splitlines():
        name, _, lib = line.partition("\t")
        if name:
            found[name] = lib or None
    return found


def libc_path(runner: Runner, bindir: Path) -> str:
    """The C library's path, as dladdr names it in a program with nothing preloaded."""
    r = runner.run([str(bindir / "dropin_tiny")], None)
    for line in (r.get("stdout") or "").splitlines():
        if line.startswith("malloc "):
            return line[7:]
    raise SystemExit("dropin_suite: cannot find the C library (dropin_tiny did not run)")


def preload_for(w: dict, name: str, lib: str | None, libc: str) -> str | None:
    """What to preload for this allocator on this workload. Nothing for glibc, except for
    redis: Debian's redis-server is linked with libjemalloc, so with nothing preloaded it
    runs on jemalloc; preloading libc.so.6 puts glibc's malloc first."""
    if name == "glibc" and w["kind"] == "redis":
        return libc
    return lib


def missing_tool(w: dict) -> str:
    """Why a workload cannot run here ('' if it can)."""
    need = {"real": [w.get("argv", [""])[0]], "gxx": ["g++"],
            "redis": ["redis-server", "redis-benchmark", "redis-cli"]}.get(w["kind"], [])
    for tool in need:
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    return ""


def probe_all(runner: Runner, w: dict, libs: dict[str, str | None], libc: str) -> dict[str, str]:
    """Per allocator: '' if its library took over malloc in this real program, else why
    not. The C programs report it themselves on every run."""
    argv = {"real": w.get("probe"), "gxx": ["g++", "-O0", "-c", str(runner.scratch / "probe.cpp"),
                                            "-o", str(runner.scratch / "probe.o")],
            "redis": ["redis-server", "--version"]}.get(w["kind"])
    if argv is None:
        return {}
    (runner.scratch / "probe.cpp").write_text("#include <string>\nstd::string f() { return \"x\"; }\n")
    return {a: binding_probe(runner, argv, preload_for(w, a, lib, libc), w["process"])
            for a, lib in libs.items()}


def run_workload(runner: Runner, bindir: Path, w: dict, libs: dict[str, str | None],
                 libc: str, rounds: int, quick: bool,
                 probe: dict[str, str]) -> dict[str, list[dict]]:
    """Every allocator once per round, the first one rotating; allocators whose preload
    probe (run by the caller: `probe`, allocator -> error or '') failed get that error
    instead of runs."""
    names = list(libs)
    samples: dict[str, list[dict]] = {a: [] for a in names}
    for rnd in range(rounds):
        for k in range(len(names)):
            a = names[(k + rnd) % len(names)]
            if probe.get(a):
                samples[a].append({"ok": False, "error": probe[a]})
                continue
            samples[a].append(run_once(runner, bindir, w, a, preload_for(w, a, libs[a], libc), quick))
    mark_odd_results(samples)
    return samples


def parse_args() -> argparse.Namespace:
    """The command line."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build", help="the CMake build directory (default build)")
    ap.add_argument("--allocators", default="", help="comma-separated names, or LABEL=PATH for a "
                    "library of your own (default: all available)")
    ap.add_argument("--workloads", default="", help="comma-separated (default: all)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 5; 2 with --quick)")
    ap.add_argument("--quick", action="store_true", help="small sizes, for a smoke test")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per run (default 120)")
    ap.add_argument("--json", default="", help="write everything measured to this file")
    return ap.parse_args()


def select(wanted: str, known: dict, what: str) -> list[str]:
    """The comma-separated names asked for (all if none), or exit 2 on an unknown one."""
    names = [x for x in wanted.split(",") if x] or list(known)
    unknown = [x for x in names if x not in known]
    if unknown:
        print(f"dropin_suite: unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})",
              file=sys.stderr)
        sys.exit(2)
    return names


def chosen_libraries(wanted: str, available: dict[str, str | None]) -> dict[str, str | None]:
    """name -> library for the allocators asked for: known names, or LABEL=PATH for a
    library of one's own (a build to judge beside the others); exit 2 on an unknown name or
    a missing library."""
    own = {}
    names = []
    for item in [x for x in wanted.split(",") if x]:
        label, sep, path = item.partition("=")
        if not sep:
            names.append(item)
            continue
        if not label or label in available or not Path(path).is_file():
            print(f"dropin_suite: bad allocator {item!r}: LABEL=PATH needs a new label and an "
                  "existing library", file=sys.stderr)
            sys.exit(2)
        own[label] = str(Path(path).resolve())
    libs = {a: available[a] for a in select(",".join(names), available, "allocator")} \
        if names or not own else {}
    libs.update(own)
    return libs


def main() -> int:
    """Runs the chosen workloads on the chosen allocators and prints the tables; exit
    status 1 if any run failed, 2 on bad usage or a missing build."""
    args = parse_args()
    build = Path(args.build).resolve()
    bindir = build / "bin"
    launcher = bindir / "dropin_launch"
    for need in (bindir / "strata", launcher):
        if not need.exists():
            print(f"dropin_suite: {need} not found; build the targets strata_cli, dropin_launch "
                  "and the dropin_* programs", file=sys.stderr)
            return 2
    rounds = args.rounds or (2 if args.quick else 5)
    available = allocators(bindir / "strata")
    libs = chosen_libraries(args.allocators, available)
    all_workloads = workloads()
    chosen = select(args.workloads, all_workloads, "workload")
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="dropin-") as tmp:
        runner = Runner(launcher, Path(tmp), args.timeout)
        libc = libc_path(runner, bindir)
        gxx_source(Path(tmp) / "gxx_tu.cpp", 1 if args.quick else 3)
        print(f"Drop-in suite: every run a fresh process under LD_PRELOAD; {rounds} rounds"
              f"{' (--quick: small sizes)' if args.quick else ''}; medians and paired ratios")
        for a, lib in libs.items():
            print(f"  {a:<16} {lib or '(nothing preloaded)'}")
        report = {"rounds": rounds, "quick": args.quick, "allocators": libs, "workloads": {}}
        table = {}
        for name in chosen:
            w = all_workloads[name]
            if w["kind"] == "c" and not (bindir / w["program"]).exists():
                print(f"\n{name}: skipped, {bindir / w['program']} not built")
                continue
            why = missing_tool(w)
            if why:
                print(f"\n{name}: skipped, {why}")
                continue
            probe = probe_all(runner, w, libs, libc)
            samples = run_workload(runner, bindir, w, libs, libc, rounds, args.quick, probe)
            table[name] = workload_table(name, w, samples)
            report["workloads"][name] = {
                "what": w["what"], "runs": samples, "figures": table[name],
                "preload_check": {a: probe.get(a) or ("ok" if probe else "reported by each run")
                                  for a in libs}}
        report["summary"] = summary(table, list(libs))
        report["seconds"] = time.monotonic() - start
        print(f"\n({report['seconds']:.0f} s)")
        if args.json:
            Path(args.json).write_text(json.dumps(report, indent=1))
    failed = any(r["failed_runs"] for t in table.values() for r in t.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
