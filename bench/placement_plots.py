#!/usr/bin/env python3
"""Draws the placement simulator's CSV files (cove-placement-sim --out DIR)
as the shapes of the in-staging placement paper's Figures 8-11.

    placement_plots.py DIR      writes DIR/fig8.png ... DIR/fig11.png
"""
import csv
import pathlib
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def bars_with_speedup(ax, groups, policies, value, speedup, xlabel, title):
    width = 0.8 / len(policies)
    for i, pol in enumerate(policies):
        ax.bar([x + i * width for x in range(len(groups))], [value[(g, pol)] for g in groups], width, label=pol)
    ax.set_xticks([x + width * (len(policies) - 1) / 2 for x in range(len(groups))])
    ax.set_xticklabels(groups)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("cumulative end-to-end time (s, simulated)")
    ax.set_title(title)
    right = ax.twinx()
    right.plot([x + width * (len(policies) - 1) / 2 for x in range(len(groups))], [speedup[g] for g in groups],
               "k-o", label="speedup time / rr-blocking")
    right.set_ylabel("speedup of time over rr-blocking")
    right.set_ylim(bottom=0)
    h1, l1 = ax.get_legend_handles_labels()
    h2, l2 = right.get_legend_handles_labels()
    ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="upper right")


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "placement-sim")
    policies = ["rr-blocking", "rr-nonblocking", "time"]

    r8 = rows(out / "fig8_tight_cores.csv")
    if r8:
        cores = sorted({int(r["cores"]) for r in r8})
        value = {(c, r["policy"]): float(r["end_to_end_s"]) for r in r8 for c in [int(r["cores"])]}
        speedup = {c: value[(c, "rr-blocking")] / value[(c, "time")] for c in cores}
        fig, ax = plt.subplots(figsize=(8, 4.5))
        bars_with_speedup(ax, cores, policies, value, speedup, "producer cores (= consumer cores)",
                          "Figure 8 (simulated): tightly coupled AMR workflow")
        fig.tight_layout()
        fig.savefig(out / "fig8.png", dpi=120)

    r9 = rows(out / "fig9_tight_depth.csv")
    if r9:
        ranges = sorted({f'{r["min_depth"]}-{r["max_depth"]}' for r in r9}, key=lambda s: int(s.split("-")[1]))
        value = {(f'{r["min_depth"]}-{r["max_depth"]}', r["policy"]): float(r["end_to_end_s"]) for r in r9}
        speedup = {g: value[(g, "rr-blocking")] / value[(g, "time")] for g in ranges}
        fig, ax = plt.subplots(figsize=(8, 4.5))
        bars_with_speedup(ax, ranges, policies, value, speedup, "refinement depth range",
                          "Figure 9 (simulated): deeper refinement, 8192 cores")
        fig.tight_layout()
        fig.savefig(out / "fig9.png", dpi=120)

    r10 = rows(out / "fig10_loose_step.csv")
    amr = rows(out / "fig10_amr_steps.csv")
    if r10:
        first_cores = min(int(r["analysis_cores"]) for r in r10)
        mine = [r for r in r10 if int(r["analysis_cores"]) == first_cores]
        steps = max(int(r["step"]) for r in mine) + 1
        all_policies = []
        for r in mine:
            if r["policy"] not in all_policies:
                all_policies.append(r["policy"])
        one = {}
        for pol in all_policies:
            mine_pol = [r for r in mine if r["policy"] == pol and int(r["step"]) >= max(1, steps // 10)]
            if mine_pol:
                one[pol] = mine_pol[0]
        fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.5))
        for i, pol in enumerate(one):
            s, e = float(one[pol]["start_s"]), float(one[pol]["end_s"])
            a.barh(i, e - s, left=s)
        a.set_yticks(range(len(one)))
        a.set_yticklabels([f'{p} (step {one[p]["step"]})' for p in one])
        ends = defaultdict(dict)
        for r in amr:
            ends[r["policy"]][int(r["step"])] = float(r["end_s"])
        ref = ends.get("time", {})
        for s in sorted(ref):
            if one and min(float(o["start_s"]) for o in one.values()) - 20 < ref[s] < max(float(o["end_s"]) for o in one.values()) + 20:
                a.axvline(ref[s], color="grey", lw=0.5)
        a.set_xlabel("simulated time (s); grey: AMR step ends")
        a.set_title(f"Figure 10a: one analysis step ({first_cores} cores)")
        b.bar(list(one), [int(one[p]["bytes_moved"]) / 1e6 for p in one])
        b.set_ylabel("MB moved between nodes")
        b.set_title("Figure 10b: data movement in that step")
        b.tick_params(axis="x", rotation=20)
        fig.tight_layout()
        fig.savefig(out / "fig10.png", dpi=120)

    r11 = rows(out / "fig11_loose_frequency.csv")
    if r11:
        cores = sorted({int(r["analysis_cores"]) for r in r11})
        pols = []
        for r in r11:
            if r["policy"] not in pols:
                pols.append(r["policy"])
        value = {(int(r["analysis_cores"]), r["policy"]): int(r["steps_analysed"]) for r in r11}
        fig, ax = plt.subplots(figsize=(8, 4.5))
        width = 0.8 / len(pols)
        for i, pol in enumerate(pols):
            ax.bar([x + i * width for x in range(len(cores))], [value[(c, pol)] for c in cores], width, label=pol)
        ax.set_xticks([x + width * (len(pols) - 1) / 2 for x in range(len(cores))])
        ax.set_xticklabels([f"{c} analysis cores" for c in cores])
        ax.set_ylabel(f'analysis steps completed in {r11[0]["amr_steps"]} simulation steps')
        ax.set_title("Figure 11 (simulated): how often the analysis runs")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / "fig11.png", dpi=120)
    print(f"plots in {out}")


if __name__ == "__main__":
    main()
