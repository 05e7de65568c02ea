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
import contextlib
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
    # torch.autocast over an fp32 model (Trainer bf16=True on a model loaded in fp32).
    ("qwen2.5-0.5b-amp-training", "qwen2.5-0.5b", "training", "fp32", 4, 1024,
     ["--mixed-precision", "amp", "--compute", "bf16"], {"autocast": "bfloat16"}),
    ("tinyllama-1.1b-amp-training", "tinyllama-1.1b", "training", "fp32", 2, 2048,
     ["--mixed-precision", "amp", "--compute", "bf16"], {"autocast": "bfloat16"}),
    ("qwen2.5-0.5b-bf16-training-checkpointed", "qwen2.5-0.5b", "training", "bf16", 8, 2048,
     ["--no-master-weights", "--recompute", "full"], {"checkpointing": True}),
    ("llama-2-7b-bf16-lora", "llama-2-7b", "training", "bf16", 1, 2048, ["--lora-rank", "8"], {"lora": 8}),
    # The decoder families of issue 15: q/k norms, sliding windows, MoE, latent attention, sinks.
    ("qwen3-8b-bf16-inference", "qwen3-8b", "inference", "bf16", 1, 4096, [], {}),
    ("qwen3-8b-bf16-lora", "qwen3-8b", "training", "bf16", 1, 2048, ["--lora-rank", "16"], {"lora": 16}),
    ("gemma-2-9b-bf16-inference", "gemma-2-9b", "inference", "bf16", 1, 8192, [], {}),
    ("gemma-3-1b-bf16-inference", "gemma-3-1b-it", "inference", "bf16", 4, 8192, [], {}),
    ("gemma-3-1b-bf16-training", "gemma-3-1b-it", "training", "bf16", 2, 2048, ["--no-master-weights"], {}),
    ("olmoe-bf16-inference", "olmoe-1b-7b-0924", "inference", "bf16", 4, 2048, [], {}),
    ("olmoe-bf16-training", "olmoe-1b-7b-0924", "training", "bf16", 1, 2048, ["--no-master-weights"], {}),
    ("qwen3-30b-a3b-bf16-inference", "qwen3-30b-a3b", "inference", "bf16", 1, 4096, [], {}),
    ("deepseek-v2-lite-bf16-inference", "deepseek-v2-lite", "inference", "bf16", 1, 4096, [], {}),
    ("gpt-oss-20b-bf16-inference", "gpt-oss-20b", "inference", "bf16", 1, 4096, [], {}),
    # Sliding layers right after the prefill still hold the prompt's storage (transformers slices it).
    ("mistral-7b-bf16-generation-long", "mistral-7b-v0.1", "generation", "bf16", 1, 8192, ["--new-tokens", "64"],
     {"new_tokens": 64}),
    ("gemma-2-9b-bf16-generation", "gemma-2-9b", "generation", "bf16", 1, 8192, ["--new-tokens", "32"],
     {"new_tokens": 32}),
    # Issue 17: state-space, hybrid, encoder-decoder and vision-language models.
    # The lent machines have no mamba_ssm: transformers' PyTorch path, --ssm-kernels torch.
    ("mamba-130m-fp32-generation", "mamba-130m-hf", "generation", "fp32", 4, 2048,
     ["--new-tokens", "128", "--ssm-kernels", "torch"],
     {"new_tokens": 128}),
    ("mamba-130m-fp32-training", "mamba-130m-hf", "training", "fp32", 4, 1024, [], {}),
    ("bamba-9b-bf16-inference", "bamba-9b", "inference", "bf16", 1, 4096, ["--ssm-kernels", "torch"], {}),
    # T5's config trains with dropout (dropout_rate = 0.1), as GPT-2's does.
    ("flan-t5-base-fp32-training", "flan-t5-base", "training", "fp32", 8, 512, ["--target-len", "128", "--dropout"],
     {"loader": "seq2seq", "target": 128}),
    ("flan-t5-base-fp32-generation", "flan-t5-base", "generation", "fp32", 8, 512, ["--new-tokens", "128"],
     {"loader": "seq2seq", "new_tokens": 128}),
    ("qwen2-vl-2b-bf16-image", "qwen2-vl-2b-instruct", "inference", "bf16", 1, 256,
     ["--images", "1", "--image-size", "1280x720"], {"loader": "vlm", "image": (1280, 720)}),
    ("llava-1.5-7b-fp16-image", "llava-1.5-7b-hf", "inference", "fp16", 1, 128, ["--images", "1"],
     {"loader": "vlm", "image": (336, 336)}),
    ("qwen2-vl-2b-bf16-image-sdpa", "qwen2-vl-2b-instruct", "inference", "bf16", 1, 256,
     ["--images", "1", "--image-size", "1280x720"], {"loader": "vlm", "image": (1280, 720), "attn": "sdpa"}),
    # LoRA on the language model's q and v; the tower's fused qkv is not a target, so it stays frozen.
    ("qwen2-vl-2b-bf16-image-lora", "qwen2-vl-2b-instruct", "training", "bf16", 1, 256,
     ["--images", "1", "--image-size", "1280x720", "--lora-rank", "8"],
     {"loader": "vlm", "image": (1280, 720), "attn": "sdpa", "lora": 8}),
    # TransformerLens-style hook caches, kept by forward hooks (TransformerLens keeps no KV cache).
    ("gpt2-fp32-hooks-resid-post", "gpt2", "extraction", "fp32", 4, 1024,
     ["--filter", "blocks.*.hook_resid_post"], {"hooks": "resid_post"}),
    ("gpt2-fp32-hooks-pattern", "gpt2", "extraction", "fp32", 4, 1024,
     ["--filter", "blocks.*.attn.hook_pattern", "--attention", "eager"],
     {"hooks": "pattern", "attn": "eager"}),
]

BUILTINS = None  # filled from `memplan models`: fixtures that are not built-ins are passed as config.json


def torch_dtype(name):
    import torch
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def memplan_model(memplan, name):
    """A fixture's built-in name, or its config.json where memplan has no built-in of that name."""
    global BUILTINS
    if BUILTINS is None:
        out = subprocess.run([memplan, "models", "--format", "json"], check=True, capture_output=True, text=True).stdout
        BUILTINS = {m["name"] for m in json.loads(out)["models"]}
    return name if name in BUILTINS else os.path.relpath(os.path.join(FIXTURES, name, "config.json"))


def memplan_estimate(memplan, model, workload, dtype, batch, seq, extra):
    cmd = [memplan, "estimate", memplan_model(memplan, model), "-w", workload, "-p", dtype, "--batch", str(batch), "--seq", str(seq),
           "--format", "json"] + extra
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out), " ".join(cmd[1:])


def auto_class(config):
    """The transformers class whose parameters are the model's published count."""
    import transformers
    if config.model_type == "bert":
        return transformers.AutoModel  # BertModel: the published count has no masked-LM head
    if config.model_type == "whisper":
        return transformers.AutoModelForSpeechSeq2Seq
    if getattr(config, "is_encoder_decoder", False):
        return transformers.AutoModelForSeq2SeqLM
    if hasattr(config, "vision_config"):
        return transformers.AutoModelForImageTextToText
    return transformers.AutoModelForCausalLM


def build(config_dir, dtype, device, attn=None):
    import torch
    from transformers import AutoConfig
    config = AutoConfig.from_pretrained(config_dir)
    # Random weights in `dtype`: a checkpoint's quantisation (gpt-oss's MXFP4, DeepSeek-V3's FP8)
    # would need its kernels and is priced by memplan's -p, not here.
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    kwargs = {"attn_implementation": attn} if attn else {}
    cls = auto_class(config)
    with torch.device(device):
        try:
            model = cls.from_config(config, dtype=dtype, **kwargs)
        except TypeError:
            model = cls.from_config(config, torch_dtype=dtype, **kwargs)
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
        if not os.path.isfile(os.path.join(path, "config.json")):
            continue
        row = {"case": "params", "model": name}
        try:
            model = build(path, torch.float32, "meta")
            row["torch_params"] = count_params(model)
        except Exception as error:  # a family this transformers cannot build
            row["error"] = f"{type(error).__name__}: {error}"[:200]
        out = subprocess.run([memplan, "estimate", memplan_model(memplan, name), "-w", "weights", "--format", "json"],
                             check=True, capture_output=True, text=True).stdout
        row["memplan_params"] = json.loads(out)["model"]["params"]
        rows.append(row)
    return rows


def model_inputs(model, settings, batch, seq, dtype):
    """The tensors one forward pass feeds the model: token ids and, for a vision-language model, images."""
    import torch
    config = model.config
    text = getattr(config, "text_config", config)
    vocab = min(text.vocab_size, 32000)  # ordinary tokens, clear of every family's special ids
    ids = torch.randint(0, vocab, (batch, seq), device="cuda")
    inputs = {"input_ids": ids}
    image = settings.get("image")
    if image:
        width, height = image
        if config.model_type in ("qwen2_vl", "qwen2_5_vl"):
            # The processor's smart_resize: each side to a multiple of 28 (half to even), 2x2 patches a token.
            h, w = round(height / 28) * 28, round(width / 28) * 28  # within the default pixel bounds
            grid = torch.tensor([[1, h // 14, w // 14]] * batch, device="cuda")
            patches = h // 14 * w // 14
            vision = config.vision_config
            channels = vision.in_channels * vision.temporal_patch_size * vision.patch_size ** 2
            inputs["pixel_values"] = torch.randn(batch * patches, channels, device="cuda", dtype=dtype)
            inputs["image_grid_thw"] = grid
            image_type = 1  # mm_token_type_ids: which tokens are an image's, for the multimodal rotary positions
            image_ids = [config.vision_start_token_id] + [config.image_token_id] * (patches // 4) + \
                [config.vision_end_token_id]
        else:  # LLaVA-1.5: the tower's square, one token per patch
            size = config.vision_config.image_size
            inputs["pixel_values"] = torch.randn(batch, 3, size, size, device="cuda", dtype=dtype)
            patches = (size // config.vision_config.patch_size) ** 2
            image_ids = [getattr(config, "image_token_id", None) or config.image_token_index] * patches
        # `seq` text tokens, the image's wrappers among them, after the image's own tokens.
        wrappers = len(image_ids) - (patches // 4 if config.model_type in ("qwen2_vl", "qwen2_5_vl") else patches)
        head = torch.tensor(image_ids, device="cuda").expand(batch, -1)
        inputs["input_ids"] = torch.cat([head, ids[:, :seq - wrappers]], 1)
        if config.model_type in ("qwen2_vl", "qwen2_5_vl"):
            inputs["mm_token_type_ids"] = (inputs["input_ids"] == config.image_token_id).int() * image_type
    return inputs


def keep_hooks(model, kind):
    """TransformerLens's run_with_cache, kept by forward hooks: each block's output (hook_resid_post)."""
    kept = []
    if kind == "resid_post":
        for block in model.transformer.h:
            block.register_forward_hook(
                lambda _m, _i, out: kept.append((out[0] if isinstance(out, tuple) else out).detach()))
    return kept  # "pattern": output_attentions=True returns every layer's softmax, as hook_pattern keeps it


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
    # The attention transformers chose: some families (gpt-oss's sinks) have no SDPA path.
    attn = getattr(model.config, "_attn_implementation", None)
    if attn == "eager" and "--attention" not in extra:
        extra = extra + ["--attention", "eager"]
    inputs = model_inputs(model, settings, batch, seq, dtype)
    hooks = keep_hooks(model, settings.get("hooks"))
    torch.cuda.reset_peak_memory_stats()
    phases, peak = {}, 0
    start = time.perf_counter()
    if workload in ("inference", "extraction"):
        model.eval()
        use_cache = settings.get("use_cache", workload == "inference")
        with torch.no_grad():
            flags = {"output_attentions": True} if settings.get("hooks") == "pattern" else {}
            out = model(**inputs, use_cache=use_cache, **flags)
        torch.cuda.synchronize()
        del out
        hooks.clear()
    elif workload == "generation":
        model.eval()
        new = settings["new_tokens"]
        with torch.no_grad():
            model.generate(**inputs, attention_mask=torch.ones_like(inputs["input_ids"]), max_new_tokens=new,
                           min_new_tokens=new, do_sample=False, pad_token_id=0)
        torch.cuda.synchronize()
    elif workload == "training":
        model.train()
        model.config.use_cache = False
        if settings.get("checkpointing"):
            model.gradient_checkpointing_enable()
            if settings.get("lora"):
                model.enable_input_require_grads()
        labels = inputs["input_ids"]
        if settings.get("loader") == "seq2seq":  # the decoder's targets, --target-len tokens
            labels = torch.randint(0, 32000, (batch, settings["target"]), device="cuda")
        optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        peak = 0
        for _ in range(2):  # the second step runs with the optimizer's states in place
            torch.cuda.reset_peak_memory_stats()
            # --mixed-precision amp: the forward pass and the loss under torch.autocast, the backward outside
            autocast = settings.get("autocast")
            with torch.autocast("cuda", dtype=getattr(torch, autocast)) if autocast else contextlib.nullcontext():
                loss = model(**inputs, labels=labels, use_cache=False).loss
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
    """Device memory used by a process that only created the CUDA context and cuBLAS, and the total
    CUDA lets a process use beside the one NVML (nvidia-smi) reports."""
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
    return {"case": "context", "module_loading": os.environ.get("CUDA_MODULE_LOADING", "LAZY (torch's default)"),
            "device": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda": torch.version.cuda,
            "driver": pynvml.nvmlSystemGetDriverVersion(),
            "context_and_torch": after_context - before - torch.cuda.memory_reserved(),
            "cublas_and_matmul": after_cublas - after_context, "torch_reserved": torch.cuda.memory_reserved(),
            "nvml_total": pynvml.nvmlDeviceGetMemoryInfo(handle).total, "cuda_total": torch.cuda.mem_get_info()[1]}


def child(memplan, name, env=None):
    """One case in its own process: a fresh context and clean allocator counters."""
    return subprocess.Popen([sys.executable, __file__, "--memplan", memplan, "--child", name],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def finish(name, process, out):
    stdout, stderr = process.communicate()
    lines = stdout.strip().splitlines() if process.returncode == 0 else [
        json.dumps({"case": name, "error": stderr.strip().splitlines()[-3:]})]
    for line in lines:
        print(line, flush=True)
        if out:
            with open(out, "a") as f:
                f.write(line + "\n")


def gpu_gib():
    out = subprocess.run(["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
                         check=True, capture_output=True, text=True).stdout
    return int(out.split()[0]) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memplan", default="build/memplan")
    parser.add_argument("--case", action="append", help="a case name, 'params' or 'context'; default all")
    parser.add_argument("--out", help="append JSON lines here")
    parser.add_argument("--jobs", type=int, default=1,
                        help="cases run at once, as long as their estimates fit in 90%% of the GPU together")
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
    if "context" in names:  # alone on the GPU: NVML's used memory is the whole device's
        for loading in ("LAZY", "EAGER"):
            finish("context", child(args.memplan, "context", dict(os.environ, CUDA_MODULE_LOADING=loading)), args.out)
    background = child(args.memplan, "params") if "params" in names else None  # meta device: CPU only
    queue = [c for c in CASES if c[0] in names]
    budget, running = 0.9 * gpu_gib(), []
    while queue or running:
        for name, process, gib in list(running):
            if process.poll() is not None:
                running.remove((name, process, gib))
                finish(name, process, args.out)
        while queue and len(running) < args.jobs:
            name, model, workload, dtype, batch, seq, extra, _ = queue[0]
            try:
                estimate, _ = memplan_estimate(args.memplan, model, workload, dtype, batch, seq, extra)
            except subprocess.CalledProcessError as error:
                queue.pop(0)
                print(json.dumps({"case": name, "error": error.stderr.strip().splitlines()[-3:]}), flush=True)
                continue
            gib = 1.25 * estimate["total_bytes"] / 2 ** 30 + 2  # eager attention and slow scans run above it
            if running and sum(r[2] for r in running) + gib > budget:
                break
            queue.pop(0)
            running.append((name, child(args.memplan, name), gib))
        time.sleep(0.2)
    if background:
        finish("params", background, args.out)
if __name__ == "__main__":
    main()
