#!/usr/bin/env python3
"""What transformers really keeps, where torch_peaks.py's ratios left a question (docs/accuracy.md).

For each question a JSON line: the cache a model builds (shapes and bytes per layer), the
memory held just before the LM head against the peak after it, which attention each part
of a composite model runs, whether a head is tied, and the buffers a model holds.

Usage (GPU, PyTorch, transformers): python3 bench/accuracy/hf_internals.py [--only NAME ...]
"""
import argparse
import gc
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_peaks import FIXTURES, build, model_inputs  # noqa: E402


def tensor_bytes(t):
    return t.numel() * t.element_size()


def cache_layers(cache):
    """Per-layer key/value shapes and bytes of a transformers 5 Cache (or a legacy tuple)."""
    layers = getattr(cache, "layers", None)
    rows = []
    if layers is not None:
        for layer in layers:
            keys, values = getattr(layer, "keys", None), getattr(layer, "values", None)
            if keys is None or not hasattr(keys, "shape"):
                continue
            rows.append({"type": type(layer).__name__, "keys": list(keys.shape), "values": list(values.shape),
                         "bytes": tensor_bytes(keys) + tensor_bytes(values)})
    return rows


def phases(name, fixture, dtype_name, batch, seq, settings=None, config_changes=None):
    """Allocated bytes after the weights, entering the LM head, at the peak, and after the forward."""
    import torch
    settings = settings or {}
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
    torch.cuda.reset_peak_memory_stats()
    model = build(os.path.join(FIXTURES, fixture), dtype, "cuda")
    for key, value in (config_changes or {}).items():
        setattr(model.config.get_text_config(), key, value)
    model.eval()
    weights = torch.cuda.memory_allocated()
    buffers = sorted(((tensor_bytes(b), n) for n, b in model.named_buffers()), reverse=True)
    marks = {}

    def mark(key, read):
        def hook(*_):  # returns None: a hook's return value would replace the module's input or output
            marks.setdefault(key, read())
        return hook

    model.get_output_embeddings().register_forward_pre_hook(mark("before_head", torch.cuda.memory_allocated))
    visual = getattr(getattr(model, "model", model), "visual", None)
    if visual is not None:
        visual.register_forward_pre_hook(mark("before_vision", torch.cuda.memory_allocated))
        visual.register_forward_hook(mark("vision_peak", torch.cuda.max_memory_allocated))
    inputs = model_inputs(model, settings, batch, seq, dtype)
    torch.cuda.reset_peak_memory_stats()
    with torch.no_grad():
        out = model(**inputs, use_cache=True)
    torch.cuda.synchronize()
    attn = {"model": model.config._attn_implementation}
    for sub in ("text_config", "vision_config"):
        if hasattr(model.config, sub):
            attn[sub] = getattr(model.config, sub)._attn_implementation
    layers = cache_layers(out.past_key_values) if getattr(out, "past_key_values", None) is not None else []
    return {"case": name, "weights": weights, "buffers_bytes": sum(b for b, _ in buffers),
            "largest_buffers": buffers[:4], "attention": attn, **{k: v - weights for k, v in marks.items()},
            "peak": torch.cuda.max_memory_allocated() - weights, "after": torch.cuda.memory_allocated() - weights,
            "logits": tensor_bytes(out.logits), "cache_bytes": sum(r["bytes"] for r in layers),
            "cache_first_layers": layers[:2], "cache_layer_types": sorted({r["type"] for r in layers})}


def live_at_peak(snapshot, top=12):
    """The allocations alive at the highest point of a recorded trace, grouped by where transformers
    (or torch) made them: [bytes, count, "file:line function"], largest first."""
    trace = snapshot["device_traces"][0]
    freeing = "free_requested" if any(e["action"] == "free_requested" for e in trace) else "free_completed"
    sizes, total, peak, peak_at = {}, 0, 0, -1
    for i, e in enumerate(trace):
        if e["action"] == "alloc":
            sizes[e["addr"]] = e["size"]
            total += e["size"]
            if total > peak:
                peak, peak_at = total, i
        elif e["action"] == freeing and e["addr"] in sizes:
            total -= sizes.pop(e["addr"])
    live = {}
    for e in trace[:peak_at + 1]:
        if e["action"] == "alloc":
            live[e["addr"]] = e
        elif e["action"] == freeing:
            live.pop(e["addr"], None)
    groups = {}
    for e in live.values():
        frames = e.get("frames") or [{"filename": "?", "line": 0, "name": "?"}]
        frame = next((f for f in frames if "/transformers/" in f["filename"]), frames[0])
        where = f"{os.path.basename(frame['filename'])}:{frame['line']} {frame['name']}"
        size, count = groups.get((where, e["size"]), (0, 0))
        groups[(where, e["size"])] = (size + e["size"], count + 1)
    rows = sorted(((b, n, f"{w} ({s} B each)") for (w, s), (b, n) in groups.items()), reverse=True)
    return {"traced_peak": peak, "live_at_peak": rows[:top]}


def snapshot(name, fixture, dtype_name, batch, seq, settings=None, training=False, attn=None):
    """What is alive at the peak of one forward (with labels and gradients when `training`)."""
    import torch
    settings = settings or {}
    dtype = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[dtype_name]
    model = build(os.path.join(FIXTURES, fixture), dtype, "cuda", attn)
    model.train(training)
    inputs = model_inputs(model, settings, batch, seq, dtype)
    weights = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(stacks="python", max_entries=1_000_000)
    if training:
        loss = model(**inputs, labels=inputs["input_ids"], use_cache=False).loss
        del loss
    else:
        with torch.no_grad():
            out = model(**inputs, use_cache=True)
            del out
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    return {"case": name, "attention": model.config._attn_implementation, "weights": weights,
            "peak": torch.cuda.max_memory_allocated() - weights, **live_at_peak(snap)}


def tied_head():
    import torch
    model = build(os.path.join(FIXTURES, "flan-t5-base"), torch.float32, "meta")
    return {"case": "flan-t5-base-head", "tie_word_embeddings": model.config.tie_word_embeddings,
            "head_is_shared": model.lm_head.weight is model.shared.weight,
            "tied_keys": str(getattr(model, "_tied_weights_keys", None))}


QUESTIONS = {
    "deepseek-v2-lite": lambda: phases("deepseek-v2-lite", "deepseek-v2-lite", "bf16", 1, 4096),
    "gemma-2-9b": lambda: phases("gemma-2-9b", "gemma-2-9b", "bf16", 1, 8192),
    "gemma-2-9b-no-softcap": lambda: phases("gemma-2-9b-no-softcap", "gemma-2-9b", "bf16", 1, 8192,
                                            config_changes={"final_logit_softcapping": None}),
    "gemma-3-1b": lambda: phases("gemma-3-1b", "gemma-3-1b-it", "bf16", 4, 8192),
    "qwen2-vl-2b": lambda: phases("qwen2-vl-2b", "qwen2-vl-2b-instruct", "bf16", 1, 256,
                                  {"image": (1280, 720)}),
    "flan-t5-base-head": tied_head,
    "qwen2-vl-2b-eager-peak": lambda: snapshot("qwen2-vl-2b-eager-peak", "qwen2-vl-2b-instruct", "bf16", 1, 256,
                                               {"image": (1280, 720)}),
    "gemma-3-1b-training-forward-peak": lambda: snapshot("gemma-3-1b-training-forward-peak", "gemma-3-1b-it",
                                                         "bf16", 2, 2048, training=True),
    "olmoe-inference-peak": lambda: snapshot("olmoe-inference-peak", "olmoe-1b-7b-0924", "bf16", 4, 2048),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", action="append", help="one of: " + ", ".join(QUESTIONS))
    args = parser.parse_args()
    import torch
    for name in args.only or QUESTIONS:
        try:
            row = QUESTIONS[name]()
        except Exception as error:  # report and go on: one family's failure says nothing of the others
            row = {"case": name, "error": f"{type(error).__name__}: {error}"[:300]}
        print(json.dumps(row), flush=True)
        gc.collect()
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
