#!/usr/bin/env python3
"""Draws `strata tune`'s Pareto front: every setting tried, time against peak heap as ratios to
glibc's default (candidates.csv in DIR), each allocator in its own colour, its default as a
square, the recommended setting as a star, the front as a line. Writes DIR/pareto.png and
DIR/pareto.svg.

usage: tune_plot.py DIR
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    out_dir = argv[1]
    with open(os.path.join(out_dir, "candidates.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    fig, ax = plt.subplots(figsize=(8, 6))
    if not rows:
        ax.text(0.5, 0.5, "no setting ran", ha="center", va="center", transform=ax.transAxes)
    names = []
    for r in rows:
        if r["allocator"] not in names:
            names.append(r["allocator"])
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, name in enumerate(names):
        mine = [r for r in rows if r["allocator"] == name]
        colour = colours[i % len(colours)]
        xs = [float(r["time_ratio"]) for r in mine]
        ys = [float(r["heap_ratio"]) for r in mine]
        ax.scatter(xs, ys, s=14, alpha=0.5, color=colour, label=name)
        for r in mine:
            if r["default"] == "1":
                ax.scatter([float(r["time_ratio"])], [float(r["heap_ratio"])], marker="s", s=60,
                           facecolors="none", edgecolors=colour)
            if r["best"] == "1":
                ax.scatter([float(r["time_ratio"])], [float(r["heap_ratio"])], marker="*", s=160,
                           color=colour, edgecolors="black")
                ax.annotate(r["setting"], (float(r["time_ratio"]), float(r["heap_ratio"])),
                            fontsize=7, xytext=(4, 4), textcoords="offset points")
    front = sorted((float(r["time_ratio"]), float(r["heap_ratio"])) for r in rows if r["front"] == "1")
    if front:
        ax.step([p[0] for p in front], [p[1] for p in front], where="post", color="black",
                linewidth=1, label="Pareto front")
    ax.set_xlabel("replay time / glibc default")
    ax.set_ylabel("peak heap / glibc default")
    ax.set_title("strata tune: every setting tried (square: default, star: recommended)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out_dir, "pareto." + ext))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
