#!/usr/bin/env python3
"""The attack suite: what each allocator does about heap misuse (bench/README.md).

Runs each attack program of bench/attacks/ (one kind of misuse each: double free, free of a
pointer the heap never gave out, overflow, write after free, ...) at three sizes (tiny, page,
large) under each allocator, every run a fresh process with the library in LD_PRELOAD
(glibc: nothing preloaded), and prints a table of the outcomes:

    caught   the process stopped with SIGABRT, or exited non-zero with a report on stderr:
             a check found the misuse (the report's first line is kept in the JSON)
    crash    it stopped with another signal (SIGSEGV, SIGBUS, ...): stopped, but by chance,
             not by a check
    -        it ran to the end: the misuse went unnoticed
    hang     it did not end within the timeout

The allocators are those `strata allocators --paths` lists, and Scudo (LLVM's hardened
allocator, from Debian's libclang-rt-14-dev) when its library is installed.

    bench/attack_suite.py [--build DIR] [--allocators a,LABEL=LIB.so] [--attacks a,b]
                          [--sizes tiny,page,large] [--timeout S] [--json FILE]
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

SIZES = ["tiny", "page", "large"]
SCUDO_GLOB = "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.scudo_standalone-x86_64.so"


def known_allocators(strata: Path) -> dict[str, str | None]:
    """name -> library (None: nothing preloaded), from `strata allocators --paths`, and
    Scudo when installed."""
    found: dict[str, str | None] = {"glibc": None}
    if strata.exists():
        out = subprocess.run([str(strata), "allocators", "--paths"], capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            name, _, lib = line.partition("\t")
            if name:
                found[name] = lib or None
    scudo = sorted(glob.glob(SCUDO_GLOB))
    if scudo:
        found["scudo"] = scudo[-1]
    return found


def chosen(wanted: str, known: dict[str, str | None]) -> dict[str, str | None]:
    if not wanted:
        return known
    libs: dict[str, str | None] = {}
    for item in wanted.split(","):
        label, eq, path = item.partition("=")
        if eq:
            if not Path(path).is_file():
                raise SystemExit(f"attack_suite: no library at {path}")
            libs[label] = str(Path(path).resolve())
        elif label in known:
            libs[label] = known[label]
        else:
            raise SystemExit(f"attack_suite: unknown allocator {label!r} (known: {', '.join(known)})")
    return libs


def attack_names(bindir: Path) -> list[str]:
    return sorted(p.name[len("attack_"):] for p in bindir.glob("attack_*") if os.access(p, os.X_OK))


def env_for(lib: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if lib:
        env["LD_PRELOAD"] = lib
    return env


def check_binding(bindir: Path, attack: str, name: str, lib: str | None) -> str:
    """'' when malloc in the attack programs comes from lib (libc for glibc), else why not."""
    r = subprocess.run([str(bindir / f"attack_{attack}"), "which"], env=env_for(lib),
                       capture_output=True, text=True, timeout=30)
    line = r.stdout.strip()
    wanted = os.path.basename(lib) if lib else "libc.so.6"
    if r.returncode != 0 or not line.startswith("malloc "):
        return f"{name}: the check run failed ({r.stderr.strip()[:200]})"
    if os.path.basename(line[7:]) != wanted:
        return f"{name}: malloc came from {line[7:]}, not {wanted}"
    return ""


def run_attack(bindir: Path, attack: str, size: str, lib: str | None, timeout: float) -> dict:
    argv = [str(bindir / f"attack_{attack}"), size]
    try:
        r = subprocess.run(argv, env=env_for(lib), capture_output=True, text=True,
                           errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"outcome": "hang", "report": ""}
    report = next((ln.strip() for ln in r.stderr.splitlines() if ln.strip()), "")
    if r.returncode == 0 and "completed" in r.stdout:
        return {"outcome": "missed", "report": r.stdout.strip().splitlines()[0]}
    if r.returncode == -signal.SIGABRT or (r.returncode > 0 and report):
        return {"outcome": "caught", "report": report}
    if r.returncode < 0:
        return {"outcome": "crash", "report": signal.Signals(-r.returncode).name}
    return {"outcome": "error", "report": f"exit status {r.returncode} {report}".strip()}


CELL = {"caught": "caught", "crash": "crash", "missed": "-", "hang": "HANG", "error": "error"}


def table(results: dict, attacks: list[str], sizes: list[str], libs: list[str]) -> str:
    width = max(8, *(len(n) for n in libs)) + 2
    lines = ["attack                          size " + "".join(n.rjust(width) for n in libs)]
    for a in attacks:
        for s in sizes:
            cells = "".join(CELL[results[n][a][s]["outcome"]].rjust(width) for n in libs)
            lines.append(f"{a:31} {s:5}{cells}")
    lines.append("")
    for n in libs:
        counts = {k: 0 for k in CELL}
        for a in attacks:
            for s in sizes:
                counts[results[n][a][s]["outcome"]] += 1
        total = len(attacks) * len(sizes)
        lines.append(f"{n:16} caught {counts['caught']:2} of {total}, crashed {counts['crash']:2}, "
                     f"missed {counts['missed']:2}" +
                     (f", hung {counts['hang']}" if counts["hang"] else "") +
                     (f", errors {counts['error']}" if counts["error"] else ""))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description="The attack suite: heap misuse under each allocator "
                                             "(bench/README.md).")
    ap.add_argument("--build", default="build", help="the CMake build directory (default build)")
    ap.add_argument("--allocators", default="",
                    help="comma-separated names, or LABEL=PATH for a library of your own "
                         "(default: all available, and Scudo when installed)")
    ap.add_argument("--attacks", default="", help="comma-separated (default: all)")
    ap.add_argument("--sizes", default=",".join(SIZES), help="comma-separated of tiny,page,large")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per run (default 20)")
    ap.add_argument("--json", help="write every outcome and report to this file")
    args = ap.parse_args()

    build = Path(args.build)
    bindir = build / "bin"
    available = attack_names(bindir)
    if not available:
        print(f"attack_suite: no attack programs in {bindir} (build the CMake targets attack_*)",
              file=sys.stderr)
        return 2
    attacks = args.attacks.split(",") if args.attacks else available
    for a in attacks:
        if a not in available:
            print(f"attack_suite: unknown attack {a!r} (known: {', '.join(available)})", file=sys.stderr)
            return 2
    sizes = args.sizes.split(",")
    if any(s not in SIZES for s in sizes):
        print(f"attack_suite: --sizes takes {','.join(SIZES)}", file=sys.stderr)
        return 2
    libs = chosen(args.allocators, known_allocators(bindir / "strata"))
    for name, lib in libs.items():
        if why := check_binding(bindir, attacks[0], name, lib):
            print(f"attack_suite: {why}", file=sys.stderr)
            return 1

    print("Attack suite: each program commits one misuse, then carries on; every run a fresh "
          "process under LD_PRELOAD")
    for name, lib in libs.items():
        print(f"  {name:16} {lib or '(nothing preloaded)'}")
    print()
    results = {n: {a: {s: run_attack(bindir, a, s, lib, args.timeout) for s in sizes}
                   for a in attacks} for n, lib in libs.items()}
    print(table(results, attacks, sizes, list(libs)))
    if args.json:
        Path(args.json).write_text(json.dumps({"allocators": libs, "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
