#!/usr/bin/env python3
"""Markdown tables from torch_peaks.py's JSON lines (docs/accuracy.md holds their output).

The measured figures are the run's; with --memplan the estimates are recomputed by that
binary from each row's recorded command, so the tables say what the current memplan
estimates for what was measured.

Usage: python3 bench/accuracy/tables.py RESULTS.jsonl [--memplan build/memplan]
"""
import argparse
import json
import os
import re
import subprocess

GIB = 2 ** 30


def gib(n):
    return f"{n / GIB:.3f}"


def reestimate(memplan, row):
    """The row with allocated_estimate, ratio and training phases from `memplan`."""
    # Fixtures that are not built-ins were passed by path; the path is the repository's.
    args = [re.sub(r"^.*?(tests/data/hf/)", r"\1", a) for a in row["memplan"].split()]
    def run(extra):
        out = subprocess.run([memplan] + args + extra, check=True, capture_output=True, text=True).stdout
        return json.loads(out)
    estimate = run([])
    row = dict(row, allocated_estimate=estimate["allocated_bytes"])
    row["ratio_allocated"] = round(row["peak_allocated_measured"] / row["allocated_estimate"], 4)
    if row.get("phases_measured"):
        bare = run(["--no-overhead"])
        phases = {a["name"]: a["bytes"] for a in bare.get("alternatives", []) if a.get("replaces") == "total"}
        phases["peak"] = bare["total_bytes"]
        row["phases_estimate"] = phases
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results")
    parser.add_argument("--memplan", help="recompute the estimates with this binary")
    args = parser.parse_args()
    path = args.results
    rows = [json.loads(line) for line in open(path)]
    if args.memplan:
        rows = [reestimate(os.path.abspath(args.memplan), r) if "peak_allocated_measured" in r else r for r in rows]
    params = [r for r in rows if r["case"] == "params"]
    runs = [r for r in rows if "peak_allocated_measured" in r]
    if params:
        same = [r for r in params if r.get("torch_params") == r["memplan_params"]]
        print(f"Parameters: {len(same)} of {len(params)} configs count exactly what PyTorch counts.")
        for r in params:
            if r.get("torch_params") != r["memplan_params"]:
                print(f"- {r['model']}: PyTorch {r.get('torch_params', r.get('error'))}, memplan {r['memplan_params']}")
        print()
    print("| case | memplan command | measured peak (GiB) | estimate (GiB) | measured / estimate |")
    print("|---|---|---|---|---|")
    for r in runs:
        command = re.sub(r"\S*(tests/data/hf/)", r"\1", r["memplan"].replace(" --format json", ""))
        print(f"| {r['case']} | `{command}` | {gib(r['peak_allocated_measured'])} | "
              f"{gib(r['allocated_estimate'])} | {r['ratio_allocated']:.3f} |")
    training = [r for r in runs if r.get("phases_measured")]
    if training:
        print()
        print("| case | forward: measured / estimate (GiB) | backward | optimizer step |")
        print("|---|---|---|---|")
        for r in training:
            m, e = r["phases_measured"], r["phases_estimate"]
            # The peak is backward's unless the optimizer step is its own alternative phase.
            backward = max([v for k, v in e.items() if k.startswith("phase_backward")] +
                           [e["peak"]] * ("phase_optimizer_step" in e))
            print(f"| {r['case']} | {gib(m['forward'])} / {gib(e['phase_forward'])} | "
                  f"{gib(m['backward'])} / {gib(backward)} | "
                  f"{gib(m['optimizer_step'])} / {gib(e.get('phase_optimizer_step', e['peak']))} |")


if __name__ == "__main__":
    main()
