#!/usr/bin/env python3
"""Draws the plots of `strata compare` from its output directory.

Usage: plots.py DIR

Reads DIR/results.json (written by `strata compare`) and, for each trace in it, the heap/live
series CSVs it names (DIR/series/<trace>-<allocator>.csv: seconds,event,heap_bytes,live_bytes).
Writes, for each trace, as PNG and SVG:
  <trace>-heap       heap size of each allocator over the run, live bytes as a shaded area
  <trace>-sizes      histogram of requested object sizes (log2 buckets)
  <trace>-lifetimes  histogram of object lifetimes (bytes allocated meanwhile, and time)
  <trace>-summary    per allocator: time relative to the fastest, and fragmentation (and, when
                     the command ran live and this is its only process, live time and peak RSS)
  command-summary    when the command ran live: summed replay time and largest peak heap over
                     its processes beside the live wall time and peak RSS
Uses matplotlib's Agg backend, so it needs no display. Exit status 0 on success, 1 when the
input cannot be read (the message names the file).
"""

import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import FuncFormatter  # noqa: E402

MIB = 1024.0 * 1024.0
# Points kept per heap curve: enough for a smooth line, few enough for a small SVG.
MAX_POINTS = 1500
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
          "#17becf", "#7f7f7f", "#bcbd22"]
STYLES = ["-", "--", "-.", ":"]


def read_series(path):
    """Reads one series CSV into lists (seconds, events, heap MiB, live MiB), reduced to at most
    MAX_POINTS points by keeping each stretch's maximum, so peaks stay visible."""
    rows = []
    with open(path, newline="") as f:
        reader = csv.reader(f)
        for row in reader:
            if not row or not row[0][:1].isdigit():
                continue  # the header line
            rows.append((float(row[0]), int(row[1]), int(row[2]), int(row[3])))
    if len(rows) > MAX_POINTS:
        step = (len(rows) + MAX_POINTS - 1) // MAX_POINTS
        reduced = []
        for i in range(0, len(rows), step):
            part = rows[i:i + step]
            last = part[-1]
            reduced.append((last[0], last[1], max(r[2] for r in part), max(r[3] for r in part)))
        rows = reduced
    return ([r[0] for r in rows], [r[1] for r in rows],
            [r[2] / MIB for r in rows], [r[3] / MIB for r in rows])


def save(fig, out_dir, trace, kind):
    """Writes the figure as <trace>-<kind>.png and .svg and closes it."""
    base = os.path.join(out_dir, "%s-%s" % (trace, kind))
    fig.savefig(base + ".png", dpi=110)
    fig.savefig(base + ".svg")
    plt.close(fig)


def empty_note(ax, text):
    """Puts `text` in the middle of an axes that has nothing to show."""
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#555555")
    ax.set_xticks([])
    ax.set_yticks([])


def human_count(x, _pos=None):
    """1234567 -> '1.2M', for axes of event and object counts."""
    for div, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(x) >= div:
            return ("%.1f" % (x / div)).rstrip("0").rstrip(".") + unit
    return "%d" % x


def bucket_label(i, unit):
    """The lower bound 2^i of log2 bucket i (0 for bucket 0), in bytes (B, KiB, MiB, GiB) or
    time (ns .. s)."""
    v = 2 ** i
    if i == 0:
        return "0-1 B" if unit == "bytes" else "0-1 ns"  # bucket 0 also holds 0
    if unit == "bytes":
        for div, name in ((2 ** 30, "GiB"), (2 ** 20, "MiB"), (2 ** 10, "KiB")):
            if v >= div:
                return "%d %s" % (v // div, name)
        return "%d B" % v
    for div, name in ((1e9, "s"), (1e6, "ms"), (1e3, "µs")):
        if v >= div:
            return ("%.3g %s" % (v / div, name))
    return "%d ns" % v


def histogram(ax, counts, unit, xlabel, ylabel):
    """Bars of a log2 histogram, labelled with each bucket's lower bound."""
    if not counts or sum(counts) == 0:
        empty_note(ax, "no objects")
        ax.set_xlabel(xlabel)
        return
    first = next(i for i, c in enumerate(counts) if c > 0)  # leading empty buckets dropped
    xs = list(range(first, len(counts)))
    counts = counts[first:]
    ax.bar(xs, counts, width=0.85, color="#4c72b0", edgecolor="#2a4d80")
    every = max(1, (len(counts) + 13) // 14)
    ax.set_xticks(xs[::every])
    ax.set_xticklabels([bucket_label(i, unit) for i in xs[::every]], rotation=45, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    positive = [c for c in counts if c > 0]
    if max(positive) > 200 * min(positive):
        ax.set_yscale("log")
    else:
        ax.yaxis.set_major_formatter(FuncFormatter(human_count))
    ax.grid(axis="y", alpha=0.3)


def plot_heap(trace, out_dir):
    """Top: heap size of each finished allocator over the run, with live bytes (the same for
    every allocator: they are the trace's) as a shaded area underneath. Bottom: each
    allocator's overhead, heap minus live, which separates curves that overlap at the top."""
    use_events = True
    curves = []
    for r in trace["results"]:
        if not r.get("series_file"):
            continue
        path = os.path.join(out_dir, r["series_file"])
        if not os.path.exists(path):
            continue
        seconds, events, heap, live = read_series(path)
        if not events:
            continue
        if events[-1] == 0:
            use_events = False
        curves.append((r["allocator"], seconds, events, heap, live))
    if not curves:
        fig, ax = plt.subplots(figsize=(10.5, 5.2))
        ax.set_title("%s: heap size over the run, per allocator" % trace["name"])
        empty_note(ax, "no allocator finished a replay")
        fig.tight_layout()
        save(fig, out_dir, trace["name"], "heap")
        return
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10.5, 7.5), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    xmax = 0
    for i, (allocator, seconds, events, heap, live) in enumerate(curves):
        xs = events if use_events else seconds
        xmax = max(xmax, xs[-1])
        if i == 0:
            top.fill_between(xs, live, color="#999999", alpha=0.35, linewidth=0,
                             label="live bytes (the trace's own)")
        style = {"color": COLORS[i % len(COLORS)], "linestyle": STYLES[i % len(STYLES)],
                 "linewidth": 1.6}
        top.plot(xs, heap, label="%s heap" % allocator, **style)
        bottom.plot(xs, [h - lv for h, lv in zip(heap, live)], **style)
    top.set_title("%s: heap size over the run, per allocator" % trace["name"])
    top.set_ylabel("heap size (MiB)")
    bottom.set_ylabel("heap - live (MiB)")
    bottom.set_title("overhead: memory held beyond the live bytes", fontsize="medium")
    bottom.set_xlabel("events replayed" if use_events else "replay time (s)")
    if use_events:
        bottom.xaxis.set_major_formatter(FuncFormatter(human_count))
    for ax in (top, bottom):
        ax.set_ylim(bottom=0)
        ax.set_xlim(0, xmax if xmax > 0 else None)
        ax.grid(alpha=0.3)
    # Outside the axes, so it never hides a curve.
    top.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)
    fig.tight_layout()
    save(fig, out_dir, trace["name"], "heap")


def plot_sizes(trace, out_dir):
    """Histogram of the requested sizes of the trace's objects."""
    fig, ax = plt.subplots(figsize=(8, 4.8))
    stats = trace.get("stats", {})
    histogram(ax, stats.get("sizes_log2", []), "bytes",
              "requested size (log2 buckets, lower bound)", "objects")
    ax.set_title("%s: object sizes (%s objects)" % (trace["name"],
                                                   human_count(stats.get("total_objects", 0))))
    fig.tight_layout()
    save(fig, out_dir, trace["name"], "sizes")


def plot_lifetimes(trace, out_dir):
    """Histograms of how long freed objects lived: in bytes allocated meanwhile (independent of
    the machine) and, when the trace has timestamps, in time."""
    stats = trace.get("stats", {})
    by_time = stats.get("lifetime_ns_log2", [])
    panels = 2 if by_time and sum(by_time) > 0 else 1
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 4.8), squeeze=False)
    histogram(axes[0][0], stats.get("lifetime_bytes_log2", []), "bytes",
              "lifetime: bytes allocated meanwhile (log2 buckets)", "freed objects")
    axes[0][0].set_title("in bytes allocated")
    if panels == 2:
        histogram(axes[0][1], by_time, "time", "lifetime: time (log2 buckets)", "freed objects")
        axes[0][1].set_title("in time")
    fig.suptitle("%s: object lifetimes" % trace["name"])
    fig.tight_layout()
    save(fig, out_dir, trace["name"], "lifetimes")


def bars(ax, names, values, color, fmt, reference=None):
    """Horizontal-label bar chart with each value written above its bar."""
    xs = list(range(len(names)))
    rects = ax.bar(xs, values, color=color, width=0.6)
    ax.set_xticks(xs)
    ax.set_xticklabels(names, rotation=30, ha="right")
    top = max(values) if values else 1
    for rect, v in zip(rects, values):
        ax.text(rect.get_x() + rect.get_width() / 2, rect.get_height() + top * 0.01, fmt % v,
                ha="center", va="bottom", fontsize="small")
    if reference is not None:
        ax.axhline(reference, color="#333333", linewidth=0.8, linestyle="--")
    ax.set_ylim(0, top * 1.15 if top > 0 else 1)
    ax.grid(axis="y", alpha=0.3)


def live_bars(live_left, live_right, live):
    """The live runs as two bar charts: wall time and peak RSS of each allocator that ran the
    command as the reference did."""
    ok = [r for r in live.get("results", []) if r.get("status") == "ok"]
    if not ok:
        empty_note(live_left, "no allocator ran the command cleanly")
        empty_note(live_right, "no allocator ran the command cleanly")
        return
    names = [r["allocator"] for r in ok]
    bars(live_left, names, [r.get("time_ms") or 0 for r in ok], "#55a868", "%.1f")
    live_left.set_ylabel("live wall time (ms)")
    live_left.set_title("the command run live: time (lower is better)")
    bars(live_right, names, [(r.get("max_rss_bytes") or 0) / MIB for r in ok], "#c44e52", "%.1f")
    live_right.set_ylabel("peak RSS (MiB)")
    live_right.set_title("the command run live: peak RSS (lower is better)")


def plot_command_summary(command, out_dir):
    """command-summary: over the processes replayed, the summed replay time and the largest
    peak heap; beside them the live runs' wall time and peak RSS."""
    combined = [r for r in command.get("combined", {}).get("allocators", []) if r.get("finished")]
    fig, axes = plt.subplots(2, 2, figsize=(11, 9))
    if combined:
        names = [r["allocator"] for r in combined]
        bars(axes[0][0], names, [r.get("time_ms") or 0 for r in combined], "#4c72b0", "%.2f")
        axes[0][0].set_ylabel("replay time, summed over processes (ms)")
        axes[0][0].set_title("replay: time (lower is better)")
        bars(axes[0][1], names, [(r.get("peak_heap_bytes") or 0) / MIB for r in combined],
             "#dd8452", "%.1f")
        axes[0][1].set_ylabel("largest peak heap over processes (MiB)")
        axes[0][1].set_title("replay: peak heap (lower is better)")
    else:
        empty_note(axes[0][0], "no replay")
        empty_note(axes[0][1], "no replay")
    live_bars(axes[1][0], axes[1][1], command.get("live") or {})
    fig.suptitle("the command as a whole: %s" % command.get("command_line", ""))
    fig.tight_layout()
    save(fig, out_dir, "command", "summary")


def plot_summary(trace, out_dir, live=None):
    """Two bar charts over the allocators that finished: time relative to the fastest (lower is
    better) and fragmentation, peak heap over peak live (lower is better); with `live` (the
    command run live, when this trace is its only process) two more: live time and peak RSS."""
    ok = [r for r in trace["results"] if r.get("status") == "ok"]
    missing = [r["allocator"] for r in trace["results"] if r.get("status") != "ok"]
    if live:
        fig, axes = plt.subplots(2, 2, figsize=(11, 9))
        (left, right) = axes[0]
        live_bars(axes[1][0], axes[1][1], live)
    else:
        fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.8))
    if not ok:
        empty_note(left, "no allocator finished a replay")
        empty_note(right, "no allocator finished a replay")
    else:
        names = [r["allocator"] for r in ok]
        bars(left, names, [r.get("ratio") or 0 for r in ok], "#4c72b0", "%.2fx", reference=1.0)
        left.set_ylabel("wall time / fastest allocator's")
        left.set_title("time (lower is better)")
        bars(right, names, [r.get("fragmentation_percent") or 0 for r in ok], "#dd8452", "%.1f%%")
        right.set_ylabel("peak heap / peak live - 1 (%)")
        right.set_title("fragmentation (lower is better)")
    title = "%s: allocators compared" % trace["name"]
    if missing:
        title += " (not shown: %s)" % ", ".join(missing)
    fig.suptitle(title)
    fig.tight_layout()
    save(fig, out_dir, trace["name"], "summary")


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: plots.py DIR  (the output directory of `strata compare`)\n")
        return 2
    out_dir = argv[1]
    results_path = os.path.join(out_dir, "results.json")
    try:
        with open(results_path) as f:
            results = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("plots.py: cannot read %s: %s\n" % (results_path, e))
        return 1
    try:
        traces = results.get("traces", [])
        command = results.get("command")
        live = command.get("live") if command else None
        for trace in traces:
            plot_heap(trace, out_dir)
            plot_sizes(trace, out_dir)
            plot_lifetimes(trace, out_dir)
            plot_summary(trace, out_dir, live if len(traces) == 1 else None)
        if live:
            plot_command_summary(command, out_dir)
    except (OSError, ValueError, KeyError, IndexError) as e:
        sys.stderr.write("plots.py: %s: %s\n" % (out_dir, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
