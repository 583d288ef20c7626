"""bench/fidelity.py's judgement of one program: the replay's figures from `strata compare`'s
results.json against the live ones, rank correlations and differences from glibc."""
from __future__ import annotations

import statistics

MIB = 1024.0 * 1024.0

# The targets (docs/toolkit/fidelity.md).
MEMORY_RHO_TARGET = 0.9
TIME_RHO_TARGET = 0.8
DIFF_TOLERANCE = 0.10
DIFF_FLOOR_BYTES = 2 * MIB


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
