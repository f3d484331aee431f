#!/usr/bin/python3
"""plot.py — the benchmarks' CSV (noncontig -csv, workloads -csv) as PNG plots.

usage: noncontig/plot.py CSV [CSV ...] -o DIR

Writes into DIR, for the noncontig rows (one set per label and node count):
  noncontig-bandwidth-<tag>.png  MiB/s against element size, every mode,
                                 with the raw contiguous rate of the same run
  noncontig-ratio-<tag>.png      bbfs against stock ROMIO (same mode; the
                                 replay against write_all) per element size
and for the workloads rows:
  workloads-<phase>-<tag>.png    MiB/s of every consistency model and of
                                 stock ROMIO, side by side, per workload and
                                 access size (error bars: min to max)
Needs matplotlib (Debian: python3-matplotlib).
"""
import argparse
import collections
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_rows(paths):
    """Every row of every file; a line starting "bench," is a header that
    holds for the rows after it (one file may collect several tools)."""
    rows = []
    for path in paths:
        with open(path, newline="") as f:
            lines = f.read().splitlines()
        starts = [i for i, line in enumerate(lines) if line.startswith("bench,")]
        for a, b in zip(starts, starts[1:] + [len(lines)]):
            rows.extend(csv.DictReader(lines[a:b]))
    # Before 2026-11-24 both replays were "replay of it", each below its
    # deferred row: name them as noncontig now does, or one hid the other.
    for prev, r in zip([None] + rows, rows):
        if r.get("mode") == "replay of it" and prev and prev["mode"].endswith(", deferred"):
            r["mode"] = prev["mode"].replace(", deferred", ", its replay")
    return rows


def tag_of(row):
    label = row["label"].strip() or "run"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in label)
    return f"{safe}-{row['nodes']}node-{row['nprocs']}p"


def size_label(b):
    b = int(b)
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= div and b % div == 0:
            return f"{b // div}{unit}"
    return f"{b}B"


def save(fig, outdir, name):
    path = os.path.join(outdir, name)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_noncontig(rows, outdir):
    made = []
    groups = collections.defaultdict(list)
    for r in rows:
        groups[tag_of(r)].append(r)
    for tag, rs in sorted(groups.items()):
        sizes = sorted({int(r["elmtsize"]) for r in rs})
        series = collections.OrderedDict()
        for r in rs:
            series.setdefault(f"{r['target']} {r['mode']}", {})[int(r["elmtsize"])] = r
        fig, ax = plt.subplots(figsize=(8, 5))
        for name, by_size in series.items():
            xs = [s for s in sizes if s in by_size]
            ys = [float(by_size[s]["mib_s"]) for s in xs]
            style = "k--" if name.startswith("raw") else "o-"
            ax.plot(xs, ys, style, label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(sizes, [size_label(s) for s in sizes])
        ax.set_xlabel("element size")
        ax.set_ylabel("MiB/s (median, open to close)")
        ax.set_title(f"noncontig, {tag}")
        ax.legend(fontsize=7)
        ax.grid(True, which="both", alpha=0.3)
        made.append(save(fig, outdir, f"noncontig-bandwidth-{tag}.png"))

        ratio = [(n, by) for n, by in series.items()
                 if not n.startswith(("raw", "ufs:"))]
        fig, ax = plt.subplots(figsize=(8, 5))
        width = 0.8 / max(len(ratio), 1)
        for i, (name, by_size) in enumerate(ratio):
            xs = [k + i * width for k, s in enumerate(sizes) if s in by_size]
            ys = [float(by_size[s]["ratio"]) for s in sizes if s in by_size]
            ax.bar(xs, ys, width, label=name)
        ax.axhline(1, color="k", linewidth=0.8)
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(sizes))],
                      [size_label(s) for s in sizes])
        ax.set_xlabel("element size")
        ax.set_ylabel("x stock ROMIO (ratio of medians)")
        ax.set_title(f"bbfs against stock ROMIO, {tag}")
        ax.legend(fontsize=7)
        made.append(save(fig, outdir, f"noncontig-ratio-{tag}.png"))
    return made


def plot_workloads(rows, outdir):
    made = []
    groups = collections.defaultdict(list)
    for r in rows:
        groups[(tag_of(r), r["phase"])].append(r)
    for (tag, phase), rs in sorted(groups.items()):
        cases = list(collections.OrderedDict.fromkeys(
            (r["workload"], int(r["size"])) for r in rs))
        modes = list(collections.OrderedDict.fromkeys(r["mode"] for r in rs))
        by = {(r["workload"], int(r["size"]), r["mode"]): r for r in rs}
        fig, ax = plt.subplots(figsize=(max(8, 1.4 * len(cases)), 5))
        width = 0.8 / len(modes)
        for i, mode in enumerate(modes):
            xs, ys, lo, hi = [], [], [], []
            for k, case in enumerate(cases):
                r = by.get(case + (mode,))
                if not r:
                    continue
                mibs, med = float(r["mib_s"]), float(r["median_s"])
                xs.append(k + i * width)
                ys.append(mibs)
                # bandwidth bounds from the fastest and slowest run (the
                # CSV's rounding can put the median a hair past an end)
                lo.append(max(0.0, mibs - mibs * med / float(r["max_s"])))
                hi.append(max(0.0, mibs * med / float(r["min_s"]) - mibs))
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2, label=mode)
        ax.set_yscale("log")
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(cases))],
                      [f"{w}\n{size_label(s)}" for w, s in cases])
        ax.set_ylabel(f"{phase} MiB/s (median)")
        ax.set_title(f"the paper's workloads, {phase} phase, {tag}")
        ax.legend(fontsize=7, ncol=2)
        made.append(save(fig, outdir, f"workloads-{phase}-{tag}.png"))
    return made


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+")
    ap.add_argument("-o", "--outdir", required=True)
    a = ap.parse_args()
    rows = read_rows(a.csv)
    if not rows:
        sys.exit("plot.py: no rows in " + ", ".join(a.csv))
    os.makedirs(a.outdir, exist_ok=True)
    made = plot_noncontig([r for r in rows if r["bench"] == "noncontig"], a.outdir)
    made += plot_workloads([r for r in rows if r["bench"] == "workloads"], a.outdir)
    for p in made:
        print(p)


if __name__ == "__main__":
    main()
