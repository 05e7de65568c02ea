"""memplan's llama.cpp estimate against llama.cpp itself.

llama.cpp is the CPU build node-llama-cpp ships (tests/llama_cpp/package.json, installed with
npm into the build tree on first use). Each case loads one of the small GGUF models
memplan_llama_cpp_models writes and compares what llama.cpp reports with
`memplan estimate MODEL --engine llama.cpp --cpu ... --format json`:

- the model's buffers, exact bytes (llama_model::memory_breakdown) = memplan's weights;
- the context's buffers, exact bytes (llama_context::memory_breakdown: KV cache + compute
  buffer) = memplan's kv_cache + compute_buffer;
- the KV cache's log line (MiB, two decimals) and its cell count; the compute buffer's log
  line (MiB, four decimals); the output buffer's (MiB, two decimals).

Settings node-llama-cpp does not pass (a unified cache, llama-server's output limits, the
context of a draft model) are compared with context_probe.cpp, built here against the same
llama.cpp: its libraries from the package and its headers from the source bundle the package
ships (the exact bytes llama_context::memory_breakdown reports).

Without npm or the npm registry the test says why and is skipped.
"""

import concurrent.futures
import json
import os
import pathlib
import shutil
import subprocess

import pytest

HERE = pathlib.Path(__file__).resolve().parent
CLI = os.environ["MEMPLAN_CLI"]
MODELS_TOOL = os.environ["MEMPLAN_LLAMA_CPP_MODELS"]
NPM_DIR = pathlib.Path(os.environ["MEMPLAN_LLAMA_CPP_NPM_DIR"])
MIB = 1024 * 1024

# (model, -c, -ub, K type, V type, flash attention): three architectures, three weight types
# (Q4_K with a Q6_K head, Q8_0, F16), caches of every kind (f16, bf16, f32, and quantised ones,
# which add Hadamard rotations to the graph), flash attention on and off, contexts that are
# not multiples of 256 and micro-batches below the default.
CASES = [
    ("llama-q4_k.gguf", 1000, 512, "f16", "f16", "auto"),
    ("llama-q4_k.gguf", 2048, 256, "q8_0", "q8_0", "on"),
    ("llama-q4_k.gguf", 700, 512, "f16", "f16", "off"),
    ("qwen2-q8_0-tied.gguf", 4096, 512, "q4_0", "q4_0", "on"),
    ("qwen2-q8_0-tied.gguf", 512, 128, "f16", "f16", "off"),
    ("gpt2-f16.gguf", 1024, 512, "f16", "f16", "auto"),
    ("gpt2-f16.gguf", 300, 256, "q8_0", "f16", "off"),
    ("gpt2-f16.gguf", 2048, 512, "q4_1", "iq4_nl", "on"),
    ("qwen2-q8_0-tied.gguf", 1000, 256, "f32", "bf16", "on"),
    ("llama-q4_k.gguf", 1024, 512, "q5_1", "q5_0", "auto"),
]


@pytest.fixture(scope="module")
def llama_cpp():
    """The node_modules folder with node-llama-cpp, installed on first use."""
    if (NPM_DIR / "node_modules" / "node-llama-cpp").is_dir():
        return NPM_DIR
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        pytest.skip("llama.cpp comparison needs node and npm (node-llama-cpp ships llama.cpp); neither is on PATH")
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    shutil.copy(HERE / "package.json", NPM_DIR / "package.json")
    try:
        done = subprocess.run([npm, "install", "--omit=optional", "--no-audit", "--no-fund", "--ignore-scripts"],
                              cwd=NPM_DIR, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        pytest.skip("npm install node-llama-cpp took over 10 minutes: the npm registry is unreachable or slow")
    if done.returncode != 0:
        pytest.skip("npm install node-llama-cpp failed (is the npm registry reachable?): " + done.stderr[-400:])
    return NPM_DIR


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    out = tmp_path_factory.mktemp("gguf")
    subprocess.run([MODELS_TOOL, str(out)], check=True)
    return out


def llama_cpp_report(npm_dir, model, ctx, ubatch, type_k, type_v, fa, sequences=1):
    # node-llama-cpp's contextSize is each sequence's: llama.cpp's -c is that times the sequences.
    options = {"contextSize": ctx // sequences, "sequences": sequences, "batchSize": ubatch,
               "experimentalKvCacheKeyType": type_k.upper(),
               "experimentalKvCacheValueType": type_v.upper(), "flashAttention": {"on": True, "off": False}.get(fa, "auto")}
    shutil.copy(HERE / "load.mjs", npm_dir / "load.mjs")
    done = subprocess.run(["node", str(npm_dir / "load.mjs"), str(model), json.dumps(options)], cwd=npm_dir,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def memplan_report(model, ctx, ubatch, type_k, type_v, fa, sequences=1):
    done = subprocess.run([CLI, "estimate", str(model), "--engine", "llama.cpp", "--cpu", "--seq", str(ctx),
                           "--ubatch", str(ubatch), "--cache-type-k", type_k, "--cache-type-v", type_v,
                           "--flash-attn", fa, "--parallel", str(sequences), "--format", "json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (device,) = report["devices"]
    rows = {c["name"]: c["bytes"] for c in device["components"]}
    return report, rows


@pytest.mark.parametrize("model,ctx,ubatch,type_k,type_v,fa", CASES)
def test_memplan_prices_what_llama_cpp_allocates(llama_cpp, models, model, ctx, ubatch, type_k, type_v, fa):
    real = llama_cpp_report(llama_cpp, models / model, ctx, ubatch, type_k, type_v, fa)
    report, rows = memplan_report(models / model, ctx, ubatch, type_k, type_v, fa)
    assert real["n_ubatch"] == ubatch
    assert real["flash_attn"] == (fa != "off")
    assert report["llama_cpp"]["cells"] == real["cells"]
    # On a CPU whose backend repacks the matrices (AMX) the model's buffer is the repacked copy:
    # the weights are checked to the byte through context_probe, which loads without it.
    assert real["repacked"] or rows["weights"] == real["model_bytes"]
    assert rows["kv_cache"] + rows["compute_buffer"] == real["context_bytes"]
    assert round(rows["kv_cache"] / MIB, 2) == pytest.approx(real["kv_mib"], abs=0.006)
    assert round(rows["compute_buffer"] / MIB, 4) == pytest.approx(real["compute_mib"], abs=0.00006)
    assert round(rows["output_buffer"] / MIB, 2) == pytest.approx(real["output_mib"], abs=0.006)


# -np N: N sequences of -c / N cells each (rounded up to 256), each its own stream of the cache,
# and a row of logits each. llama.cpp rounds the 512-token micro-batch up to a multiple of N
# (513 for 3, 515 for 5), so every tensor of the graph has a row more per stream.
PARALLEL = [
    ("llama-q4_k.gguf", 2000, 2, "on"),
    ("qwen2-q8_0-tied.gguf", 4000, 4, "off"),
    ("gpt2-f16.gguf", 4096, 4, "auto"),
    ("llama-q4_k.gguf", 2100, 3, "on"),
    ("qwen2-q8_0-tied.gguf", 5000, 5, "off"),
]


@pytest.mark.parametrize("model,ctx,sequences,fa", PARALLEL)
def test_parallel_sequences_each_keep_their_cells(llama_cpp, models, model, ctx, sequences, fa):
    real = llama_cpp_report(llama_cpp, models / model, ctx, 512, "f16", "f16", fa, sequences)
    report, rows = memplan_report(models / model, ctx, 512, "f16", "f16", fa, sequences)
    assert report["llama_cpp"]["cells"] == real["cells"]
    assert report["llama_cpp"]["sequences"] == sequences
    assert real["repacked"] or rows["weights"] == real["model_bytes"]
    assert round(rows["kv_cache"] / MIB, 2) == pytest.approx(real["kv_mib"], abs=0.006)
    assert round(rows["output_buffer"] / MIB, 2) == pytest.approx(real["output_mib"], abs=0.006)
    assert rows["compute_buffer"] == real["context_bytes"] - rows["kv_cache"]


@pytest.fixture(scope="module")
def llama_cpp_build(llama_cpp, tmp_path_factory):
    """What probes are built from: (a C++ compiler, llama.cpp's source from the package's bundle,
    the folder of the package's CPU libraries)."""
    package = llama_cpp / "node_modules" / "node-llama-cpp" / "llama" / "gitRelease.bundle"
    bins = [d for d in (llama_cpp / "node_modules" / "@node-llama-cpp").glob("*/bins/*/") if list(d.glob("libllama*.so"))]
    cxx = os.environ.get("MEMPLAN_CXX") or shutil.which("c++")
    if not package.is_file() or not bins:
        pytest.skip("node-llama-cpp ships no llama.cpp source bundle or no CPU libraries to build probes against")
    if cxx is None or shutil.which("git") is None:
        pytest.skip("building llama.cpp probes needs a C++ compiler and git (to open llama.cpp's source bundle)")
    source = tmp_path_factory.mktemp("source") / "llama.cpp"
    subprocess.run(["git", "clone", "-q", str(package), str(source)], check=True, capture_output=True)
    return cxx, source, bins[0]


def libraries(lib):
    return [str(next(lib.glob(pattern)))
            for pattern in ("libllama.*so", "libggml.*so", "libggml-base.so", "libllama-common.so")]


@pytest.fixture(scope="module")
def context_probe(llama_cpp_build, tmp_path_factory):
    """context_probe.cpp built against node-llama-cpp's llama.cpp: (the program, its environment)."""
    cxx, source, lib = llama_cpp_build
    program = tmp_path_factory.mktemp("probe") / "context_probe"
    subprocess.run([cxx, "-std=c++17", "-O1", "-I", str(source / "include"), "-I", str(source / "src"), "-I",
                    str(source / "ggml" / "include"), "-I", str(source / "common"), str(HERE / "context_probe.cpp"),
                    *libraries(lib), f"-Wl,-rpath,{lib}", "-o", str(program)], check=True)
    return program, {**os.environ, "LLAMA_CPP_BACKENDS": str(lib)}


@pytest.fixture(scope="module")
def mmproj_probe(llama_cpp_build, tmp_path_factory):
    """mmproj_probe.cpp with llama.cpp's mtmd (the vision towers' loader), which the package does
    not ship as a library: compiled here from the same source bundle, unoptimised (the probe only
    sizes buffers), against the package's libraries."""
    cxx, source, lib = llama_cpp_build
    mtmd = source / "tools" / "mtmd"
    out = tmp_path_factory.mktemp("mmproj_probe")
    sources = [mtmd / f"{name}.cpp" for name in ("clip", "mtmd", "mtmd-audio", "mtmd-image")]
    sources += sorted((mtmd / "models").glob("*.cpp"))
    includes = ["-I", str(source / "include"), "-I", str(source / "ggml" / "include"), "-I", str(mtmd), "-I",
                str(source / "vendor")]

    def compile_one(path):
        obj = out / (path.parent.name + "-" + path.stem + ".o")
        subprocess.run([cxx, "-std=c++17", "-O0", "-w", "-c", str(path), *includes, "-o", str(obj)], check=True)
        return str(obj)

    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        objects = list(pool.map(compile_one, sources))
    program = out / "mmproj_probe"
    subprocess.run([cxx, "-std=c++17", "-O0", *includes, str(HERE / "mmproj_probe.cpp"), *objects, *libraries(lib),
                    "-lpthread", f"-Wl,-rpath,{lib}", "-o", str(program)], check=True)
    return program, {**os.environ, "LLAMA_CPP_BACKENDS": str(lib)}


GGML_TYPES = {"f32": 0, "f16": 1, "q4_0": 2, "q8_0": 8, "bf16": 30}  # ggml_type ids


def probe_report(probe, model, ctx, ubatch, sequences, unified, outputs, fa, type_k="f16", type_v="f16",
                 fit_budget=None):
    program, env = probe
    done = subprocess.run([str(program), str(model), str(ctx), str(ubatch), str(sequences), str(int(unified)),
                           str(outputs), str(int(fa != "off")), str(GGML_TYPES[type_k]), str(GGML_TYPES[type_v])] +
                          ([str(fit_budget)] if fit_budget else []),
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def memplan_rows(model, ctx, ubatch, fa, *extra):
    done = subprocess.run([CLI, "estimate", str(model), "--engine", "llama.cpp", "--cpu", "--seq", str(ctx),
                           "--ubatch", str(ubatch), "--flash-attn", fa, *extra, "--format", "json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (device,) = report["devices"]
    return report, {c["name"]: c["bytes"] for c in device["components"]}


# (model, -c, -ub, -np, --kv-unified, llama-server, flash attention). llama-server keeps one
# output per slot (n_outputs_max = -np): its compute buffer drops the micro-batch's logits.
# Unset -np with llama-server is its auto: 4 slots over one unified cache. -c 1025 over 2 is
# 1280 / 2 = 640 -> 768 cells (the context is padded before it is divided); 2100 over 3 makes
# the 512-token micro-batch 513 tokens, a multiple of 3.
CONTEXTS = [
    ("llama-q4_k.gguf", 4096, 512, 4, True, False, "on"),
    ("qwen2-q8_0-tied.gguf", 3000, 512, 3, True, True, "on"),
    ("gpt2-f16.gguf", 4096, 512, 4, True, True, "off"),
    ("llama-draft-q8_0.gguf", 8192, 512, None, False, True, "on"),
    ("qwen2-q8_0-tied.gguf", 2048, 256, 2, False, True, "off"),
    ("llama-q4_k.gguf", 1025, 512, 2, False, False, "on"),
    ("gpt2-f16.gguf", 2100, 512, 3, False, False, "off"),
]


@pytest.mark.parametrize("model,ctx,ubatch,sequences,unified,server,fa", CONTEXTS)
def test_unified_caches_and_server_outputs_as_llama_cpp_allocates(context_probe, models, model, ctx, ubatch,
                                                                  sequences, unified, server, fa):
    extra = (["--parallel", str(sequences)] if sequences else []) + (["--kv-unified"] if unified else []) + (
        ["--llama-server"] if server else [])
    report, rows = memplan_rows(models / model, ctx, ubatch, fa, *extra)
    n_seq = sequences or 4
    real = probe_report(context_probe, models / model, ctx, ubatch, n_seq, unified or sequences is None,
                        n_seq if server else 0, fa)
    assert report["llama_cpp"]["sequences"] == n_seq
    assert rows["weights"] == real["model_bytes"]
    assert rows["kv_cache"] == real["kv_bytes"]
    assert rows["compute_buffer"] == real["compute_bytes"]


# Mamba and Mamba-2 (state-space layers): no KV cells, a recurrent state of one slot per
# sequence, unified or not: f32 rows of the convolution's last d_conv - 1 columns and of the
# scan's state per layer (llama_memory_recurrent). -c 300 caps the 512-token micro-batch at 300
# tokens (llama_context's n_batch = min(n_ctx, n_batch), before -c is padded to 256).
STATE_SPACE = [
    ("mamba-q8_0.gguf", 1024, 512, 1, False, False),
    ("mamba-q8_0.gguf", 2100, 512, 3, False, False),
    ("mamba-q8_0.gguf", 4096, 128, 7, False, True),
    ("mamba2-f16.gguf", 4096, 512, 4, True, True),
    ("mamba2-f16.gguf", 5000, 512, 5, False, False),
    ("mamba2-f16.gguf", 300, 512, 1, False, False),
]


@pytest.mark.parametrize("model,ctx,ubatch,sequences,unified,server", STATE_SPACE)
def test_state_space_models_keep_a_recurrent_state_per_sequence(context_probe, models, model, ctx, ubatch, sequences,
                                                                 unified, server):
    extra = ["--parallel", str(sequences)] + (["--kv-unified"] if unified else []) + (
        ["--llama-server"] if server else [])
    report, rows = memplan_rows(models / model, ctx, ubatch, "auto", *extra)
    real = probe_report(context_probe, models / model, ctx, ubatch, sequences, unified, sequences if server else 0,
                        "on")
    assert report["llama_cpp"]["cells"] == 0
    assert report["llama_cpp"]["state_cells"] == sequences
    assert rows["weights"] == real["model_bytes"]
    assert "kv_cache" not in rows
    assert rows["recurrent_state"] == real["kv_bytes"]
    assert rows["compute_buffer"] == real["compute_bytes"]


# Hybrids: a Nemotron-H of layers M * M - M * (Mamba-2, attention, MLP), a Granite 4.0-H
# (granitehybrid) of M M * M M *, a gated MLP after every mixer, and a Falcon-H1. llama_memory_hybrid keeps the
# attention layers' KV cells and the Mamba layers' state slots, both to the byte. The hybrid's
# graph is not recorded: memplan's compute buffer is a Mamba graph's replay above the attention
# inputs that stay allocated until the last attention layer (for Granite also the residual
# stream), or the transformer's closed form, whichever is larger. Measured, memplan / llama.cpp:
# Nemotron-H 1.0000, 1.0002, 1.0173; Granite 0.9729, 1.0001, 1.0311; Falcon-H1 (attention and a
# Mamba-2 mixer side by side in every layer) 1.0006, 0.9731, 1.0181.
HYBRID = [
    ("nemotron_h-q8_0.gguf", 4096, 512, 1, False, False, "on", (1.0, 1.02)),
    ("nemotron_h-q8_0.gguf", 4096, 512, 3, False, True, "off", (1.0, 1.02)),
    ("nemotron_h-q8_0.gguf", 8192, 512, 4, True, True, "on", (1.0, 1.02)),
    # Nemotron 3 (nemotron_h_moe, layers M E M * E M: ReLU² experts beside a shared expert): the
    # Nemotron-H closed form bounds its expert layers, 1.0000 to 1.0288.
    ("nemotron_h_moe-q8_0.gguf", 4096, 512, 1, False, False, "on", (1.0, 1.035)),
    ("nemotron_h_moe-q8_0.gguf", 4096, 512, 3, False, True, "off", (1.0, 1.035)),
    ("nemotron_h_moe-q8_0.gguf", 8192, 512, 4, True, True, "on", (1.0, 1.035)),
    ("granitehybrid-q4_k.gguf", 4096, 512, 1, False, False, "on", (0.965, 1.035)),
    ("granitehybrid-q4_k.gguf", 4096, 512, 3, False, True, "off", (0.965, 1.035)),
    ("granitehybrid-q4_k.gguf", 8192, 512, 4, True, True, "on", (0.965, 1.035)),
    # Granite 4.0-H Tiny's kind (8 routed experts, 2 a token, and a shared expert after every
    # mixer): the experts' phases are a closed form read from llama.cpp's allocator trace,
    # exact at every setting tried (1.0000 to 1.0001).
    ("granitehybrid-moe-q8_0.gguf", 4096, 512, 1, False, False, "on", (0.9999, 1.0001)),
    ("granitehybrid-moe-q8_0.gguf", 4096, 512, 3, False, True, "off", (0.9999, 1.0002)),
    ("granitehybrid-moe-q8_0.gguf", 8192, 512, 4, True, True, "on", (0.9999, 1.0001)),
    ("granitehybrid-moe-q8_0.gguf", 2048, 512, 1, False, False, "off", (0.9999, 1.0001)),
    ("falcon-h1-q8_0.gguf", 4096, 512, 1, False, False, "on", (0.965, 1.035)),
    ("falcon-h1-q8_0.gguf", 4096, 512, 3, False, True, "off", (0.965, 1.035)),
    ("falcon-h1-q8_0.gguf", 8192, 512, 4, True, True, "on", (0.965, 1.035)),
    # Qwen3.5 (qwen35: gated DeltaNet layers, a gated attention layer in four) and Qwen3.5-MoE
    # (qwen35moe: routed experts and a gated shared expert): their compute buffer is a closed
    # form read from llama.cpp's allocator trace, exact for Qwen3.5 at every setting tried
    # (1.0000 to 1.0003; -c 300, which caps the micro-batch, 0.9968); for Qwen3.5-MoE, whose
    # routing leaves holes the form places only roughly, 0.93 to 1.17.
    ("qwen35-q8_0.gguf", 4096, 512, 4, False, False, "on", (0.9999, 1.0001)),
    ("qwen35-q8_0.gguf", 8192, 512, 1, False, False, "off", (0.9999, 1.0001)),
    ("qwen35-q8_0.gguf", 8192, 512, 4, True, True, "on", (0.9999, 1.0005)),
    ("qwen35-q8_0.gguf", 4096, 128, 3, True, False, "off", (0.9999, 1.0001)),
    ("qwen35moe-f16.gguf", 1024, 512, 1, False, False, "on", (0.9999, 1.0001)),
    ("qwen35moe-f16.gguf", 8192, 512, 4, True, True, "on", (1.05, 1.12)),
    ("qwen35moe-f16.gguf", 4096, 128, 3, True, False, "off", (0.998, 1.0001)),
]


@pytest.mark.parametrize("model,ctx,ubatch,sequences,unified,server,fa,band", HYBRID)
def test_a_hybrid_keeps_kv_cells_and_state_slots(context_probe, models, model, ctx, ubatch, sequences, unified, server,
                                                 fa, band):
    model = models / model
    extra = ["--parallel", str(sequences)] + (["--kv-unified"] if unified else []) + (
        ["--llama-server"] if server else [])
    report, rows = memplan_rows(model, ctx, ubatch, fa, *extra)
    real = probe_report(context_probe, model, ctx, ubatch, sequences, unified, sequences if server else 0, fa)
    assert report["llama_cpp"]["state_cells"] == sequences
    assert rows["weights"] == real["model_bytes"]
    assert rows["kv_cache"] + rows["recurrent_state"] == real["kv_bytes"]
    assert band[0] <= rows["compute_buffer"] / real["compute_bytes"] <= band[1]


def test_a_gated_deltanets_state_is_its_conv_columns_and_fp32_heads(context_probe, models):
    # Hand-derived: qwen35-q8_0's 6 DeltaNet layers (8 layers, every 4th attention), conv over
    # 2 x 2 key heads x 32 + 4 value heads x 32 = 256 channels, 4 taps, 4 value heads of 32 x 32,
    # f32, over -np 2; its 2 attention layers' 2 KV heads of 64 over 1,024 cells in f16.
    real = probe_report(context_probe, models / "qwen35-q8_0.gguf", 1024, 512, 2, False, 0, "on")
    state = 6 * ((4 - 1) * 256 + 4 * 32 * 32) * 4 * 2
    assert real["kv_bytes"] == state + 2 * 2 * 1024 * 2 * 64 * 2


def test_a_mambas_state_is_its_conv_columns_and_scan_states(context_probe, models):
    # Hand-derived: mamba-q8_0's 3 layers, d_inner 512, state 16, conv 4 taps, over -np 2:
    # ((4 - 1) x 512 + 16 x 512) x 4 B x 2 slots per layer.
    real = probe_report(context_probe, models / "mamba-q8_0.gguf", 1024, 512, 2, False, 0, "on")
    assert real["kv_bytes"] == 3 * (3 * 512 + 16 * 512) * 4 * 2


# llama-server with a draft model (-md): the draft's context copies the main one's -c, -np,
# unified cache and -ub, with its own cache types and one output per slot; the main context
# keeps -np x (1 + --draft-max) outputs to verify the drafts (common_base_params_to_speculative,
# server_output_limits).
DRAFTS = [
    (4096, 512, None, 3, "q8_0", "on"),
    (2048, 256, 2, 5, "f16", "off"),
]


@pytest.mark.parametrize("ctx,ubatch,sequences,draft_max,draft_cache,fa", DRAFTS)
def test_a_draft_model_has_its_own_context(context_probe, models, ctx, ubatch, sequences, draft_max, draft_cache,
                                           fa):
    main, draft = models / "qwen2-q8_0-tied.gguf", models / "llama-draft-q8_0.gguf"
    extra = ["--draft", str(draft), "--draft-max", str(draft_max), "--cache-type-k-draft", draft_cache,
             "--cache-type-v-draft", draft_cache] + (["--parallel", str(sequences)] if sequences else [])
    report, rows = memplan_rows(main, ctx, ubatch, fa, *extra)
    n_seq, unified = sequences or 4, sequences is None
    real_main = probe_report(context_probe, main, ctx, ubatch, n_seq, unified, n_seq * (1 + draft_max), fa)
    real_draft = probe_report(context_probe, draft, ctx, ubatch, n_seq, unified, n_seq, fa, draft_cache, draft_cache)
    assert report["llama_cpp"]["draft"] == "llama-draft-q8_0"
    assert rows["weights"] == real_main["model_bytes"]
    assert rows["kv_cache"] == real_main["kv_bytes"]
    assert rows["compute_buffer"] == real_main["compute_bytes"]
    assert rows["draft_weights"] == real_draft["model_bytes"]
    assert rows["draft_kv_cache"] == real_draft["kv_bytes"]
    assert rows["draft_compute_buffer"] == real_draft["compute_bytes"]


# llama-server with -c unset: the trained context for each slot, and llama.cpp's own --fit
# (common_fit_params) reducing it until 1 GiB of the device stays free, by linear interpolation
# between the memory at --fit-ctx (4,096 per stream) and at the full context, rounded down to 256
# per stream. On the CPU llama.cpp fits to the host's total memory less the margin; the probe sets
# the margin so that it fits to the budget memplan is given (--cpu=BYTES), 1 GiB kept free.
GIB = 1024 * MIB
SERVER_FIT = [
    ("qwen2-q8_0-tied.gguf", None, GIB + 35_000_000),   # 32,768 -> 9,984
    ("qwen2-q8_0-tied.gguf", None, GIB + 60_000_000),   # -> 22,016
    ("qwen2-q8_0-tied.gguf", 2, GIB + 30_000_000),      # two streams: 4,096 x 2 at least, steps of 512
    ("nemotron_h-q8_0.gguf", None, GIB + 40_000_000),   # a hybrid: KV cells and state slots
    ("qwen2-q8_0-tied.gguf", None, GIB + 200_000_000),  # room for the whole 8,192 x 4 slots
]


@pytest.mark.parametrize("model,sequences,budget", SERVER_FIT)
def test_llama_server_fits_its_context_as_llama_cpp_does(context_probe, models, model, sequences, budget):
    extra = ["--parallel", str(sequences)] if sequences else []
    done = subprocess.run([CLI, "estimate", str(models / model), "--engine", "llama.cpp", f"--cpu={budget}",
                           "--llama-server", *extra, "--format", "json"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    n_seq = sequences or 4
    real = probe_report(context_probe, models / model, 0, 512, n_seq, sequences is None, n_seq, "on",
                        fit_budget=budget)
    assert report["llama_cpp"]["n_ctx"] == real["fit_n_ctx"]


def test_the_cache_cells_are_the_context_rounded_up_to_256(llama_cpp, models):
    # Hand-derived: -c 1000 -> 1024 cells; llama-q4_k's 3 layers x 2 kv heads x 64 x f16 x (K + V).
    real = llama_cpp_report(llama_cpp, models / "llama-q4_k.gguf", 1000, 512, "f16", "f16", "auto")
    assert real["cells"] == 1024
    assert real["kv_mib"] * MIB == 1024 * 3 * 2 * 64 * 2 * 2


# Vision towers' files (--mmproj) beside the text models they project into: Gemma 3's projector
# beside a llama, Qwen3-VL's with deepstack mergers on two layers beside a Qwen3-VL text model
# with two deepstack layers (llama.cpp refuses it beside the llama: 768 wide, not 256), and
# Qwen2-VL's and Qwen2.5-VL's (windows, their mask of every patch pair) beside a Qwen2-VL text model. Their
# tensors in the CPU buffer ggml allocates for them, to the byte, and the compute buffer of the
# warm-up image (Qwen's at its 46 x 46 tokens: --image-max-tokens 2116 keeps memplan to that
# image), with flash attention and without (every head's scores), to the byte.
@pytest.mark.parametrize("tower,model,extra", [("mmproj-gemma3-f16.gguf", "llama-q4_k.gguf", []),
                                               ("mmproj-qwen3vl-f16.gguf", "qwen3vl-q8_0.gguf",
                                                ["--image-max-tokens", "2116"]),
                                               ("mmproj-qwen2vl-f16.gguf", "qwen2vl-q8_0.gguf",
                                                ["--image-max-tokens", "2116"]),
                                               ("mmproj-qwen2.5vl-f16.gguf", "qwen2vl-q8_0.gguf",
                                                ["--image-max-tokens", "2116"])])
@pytest.mark.parametrize("fa", ["on", "off"])
def test_a_vision_tower_as_llama_cpp_sizes_it(mmproj_probe, models, tower, model, extra, fa):
    program, env = mmproj_probe
    mmproj = models / tower
    done = subprocess.run([str(program), str(mmproj), str(int(fa == "on"))], capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    real = json.loads(done.stdout.strip().splitlines()[-1])
    report, rows = memplan_rows(models / model, 1024, 512, fa, "--mmproj", str(mmproj), *extra)
    assert rows["mmproj_weights"] == real["buffer_bytes"]
    assert rows["mmproj_compute"] == real["usage_bytes"] - real["tensor_bytes"]


# Gemma 3 and Gemma 2 as llama-server runs them (sliding layers keep their window, not the whole context):
# six layers sliding over 512 tokens to one global, so two caches (the window and a micro-batch
# per sequence, padded to 256, and the whole context), each with its row indices and mask among
# the graph's inputs; with a vocabulary of 2,048 a layer binds, with 32,768 the logits do.
# (model, -c, -ub, -np, llama-server, flash attention)
GEMMA3 = [
    ("gemma3-q8_0.gguf", 2048, 512, 1, False, "on"),
    ("gemma3-q8_0.gguf", 8192, 512, 1, False, "on"),
    ("gemma3-q8_0.gguf", 1000, 256, 1, False, "on"),
    ("gemma3-q8_0.gguf", 2048, 512, 1, False, "off"),
    ("gemma3-q8_0.gguf", 16384, 1024, 1, False, "on"),
    ("gemma3-q8_0.gguf", 4096, 512, 4, True, "on"),
    ("gemma3-v32k-q8_0.gguf", 2048, 512, 1, False, "on"),
    ("gemma3-v32k-q8_0.gguf", 1000, 256, 1, False, "on"),
    ("gemma3-v32k-q8_0.gguf", 8192, 1024, 1, False, "on"),
    ("gemma3-v32k-q8_0.gguf", 4096, 512, 2, True, "off"),
    # Gemma 2 (every other layer sliding; the compute buffer the closed form's, which its graph
    # meets at these settings).
    ("gemma2-v32k-q8_0.gguf", 2048, 512, 1, False, "on"),
    ("gemma2-v32k-q8_0.gguf", 2048, 512, 1, False, "off"),
    ("gemma2-v32k-q8_0.gguf", 8192, 1024, 1, False, "on"),
]


# Qwen3 (per-head q/k norms), Qwen3-MoE and a Mixtral-like llama (8 experts of 128, 2 a token):
# their experts' gate and up projections are computed for each of a token's experts (Qwen3's
# graph replayed, the llama's closed form). Qwen3-VL's text models (M-RoPE's four positions a
# token, embeddings padded to three times d_model for two deepstack layers) and Qwen2-VL's
# (qwen2 with M-RoPE). (model, -c, -ub, -np, llama-server, flash attention)
MOE = [
    ("qwen3-q8_0.gguf", 2048, 512, 1, False, "on"),
    ("qwen3-q8_0.gguf", 1000, 256, 1, False, "off"),
    ("qwen3-q8_0.gguf", 4096, 512, 4, True, "on"),
    ("qwen3moe-q8_0.gguf", 2048, 512, 1, False, "on"),
    ("qwen3moe-q8_0.gguf", 2048, 512, 1, False, "off"),
    ("qwen3moe-q8_0.gguf", 8192, 1024, 1, False, "on"),
    ("llama-moe-q8_0.gguf", 2048, 512, 1, False, "on"),
    ("llama-moe-q8_0.gguf", 8192, 1024, 1, False, "on"),
    ("qwen3vl-q8_0.gguf", 2048, 512, 1, False, "on"),
    ("qwen3vl-q8_0.gguf", 1000, 256, 1, False, "off"),
    ("qwen3vl-q8_0.gguf", 4096, 512, 4, True, "on"),
    ("qwen3vlmoe-q8_0.gguf", 8192, 1024, 1, False, "on"),
    ("qwen3vlmoe-q8_0.gguf", 1000, 256, 3, True, "off"),
    ("qwen2vl-q8_0.gguf", 2048, 512, 1, False, "on"),
    ("qwen2vl-q8_0.gguf", 4096, 512, 4, True, "off"),
]


# Qwen3's replayed graph with other caches: a quantised K or V adds Hadamard rotations (their
# matrices among the inputs, q, k, v and the attention's output rotated); an f32 cache is viewed
# as it is. (model, -c, -ub, flash attention, K, V)
QWEN3_CACHES = [
    ("qwen3vl-q8_0.gguf", 2048, 512, "on", "q8_0", "q8_0"),
    ("qwen3vl-q8_0.gguf", 2048, 512, "off", "q8_0", "f16"),
    ("qwen3vl-q8_0.gguf", 2048, 512, "on", "f16", "q4_0"),
    ("qwen3vlmoe-q8_0.gguf", 1000, 256, "off", "q4_0", "f32"),
    ("qwen3moe-q8_0.gguf", 4096, 1024, "on", "bf16", "q8_0"),
]


@pytest.mark.parametrize("model,ctx,ubatch,fa,type_k,type_v", QWEN3_CACHES)
def test_qwen3s_graph_with_a_cache_type(context_probe, models, model, ctx, ubatch, fa, type_k, type_v):
    real = probe_report(context_probe, models / model, ctx, ubatch, 1, False, 0, fa, type_k, type_v)
    report, rows = memplan_rows(models / model, ctx, ubatch, fa, "--cache-type-k", type_k, "--cache-type-v", type_v)
    assert rows["kv_cache"] == real["kv_bytes"]
    assert rows["compute_buffer"] == real["compute_bytes"]


# Gemma 4 (a dense one, one with experts beside each layer's MLP, and an E2B-like one with
# per-layer inputs whose last two layers read an earlier layer's cache with MLPs twice as wide):
# sliding layers with heads of 64, full-attention layers with heads of 128; weights and both
# caches to the byte. Its graph is not recorded: the compute buffer is the closed form's, within
# the range it reached against llama.cpp at these settings (0.878 to 1.133).
GEMMA4 = [
    ("gemma4-q8_0.gguf", 2048, 512, "on"),
    ("gemma4-q8_0.gguf", 8192, 1024, "off"),
    ("gemma4moe-q8_0.gguf", 2048, 512, "off"),
    ("gemma4moe-q8_0.gguf", 1000, 256, "on"),
    ("gemma4e-q8_0.gguf", 2048, 512, "on"),
    ("gemma4e-q8_0.gguf", 1000, 256, "on"),
    ("gemma4e-q8_0.gguf", 8192, 1024, "off"),
]


@pytest.mark.parametrize("model,ctx,ubatch,fa", GEMMA4)
def test_gemma4s_own_heads_as_llama_cpp_caches_them(context_probe, models, model, ctx, ubatch, fa):
    real = probe_report(context_probe, models / model, ctx, ubatch, 1, False, 0, fa)
    report, rows = memplan_rows(models / model, ctx, ubatch, fa)
    assert rows["weights"] == real["model_bytes"]
    assert rows["kv_cache"] == real["kv_bytes"]
    assert 0.85 <= rows["compute_buffer"] / real["compute_bytes"] <= 1.15


@pytest.mark.parametrize("model,ctx,ubatch,sequences,server,fa", GEMMA3 + MOE)
def test_a_transformer_through_the_probe(context_probe, models, model, ctx, ubatch, sequences, server, fa):
    real = probe_report(context_probe, models / model, ctx, ubatch, sequences, server, sequences if server else 0, fa)
    extra = ["--llama-server", "--parallel", str(sequences), "--kv-unified"] if server else []
    report, rows = memplan_rows(models / model, ctx, ubatch, fa, *extra)
    assert rows["weights"] == real["model_bytes"]
    assert rows["kv_cache"] == real["kv_bytes"]
    assert rows["compute_buffer"] == real["compute_bytes"]
