#!/usr/bin/env python3
"""Measure real peak GPU memory of Hugging Face models and set memplan's estimates beside it.

Each case builds a model from one of tests/data/hf/*/config.json with random weights
directly on the GPU (nothing is downloaded), runs the workload, and reads PyTorch's
caching-allocator counters: memory_allocated() after the weights, max_memory_allocated()
over the workload (compared with memplan's allocated_bytes) and max_memory_reserved()
(compared with reserved_bytes). `params` counts every fixture's parameters on the meta
device, an independent check of memplan's architecture formulas.

Usage (on a machine with an NVIDIA GPU, PyTorch and transformers):
  python3 bench/accuracy/torch_peaks.py --memplan build/memplan [--case NAME ...] [--out FILE]
Results are JSON lines; docs/accuracy.md holds a run's table.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "..", "..", "tests", "data", "hf")

# name, model, workload, dtype, batch, seq, extra memplan args, extra settings
CASES = [
    ("gpt2-fp32-inference", "gpt2", "inference", "fp32", 4, 1024, [], {}),
    ("gpt2-fp16-inference", "gpt2", "inference", "fp16", 8, 1024, [], {}),
    ("pythia-410m-fp16-inference", "pythia-410m", "inference", "fp16", 4, 2048, [], {}),
    ("qwen2.5-0.5b-bf16-inference", "qwen2.5-0.5b", "inference", "bf16", 8, 2048, [], {}),
    ("llama-2-7b-fp16-inference", "llama-2-7b", "inference", "fp16", 1, 2048, [], {}),
    ("llama-2-7b-fp16-inference-b4", "llama-2-7b", "inference", "fp16", 4, 4096, [], {}),
    ("llama-2-7b-fp16-eager", "llama-2-7b", "inference", "fp16", 1, 2048, ["--attention", "eager"],
     {"attn": "eager"}),
    ("mistral-7b-bf16-inference", "mistral-7b-v0.1", "inference", "bf16", 1, 4096, [], {}),
    ("llama-3-8b-bf16-inference", "llama-3-8b", "inference", "bf16", 1, 8192, [], {}),
    ("llama-2-7b-fp16-nocache", "llama-2-7b", "inference", "fp16", 2, 2048, ["--no-kv-cache"], {"use_cache": False}),
    ("llama-2-7b-fp16-generation", "llama-2-7b", "generation", "fp16", 1, 1024, ["--new-tokens", "256"],
     {"new_tokens": 256}),
    # GPT-2's config trains with dropout (attn_pdrop, resid_pdrop, embd_pdrop = 0.1).
    ("gpt2-fp32-training", "gpt2", "training", "fp32", 8, 1024, ["--dropout"], {}),
    ("gpt2-fp32-training-checkpointed", "gpt2", "training", "fp32", 8, 1024, ["--dropout", "--recompute", "full"],
     {"checkpointing": True}),
    ("pythia-160m-fp32-training", "pythia-160m", "training", "fp32", 8, 2048, [], {}),
    ("qwen2.5-0.5b-bf16-training", "qwen2.5-0.5b", "training", "bf16", 4, 1024, ["--no-master-weights"], {}),
    ("tinyllama-1.1b-bf16-training", "tinyllama-1.1b", "training", "bf16", 2, 2048, ["--no-master-weights"], {}),
    ("qwen2.5-0.5b-bf16-training-checkpointed", "qwen2.5-0.5b", "training", "bf16", 8, 2048,
     ["--no-master-weights", "--recompute", "full"], {"checkpointing": True}),
    ("llama-2-7b-bf16-lora", "llama-2-7b", "training", "bf16", 1, 2048, ["--lora-rank", "8"], {"lora": 8}),
]


def torch_dtype(name):
    import torch
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def memplan_estimate(memplan, model, workload, dtype, batch, seq, extra):
    cmd = [memplan, "estimate", model, "-w", workload, "-p", dtype, "--batch", str(batch), "--seq", str(seq),
           "--format", "json"] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out), " ".join(cmd[1:])


def build(config_dir, dtype, device, attn=None):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    config = AutoConfig.from_pretrained(config_dir)
    kwargs = {"attn_implementation": attn} if attn else {}
    with torch.device(device):
        try:
            model = AutoModelForCausalLM.from_config(config, dtype=dtype, **kwargs)
        except TypeError:
            model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype, **kwargs)
    return model


def count_params(model):
    seen, total = set(), 0
    for p in model.parameters():
        if id(p) not in seen:
            seen.add(id(p))
            total += p.numel()
    return total


def run_params(memplan):
    import torch
    rows = []
    for name in sorted(os.listdir(FIXTURES)):
        path = os.path.join(FIXTURES, name)
        if not os.path.isdir(path):
            continue
        row = {"case": "params", "model": name}
        try:
            model = build(path, torch.float32, "meta")
            row["torch_params"] = count_params(model)
        except Exception as error:  # a family this transformers cannot build
            row["error"] = f"{type(error).__name__}: {error}"[:200]
        estimate, _ = memplan_estimate(memplan, name, "weights", "fp32", 1, 1, [])
        row["memplan_params"] = estimate["model"]["params"]
        rows.append(row)
    return rows


def run_case(memplan, case):
    import torch
    name, model_name, workload, dtype_name, batch, seq, extra, settings = case
    torch.cuda.init()
    torch.cuda.reset_peak_memory_stats()
    dtype = torch_dtype(dtype_name)
    model = build(os.path.join(FIXTURES, model_name), dtype, "cuda", settings.get("attn"))
    if settings.get("lora"):
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=settings["lora"], lora_alpha=16, target_modules=["q_proj", "v_proj"]))
    torch.cuda.synchronize()
    weights = torch.cuda.memory_allocated()
    vocab = model.config.vocab_size
    ids = torch.randint(0, vocab, (batch, seq), device="cuda")
    torch.cuda.reset_peak_memory_stats()
    phases, peak = {}, 0
    start = time.perf_counter()
    if workload == "inference":
        model.eval()
        with torch.no_grad():
            out = model(input_ids=ids, use_cache=settings.get("use_cache", True))
        torch.cuda.synchronize()
        del out
    elif workload == "generation":
        model.eval()
        new = settings["new_tokens"]
        with torch.no_grad():
            model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), max_new_tokens=new,
                           min_new_tokens=new, do_sample=False, pad_token_id=0)
        torch.cuda.synchronize()
    elif workload == "training":
        model.train()
        model.config.use_cache = False
        if settings.get("checkpointing"):
            model.gradient_checkpointing_enable()
            if settings.get("lora"):
                model.enable_input_require_grads()
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        peak = 0
        for _ in range(2):  # the second step runs with the optimizer's states in place
            torch.cuda.reset_peak_memory_stats()
            loss = model(input_ids=ids, labels=ids, use_cache=False).loss
            phases["forward"] = torch.cuda.max_memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            loss.backward()
            phases["backward"] = torch.cuda.max_memory_allocated()
            del loss
            torch.cuda.reset_peak_memory_stats()
            optimizer.step()
            phases["optimizer_step"] = torch.cuda.max_memory_allocated()
            optimizer.zero_grad(set_to_none=True)
            peak = max([peak] + list(phases.values()))
        torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    peak_allocated = max(peak, torch.cuda.max_memory_allocated())
    peak_reserved = torch.cuda.max_memory_reserved()
    estimate, command = memplan_estimate(memplan, model_name, workload, dtype_name, batch, seq, extra)
    weights_estimate = next(c["bytes"] for c in estimate["components"] if c["name"] == "weights")
    phases_estimate = {}
    if workload == "training":  # each phase's tensors alone, without the overhead rows
        bare, _ = memplan_estimate(memplan, model_name, workload, dtype_name, batch, seq, extra + ["--no-overhead"])
        phases_estimate = {a["name"]: a["bytes"] for a in bare.get("alternatives", []) if a.get("replaces") == "total"}
        phases_estimate["peak"] = bare["total_bytes"]  # --no-overhead: the tensors alone
    return {
        "case": name, "memplan": command, "device": torch.cuda.get_device_name(),
        "torch": torch.__version__, "attn": getattr(model.config, "_attn_implementation", None),
        "weights_measured": weights, "weights_estimate": weights_estimate,
        "peak_allocated_measured": peak_allocated, "allocated_estimate": estimate["allocated_bytes"],
        "peak_reserved_measured": peak_reserved, "reserved_estimate": estimate["reserved_bytes"],
        "total_estimate": estimate["total_bytes"], "phases_measured": phases, "phases_estimate": phases_estimate,
        "ratio_allocated": round(peak_allocated / estimate["allocated_bytes"], 4),
        "ratio_reserved": round(peak_reserved / estimate["reserved_bytes"], 4),
        "seconds": round(seconds, 3),
    }


def run_context():
    """Device memory used by a process that only created the CUDA context and cuBLAS."""
    import pynvml
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(0)
    before = pynvml.nvmlDeviceGetMemoryInfo(handle).used
    import torch
    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    after_context = pynvml.nvmlDeviceGetMemoryInfo(handle).used
    a = torch.randn(256, 256, device="cuda")
    (a @ a).sum().item()
    after_cublas = pynvml.nvmlDeviceGetMemoryInfo(handle).used
    return {"case": "context", "context_and_torch": after_context - before - torch.cuda.memory_reserved(),
            "cublas_and_matmul": after_cublas - after_context, "torch_reserved": torch.cuda.memory_reserved()}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memplan", default="build/memplan")
    parser.add_argument("--case", action="append", help="a case name, 'params' or 'context'; default all")
    parser.add_argument("--out", help="append JSON lines here")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        if args.child == "params":
            rows = run_params(args.memplan)
        elif args.child == "context":
            rows = [run_context()]
        else:
            rows = [run_case(args.memplan, next(c for c in CASES if c[0] == args.child))]
        for row in rows:
            print(json.dumps(row), flush=True)
        return
    names = args.case or ["context", "params"] + [c[0] for c in CASES]
    for name in names:
        # One process per case: a fresh context and clean allocator counters.
        result = subprocess.run([sys.executable, __file__, "--memplan", args.memplan, "--child", name],
                                capture_output=True, text=True)
        lines = result.stdout.strip().splitlines() if result.returncode == 0 else [
            json.dumps({"case": name, "error": result.stderr.strip().splitlines()[-1:]})]
        for line in lines:
            print(line, flush=True)
            if args.out:
                with open(args.out, "a") as out:
                    out.write(line + "\n")


if __name__ == "__main__":
    main()
