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
