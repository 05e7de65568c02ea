"""The memplan Python module (docs/python.md), against published figures, hand-derived
products and the CLI itself (MEMPLAN_CLI: the memplan binary of the same build).
Run by ctest (tests/CMakeLists.txt) with PYTHONPATH=BUILD/python."""

import json
import os
import pathlib
import subprocess

import pytest

import memplan

CLI = os.environ.get("MEMPLAN_CLI", "memplan")
DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def cli_json(*args):
    done = subprocess.run([CLI, *args, "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


# --- estimate ----------------------------------------------------------------------------

def test_total_bytes_is_the_cli_total():
    # The check: the module and `memplan estimate llama-2-7b --format json` agree.
    assert memplan.estimate("llama-2-7b").total_bytes == cli_json("estimate", "llama-2-7b")["total_bytes"]


def test_to_dict_is_the_cli_json_for_the_same_plan():
    plan = dict(batch=4, seq=512, new_tokens=64, kv_precision="fp8", gpu="rtx-4090")
    got = memplan.estimate("mistral-7b-v0.1", "generation", **plan).to_dict()
    want = cli_json("estimate", "mistral-7b-v0.1", "-w", "generation", "--batch", "4", "--seq", "512",
                    "--new-tokens", "64", "--kv-precision", "fp8", "--gpu", "rtx-4090")
    assert got == want


def test_weights_are_the_published_count_times_two_bytes():
    # GPT-2 small: 124,439,808 parameters (keras-hub gpt2_presets.py, gpt2_base_en), fp16.
    plan = memplan.estimate("gpt2", "weights", precision="fp16")
    weights = next(c for c in plan.components if c.name == "weights")
    assert weights.bytes == 124_439_808 * 2
    assert sum(c.bytes for c in weights.children) == weights.bytes
    assert "124,439,808 params" in weights.formula


def test_kv_cache_by_hand():
    # Llama-2-7B: 32 layers x (K and V) x 32 kv heads x 128 dims x fp16 (2 B) per token; the
    # last decode step (the peak, with this many new tokens) holds prompt + new tokens.
    plan = memplan.estimate("llama-2-7b", "generation", batch=2, seq=1000, new_tokens=1000, precision="fp16")
    kv = next(c for c in plan.components if c.name == "kv_cache")
    assert kv.bytes == 32 * 2 * 32 * 128 * 2 * 2 * (1000 + 1000)


def test_verdict_against_a_gpu_and_a_capacity():
    assert memplan.estimate("llama-2-7b", precision="fp16", gpu="a100-80gb").fits is True
    big = memplan.estimate("llama-2-70b", precision="fp16", gpu="24GiB")
    assert big.fits is False and big.verdict == "does_not_fit"
    assert memplan.estimate("gpt2").verdict is None


def test_the_cpu_as_a_target():
    # GPT-2 on the CPU: fp32 by default, 124,439,808 x 4 bytes of weights, no CUDA context.
    plan = memplan.estimate("gpt2", cpu="8GiB")
    assert plan.to_dict()["device"] == {"name": "cpu", "memory_bytes": 8 * 2**30}
    assert next(c for c in plan.components if c.name == "weights").bytes == 124_439_808 * 4
    overhead = next(c for c in plan.components if c.name == "overhead")
    assert [c.name for c in overhead.children] == ["fragmentation"]
    assert plan.fits is True
    with pytest.raises(memplan.InputError, match="cpu plans for the host instead of a GPU"):
        memplan.estimate("gpt2", cpu=True, gpu="tesla-t4")


def test_a_config_dict_is_a_model():
    # Mistral-7B-v0.1's config.json: 7,241,732,096 parameters (keras-hub mistral_presets.py).
    config = json.loads((DATA / "hf" / "mistral-7b-v0.1" / "config.json").read_text())
    assert memplan.estimate(config, "weights").to_dict()["model"]["params"] == 7_241_732_096


def test_a_model_file_path_is_a_model(tmp_path):
    path = DATA / "hf" / "qwen2.5-0.5b" / "config.json"  # 494,032,768 (keras-hub qwen_presets.py)
    assert memplan.estimate(path, "weights").to_dict()["model"]["params"] == 494_032_768


def test_flags_and_lists():
    with_cache = memplan.estimate("gpt2", "inference", seq=256)
    without = memplan.estimate("gpt2", "inference", seq=256, no_kv_cache=True)
    assert "kv_cache" in [c.name for c in with_cache.components]
    assert "kv_cache" not in [c.name for c in without.components]
    listed = memplan.estimate("gpt2", "extraction", seq=128, filter=["blocks.*.hook_resid_post"], layers="0,5,11")
    assert listed.total_bytes < memplan.estimate("gpt2", "extraction", seq=128).total_bytes


def test_zero_states_are_deepspeeds_plus_the_reduce_bucket():
    # DeepSpeed's estimate_zero2/3_model_states_mem_needs (deepspeed/runtime/zero/stage_1_and_2.py,
    # stage3.py), one node of N GPUs, written out here; docs/accuracy.md explains each difference.
    P, L, N = 6_738_415_616, 131_072_000, 8  # Llama-2-7b; its largest module: 32,000 x 4,096
    bucket = 500_000_000 * 2  # reduce_bucket_size elements of bf16 gradients, which DeepSpeed leaves out
    cases = [
        (["2"], [], 2 * P + int(18 * P / N), bucket),
        (["2"], ["optimizer"], 2 * P, bucket),
        (["3"], [], 4 * L + int(18 * P / N), bucket - 2 * P // N),  # memplan's backward peak holds 16 B per P / N
        (["3"], ["optimizer"], 4 * L + int(2 * P / N), bucket),
        (["3"], ["optimizer", "params"], 4 * L, bucket),
    ]
    states = {"weights", "gradients", "master_weights", "optimizer_states", "optimizer_workspace", "gathered_parameters"}
    for zero, offload, deepspeed, difference in cases:
        plan = memplan.estimate("llama-2-7b", "training", dp=N, zero=zero[0], offload=offload or None, seq=512)
        rows = plan.to_dict()["devices"][0]["components"]
        assert sum(r["bytes"] for r in rows if r["name"] in states) == deepspeed + difference, (zero, offload)


# --- errors ------------------------------------------------------------------------------

def test_a_bad_value_is_an_input_error_naming_the_keyword():
    with pytest.raises(memplan.InputError) as error:
        memplan.estimate("gpt2", batch=0)
    assert isinstance(error.value, ValueError)
    assert error.value.key == "batch"
    assert str(error.value).startswith("batch must be")


def test_an_unknown_keyword_says_what_was_meant():
    with pytest.raises(memplan.InputError, match=r"unknown option bach \(did you mean batch\b"):
        memplan.estimate("gpt2", bach=2)


def test_wrong_python_types_are_input_errors():
    with pytest.raises(memplan.InputError, match="no_kv_cache"):
        memplan.estimate("gpt2", no_kv_cache="yes")
    with pytest.raises(memplan.InputError, match="batch"):
        memplan.estimate("gpt2", batch=True)
    with pytest.raises(memplan.InputError, match="model must be"):
        memplan.estimate(42)


def test_an_unknown_model_and_gpu_name_the_closest():
    with pytest.raises(memplan.InputError, match="closest built-in models: 'gpt2'"):
        memplan.estimate("gpt-2")
    with pytest.raises(memplan.InputError, match="unknown GPU 'h1000'"):
        memplan.estimate("gpt2", gpu="h1000")


def test_a_broken_file_is_located(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("family: llama\nd_model: 64\nn_layers: twelve\n")
    with pytest.raises(memplan.InputError) as error:
        memplan.estimate(broken)
    assert f"{broken}:3:11" in str(error.value)
    assert "n_layers" in str(error.value)


def test_a_broken_config_dict_names_the_key():
    config = json.loads((DATA / "hf" / "mistral-7b-v0.1" / "config.json").read_text())
    config["num_hidden_layers"] = -1
    with pytest.raises(memplan.InputError, match="num_hidden_layers"):
        memplan.estimate(config)


# --- fit, sweep, recommend, hooks, tables ------------------------------------------------

def test_fit_finds_the_boundary():
    largest = memplan.fit("gpt2", gpu="tesla-t4", vary="batch", seq=1024)
    assert largest.value is not None and largest.value > 1
    assert memplan.estimate("gpt2", batch=largest.value, seq=1024, gpu="tesla-t4").verdict == "fits"
    assert memplan.estimate("gpt2", batch=largest.value + 1, seq=1024, gpu="tesla-t4").verdict != "fits"


def test_llama_cpp_engine_places_layers_and_fits_ngl():
    # Llama-2-7B at fp16 with -ngl 16: 16 blocks of 404,766,720 B on the GPU (4 x 4096^2 +
    # 3 x 4096 x 11008 weights and two norms of 4096, 2 B each); the GPU's cache is 16 layers
    # x 4096 cells x 4096 x 2 B x (K + V).
    plan = memplan.estimate("llama-2-7b", engine="llama.cpp", gpu="rtx-4090", precision="fp16", seq=4096, ngl=16)
    (gpu,) = plan.to_dict()["devices"]
    rows = {c["name"]: c["bytes"] for c in gpu["components"]}
    assert rows["weights"] == 16 * 404_766_720
    assert rows["kv_cache"] == 16 * 4096 * 4096 * 2 * 2
    largest = memplan.fit("llama-2-13b", engine="llama.cpp", gpu="rtx-3060", precision="fp16", seq=4096, vary="ngl")
    assert largest.to_dict()["limit_rule"].startswith("llama.cpp's --fit margin")
    below = memplan.estimate("llama-2-13b", engine="llama.cpp", gpu="rtx-3060", precision="fp16", seq=4096,
                             ngl=largest.value)
    above = memplan.estimate("llama-2-13b", engine="llama.cpp", gpu="rtx-3060", precision="fp16", seq=4096,
                             ngl=largest.value + 1)
    limit = 12 * 1024**3 - 1024**3  # the card less llama.cpp's 1 GiB margin
    assert below.total_bytes <= limit < above.total_bytes


def test_sweep_rows_are_the_grid():
    grid = memplan.sweep(["gpt2", "pythia-70m"], batch=[1, 8], seq=[256, 1024], precision="fp16")
    rows = grid.rows
    assert len(rows) == 2 * 2 * 2
    assert {(r["model"], r["batch_size"], r["seq_len"]) for r in rows} == {
        (m, b, s) for m in ("gpt2", "pythia-70m") for b in (1, 8) for s in (256, 1024)}
    for row in rows:
        alone = memplan.estimate(row["model"], batch=row["batch_size"], seq=row["seq_len"], precision="fp16")
        assert row["total_bytes"] == alone.total_bytes


def test_sweep_to_pandas():
    pandas = pytest.importorskip("pandas")
    frame = memplan.sweep("gpt2", batch=[1, 2]).to_pandas()
    assert isinstance(frame, pandas.DataFrame) and len(frame) == 2


def test_recommend_ranks_changes_with_their_commands():
    advice = memplan.recommend("llama-2-13b", gpu="rtx-4090", seq=4096, workload="generation")
    assert advice["verdict"] == "does_not_fit"
    first = advice.mitigations[0]
    assert first["fits"] is True and first["saved_bytes"] > 0
    assert first["command"][:5] == ["memplan", "estimate", "llama-2-13b", "--gpu", "rtx-4090"]
    assert advice.gpus_that_fit


def test_hooks_like_run_with_cache_names_filter():
    # GPT-2: blocks 0, 5 and 11, resid_post [batch 1, pos 1024, d_model 768] in bf16 (2 B).
    selected = memplan.hooks("gpt2", "blocks.*.hook_resid_post", layers=[0, 5, 11])
    assert selected.selected_bytes == 3 * 1 * 1024 * 768 * 2
    assert [r["name"] for r in selected.rows] == ["blocks.*.hook_resid_post"]
    assert selected.to_dict() == cli_json("hooks", "gpt2", "--filter", "blocks.*.hook_resid_post", "--layers", "0,5,11")


def test_models_and_gpus():
    by_name = {m["name"]: m for m in memplan.models()}
    assert by_name["gpt2"]["params"] == 124_439_808
    h100 = next(g for g in memplan.gpus() if g["name"] == "h100-sxm-80gb")
    assert h100["memory_bytes"] == 81_559 * 2**20  # nvidia-smi's 81559 MiB


def test_probe_answers_without_a_gpu():
    report = memplan.probe()
    assert report["status"] in ("ok", "no_driver", "no_devices", "driver_error")
    if report["status"] != "ok":
        assert report["reason"]


# --- documentation -----------------------------------------------------------------------

def test_docstrings_and_stubs_come_from_the_option_table():
    names = {o["name"] for o in memplan.options()}
    assert {"batch", "seq", "new_tokens", "kv_precision", "lora_rank"} <= names
    assert "new_tokens:" in memplan.estimate.__doc__
    stubs = (pathlib.Path(memplan.__file__).parent / "__init__.pyi").read_text()
    assert "    new_tokens: int | None = ...," in stubs
    assert "    no_kv_cache: bool | None = ...," in stubs
