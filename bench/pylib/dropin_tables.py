"""The drop-in suite's statistics and tables: per workload, then the summary."""
from __future__ import annotations

import math
import statistics
import sys

MIB = 1024.0 * 1024.0
PEERS = ("glibc", "jemalloc", "mimalloc", "tcmalloc")


def paired(a: list[dict], base: list[dict], field: str) -> float | None:
    """Median over the rounds where both ran of a[round][field] / base[round][field]."""
    ratios = [x[field] / y[field] for x, y in zip(a, base) if x["ok"] and y["ok"] and y[field] > 0]
    return statistics.median(ratios) if ratios else None


def to_fastest_peer(samples: dict[str, list[dict]], name: str) -> float | None:
    """Median over the rounds of this allocator's time / the fastest peer's in that round."""
    peers = [p for p in PEERS if p in samples]
    ratios = []
    for i, s in enumerate(samples[name]):
        times = [samples[p][i]["wall"] for p in peers if samples[p][i]["ok"]]
        if s["ok"] and times:
            ratios.append(s["wall"] / min(times))
    return statistics.median(ratios) if ratios else None


def geomean(values: list[float | None]) -> float | None:
    """Geometric mean of the values present."""
    v = [x for x in values if x]
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def fmt(x: float | None, spec: str = ".2f") -> str:
    """A number, or '-' when there is none."""
    return "-" if x is None else format(x, spec)


def mark_odd_results(samples: dict[str, list[dict]]) -> None:
    """Turns a successful run whose result differs from the majority's into an error: the
    programs are deterministic, so a different result means a different program ran."""
    results = [s["result"] for runs in samples.values() for s in runs if s["ok"]]
    if not results:
        return
    common = statistics.mode(results)
    for runs in samples.values():
        for s in runs:
            if s["ok"] and s["result"] != common:
                s.update(ok=False, error="result differs from the other runs: " + s["result"][:60])


def workload_table(name: str, w: dict, samples: dict[str, list[dict]]) -> dict:
    """Prints one workload's table and returns its figures per allocator."""
    print(f"\n{name} — {w['what']}")
    print(f"{'allocator':<16} {'time ms':>9} {'/glibc':>7} {'/mimalloc':>9} {'RSS MiB':>8} "
          f"{'RSS/glibc':>9}  status")
    rows = {}
    for a, runs in samples.items():
        ok = [s for s in runs if s["ok"]]
        errors = [s["error"] for s in runs if not s["ok"]]
        row = {"time_ms": statistics.median(s["wall"] for s in ok) * 1000 if ok else None,
               "rss_mib": statistics.median(s["rss"] for s in ok) / MIB if ok else None,
               "time_to_glibc": paired(runs, samples["glibc"], "wall") if "glibc" in samples else None,
               "time_to_mimalloc": paired(runs, samples["mimalloc"], "wall") if "mimalloc" in samples else None,
               "rss_to_glibc": paired(runs, samples["glibc"], "rss") if "glibc" in samples else None,
               "time_to_fastest_peer": to_fastest_peer(samples, a),
               "failed_runs": len(errors), "errors": errors}
        rows[a] = row
        status = "ok" if not errors else (f"ERROR in all {len(runs)} runs: " if not ok else
                                          f"ERROR in {len(errors)} runs: ") + errors[0]
        print(f"{a:<16} {fmt(row['time_ms'], '.1f'):>9} {fmt(row['time_to_glibc']):>7} "
              f"{fmt(row['time_to_mimalloc']):>9} {fmt(row['rss_mib'], '.1f'):>8} "
              f"{fmt(row['rss_to_glibc']):>9}  {status}")
    sys.stdout.flush()
    return rows


def summary(table: dict[str, dict], names: list[str]) -> dict:
    """Prints and returns, per allocator, the geometric means of the ratios over the
    workloads, the worst time ratio to the fastest peer and the worst RSS/glibc."""
    print(f"\nsummary — geometric mean over the {len(table)} workloads of the per-workload "
          "ratios; worst = the workload where the allocator does worst")
    print(f"{'allocator':<16} {'time/glibc':>10} {'time/mimalloc':>13} {'RSS/glibc':>9}  "
          f"{'worst time/fastest peer':<32} {'worst RSS/glibc':<28} errors")
    out = {}
    for a in names:
        rows = {w: t[a] for w, t in table.items() if a in t}
        worst_t = max(((r["time_to_fastest_peer"], w) for w, r in rows.items()
                       if r["time_to_fastest_peer"]), default=(None, "-"))
        worst_r = max(((r["rss_to_glibc"], w) for w, r in rows.items() if r["rss_to_glibc"]),
                      default=(None, "-"))
        failed = sum(r["failed_runs"] for r in rows.values())
        s = {"time_to_glibc": geomean([r["time_to_glibc"] for r in rows.values()]),
             "time_to_mimalloc": geomean([r["time_to_mimalloc"] for r in rows.values()]),
             "rss_to_glibc": geomean([r["rss_to_glibc"] for r in rows.values()]),
             "worst_time_to_fastest_peer": {"ratio": worst_t[0], "workload": worst_t[1]},
             "worst_rss_to_glibc": {"ratio": worst_r[0], "workload": worst_r[1]},
             "failed_runs": failed}
        out[a] = s
        print(f"{a:<16} {fmt(s['time_to_glibc']):>10} {fmt(s['time_to_mimalloc']):>13} "
              f"{fmt(s['rss_to_glibc']):>9}  {fmt(worst_t[0]) + ' ' + worst_t[1]:<32} "
              f"{fmt(worst_r[0]) + ' ' + worst_r[1]:<28} {failed or ''}")
    return out
