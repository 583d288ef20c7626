#!/usr/bin/env python3
"""Draws `strata drag`'s plot: the reaps paper's two curves, over allocation time.

Usage: drag_plot.py DIR

Reads DIR/curves.csv (written by `strata drag`: allocated_bytes,live_bytes,ideal_live_bytes,
one row per point) and writes DIR/drag.png and DIR/drag.svg: the bytes the program held as it
ran, and the bytes it would have held had it freed every object right after its last use
(the area between them is the drag). Uses matplotlib's Agg backend, so it needs no display.
Exit status 0 on success, 1 when the input cannot be read (the message names the file).
"""

import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)
from matplotlib.ticker import FuncFormatter  # noqa: E402

MIB = 1024.0 * 1024.0


def read_curves(path):
    """The three columns as lists of floats (MiB)."""
    xs, live, ideal = [], [], []
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows, None)
        if header != ["allocated_bytes", "live_bytes", "ideal_live_bytes"]:
            raise ValueError("unexpected header %r" % (header,))
        for n, row in enumerate(rows, start=2):
            if len(row) != 3:
                raise ValueError("line %d: expected 3 fields, got %d" % (n, len(row)))
            xs.append(float(row[0]) / MIB)
            live.append(float(row[1]) / MIB)
            ideal.append(float(row[2]) / MIB)
    if not xs:
        raise ValueError("no points")
    return xs, live, ideal


def main(argv):
    if len(argv) != 2:
        sys.stderr.write("usage: drag_plot.py DIR\n")
        return 2
    out = argv[1]
    path = os.path.join(out, "curves.csv")
    try:
        xs, live, ideal = read_curves(path)
    except (OSError, ValueError) as e:
        sys.stderr.write("drag_plot.py: %s: %s\n" % (path, e))
        return 1
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.step(xs, live, where="post", color="#d62728", label="live, as the program ran")
    ax.step(xs, ideal, where="post", color="#1f77b4", label="live, freed at last use")
    ax.fill_between(xs, ideal, live, step="post", color="#d62728", alpha=0.15, label="drag")
    ax.set_xlabel("allocation time (MiB allocated)")
    ax.set_ylabel("live MiB")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: "%g" % v))
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.legend(loc="best")
    ax.set_title("Memory held and memory needed")
    fig.tight_layout()
    for ext in ("png", "svg"):
        fig.savefig(os.path.join(out, "drag." + ext))
    plt.close(fig)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
