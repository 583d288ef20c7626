"""What bench/fidelity.py prints: per program its verdict (or its live figures), then a summary."""
from __future__ import annotations

from pylib.fidelity_judge import MEMORY_RHO_TARGET, MIB, TIME_RHO_TARGET


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


def print_entry(entry: dict) -> None:
    """One program's report: the verdict with a warning under it for each live run that
    failed or printed something else than glibc's (it measured a different program), or
    the live figures alone."""
    live = entry["live"]
    if entry["replay"]:
        print_verdict(entry["verdict"])
        for a, l in live.items():
            if l.get("exit", 0) != 0 or not l.get("same_output", True):
                print(f"   warning: {a}'s live run exited {l.get('exit')} or printed other "
                      "output than glibc's\n")
        return
    print(f"== {entry['program']} (live only)")
    for a, l in live.items():
        print(f"   {a:<16} RSS {l['rss_bytes'] / MIB:8.1f} MiB  wall {l['wall_seconds']:6.2f} s"
              f"{'' if l.get('same_output', True) else '  OUTPUT DIFFERS'}")
    print()
