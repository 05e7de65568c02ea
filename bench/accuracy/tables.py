#!/usr/bin/env python3
"""Markdown tables from torch_peaks.py's JSON lines (docs/accuracy.md holds their output).

Usage: python3 bench/accuracy/tables.py bench/accuracy/results/h100-2026-11-22-torch-peaks.jsonl
"""
import json
import sys

GIB = 2 ** 30


def gib(n):
    return f"{n / GIB:.3f}"


def main(path):
    rows = [json.loads(line) for line in open(path)]
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
        command = r["memplan"].replace(" --format json", "")
        print(f"| {r['case']} | `{command}` | {gib(r['peak_allocated_measured'])} | "
              f"{gib(r['allocated_estimate'])} | {r['ratio_allocated']:.3f} |")
    training = [r for r in runs if r.get("phases_measured")]
    if training:
        print()
        print("| case | forward: measured / estimate (GiB) | backward | optimizer step |")
        print("|---|---|---|---|")
        for r in training:
            m, e = r["phases_measured"], r["phases_estimate"]
            backward = max(v for k, v in e.items() if k.startswith("phase_backward") or k == "peak")
            print(f"| {r['case']} | {gib(m['forward'])} / {gib(e['phase_forward'])} | "
                  f"{gib(m['backward'])} / {gib(backward)} | "
                  f"{gib(m['optimizer_step'])} / {gib(e['phase_optimizer_step'])} |")


if __name__ == "__main__":
    main(sys.argv[1])
