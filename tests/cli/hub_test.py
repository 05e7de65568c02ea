"""memplan with Hugging Face Hub ids, local snapshots and safetensors files, against a real
HTTP server on loopback (hub_emulator.py) through memplan's real libcurl client.

The fixture is a tiny Llama written here: hidden 64, 2 layers, 4 heads of 16, 2 KV heads,
MLP 128, vocabulary 256, untied head; bf16 weights with fp32 norms, in two shards whose
data is a hole (never read, never sent).
Parameters, by hand:
  embeddings 256 x 64                                        = 16,384
  per layer: q 64x64 + k 64x32 + v 64x32 + o 64x64 = 12,288; MLP 3 x 64 x 128 = 24,576;
             two norms 2 x 64 = 128                           = 36,992; x 2 = 73,984
  final norm                                                  = 64
  lm_head 256 x 64                                            = 16,384
  total                                                       = 106,816
Bytes: the 5 norms' 320 elements in fp32 = 1,280; the other 106,496 in bf16 = 212,992;
stored 214,272; with transformers' two fp32 rotary buffers of 16 / 2 elements, 64 B, the
weights memplan prices are 214,336.
Usage: hub_test.py MEMPLAN
"""

import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(__file__))
from hub_emulator import COMMIT, Hub  # noqa: E402

MEMPLAN = None
PARAMS = 106816
STORED_BYTES = 214272
WEIGHT_BYTES = STORED_BYTES + 2 * 8 * 4

CONFIG = {
    "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 256,
    "max_position_embeddings": 512, "rms_norm_eps": 1e-5, "tie_word_embeddings": False, "hidden_act": "silu",
    "torch_dtype": "bfloat16",
}


def tensors_of_layer(i):
    p = f"model.layers.{i}."
    return [(p + "self_attn.q_proj.weight", "BF16", [64, 64]), (p + "self_attn.k_proj.weight", "BF16", [32, 64]),
            (p + "self_attn.v_proj.weight", "BF16", [32, 64]), (p + "self_attn.o_proj.weight", "BF16", [64, 64]),
            (p + "mlp.gate_proj.weight", "BF16", [128, 64]), (p + "mlp.up_proj.weight", "BF16", [128, 64]),
            (p + "mlp.down_proj.weight", "BF16", [64, 128]), (p + "input_layernorm.weight", "F32", [64]),
            (p + "post_attention_layernorm.weight", "F32", [64])]


SHARDS = {
    "model-00001-of-00002.safetensors": [("model.embed_tokens.weight", "BF16", [256, 64])] + tensors_of_layer(0),
    "model-00002-of-00002.safetensors": tensors_of_layer(1) + [("model.norm.weight", "F32", [64]),
                                                               ("lm_head.weight", "BF16", [256, 64])],
}


def write_safetensors(path, tensors):
    """A real safetensors header; the data area is a hole of the right size. Returns the header length."""
    header, offset = {}, 0
    for name, dtype, shape in tensors:
        n = 1
        for d in shape:
            n *= d
        size = n * (4 if dtype == "F32" else 2)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        f.truncate(8 + len(text) + offset)
    return len(text)


def write_repo(directory):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(CONFIG, f)
    weight_map, header_bytes = {}, 0
    for shard, tensors in SHARDS.items():
        header_bytes += 8 + write_safetensors(os.path.join(directory, shard), tensors)
        for name, _, _ in tensors:
            weight_map[name] = shard
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": STORED_BYTES}, "weight_map": weight_map}, f)
    return header_bytes


def run(args, env_extra, timeout=60):
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(env_extra)
    return subprocess.run([MEMPLAN] + args, capture_output=True, text=True, env=env, timeout=timeout)


def weights_of(stdout):
    doc = json.loads(stdout)
    return doc["model"]["params"], next(c["bytes"] for c in doc["components"] if c["name"] == "weights")


class HubTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.root = os.path.join(self.dir, "hub")
        self.header_bytes = write_repo(os.path.join(self.root, "org", "tiny"))
        write_repo(os.path.join(self.root, "gated", "tiny"))
        # Isolated caches: nothing from the machine's own.
        self.env = {"HF_HOME": os.path.join(self.dir, "hf"), "MEMPLAN_CACHE_DIR": os.path.join(self.dir, "cache"),
                    "MEMPLAN_HUB_TIMEOUT": "3"}

    def tearDown(self):
        self.tmp.cleanup()

    def test_fetches_headers_only_then_works_offline(self):
        with Hub(self.root) as hub:
            env = dict(self.env, HF_ENDPOINT=f"http://127.0.0.1:{hub.port}")
            r = run(["estimate", "org/tiny", "-w", "weights", "--format", "json"], env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(weights_of(r.stdout), (PARAMS, WEIGHT_BYTES))
            served = json.loads(_get(f"http://127.0.0.1:{hub.port}/_stats"))["safetensors_bytes"]
            # Two Range requests per shard: the 8-byte length, then the header; no tensor data.
            self.assertEqual(served, self.header_bytes)
            table = run(["estimate", "org/tiny", "-w", "weights"], env)
            self.assertIn("its safetensors headers: BF16 x 16, F32 x 5", table.stdout)
            # import: the model file of the config, and the inventory of the headers.
            r = run(["import", "org/tiny"], env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("d_model: 64\n", r.stdout)
            r = run(["import", "safetensors", "org/tiny"], env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("106,816", r.stdout)
        # The server is gone: the second run reads memplan's cache, also with HF_HUB_OFFLINE.
        for extra in ({}, {"HF_HUB_OFFLINE": "1"}):
            r = run(["estimate", "org/tiny", "-w", "weights", "--format", "json"],
                    dict(self.env, HF_ENDPOINT="http://127.0.0.1:9", **extra))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(weights_of(r.stdout), (PARAMS, WEIGHT_BYTES))
            self.assertIn("memplan's Hub cache", json.loads(r.stdout)["model"]["origin"])

    def test_hugging_face_cache_is_read_first(self):
        repo = os.path.join(self.dir, "hf", "hub", "models--org--cached")
        write_repo(os.path.join(repo, "snapshots", COMMIT))
        os.makedirs(os.path.join(repo, "refs"))
        with open(os.path.join(repo, "refs", "main"), "w") as f:
            f.write(COMMIT)
        r = run(["estimate", "org/cached", "-w", "weights", "--format", "json"], dict(self.env, HF_HUB_OFFLINE="1"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(weights_of(r.stdout), (PARAMS, WEIGHT_BYTES))
        self.assertIn("Hugging Face cache", json.loads(r.stdout)["model"]["origin"])

    def test_local_sources(self):
        repo = os.path.join(self.root, "org", "tiny")
        for source in (repo, os.path.join(repo, "model.safetensors.index.json")):
            r = run(["estimate", source, "-w", "weights", "--format", "json"], self.env)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(weights_of(r.stdout), (PARAMS, WEIGHT_BYTES))
        # One shard alone: its own tensors, and a warning that they are not the config's.
        r = run(["estimate", os.path.join(repo, "model-00001-of-00002.safetensors"), "-w", "weights"], self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("warning: the checkpoint holds 53,376 parameter elements and the config.json's architecture "
                      "106,816", r.stdout)

    def test_refusals_exit_2_saying_what_to_do(self):
        with Hub(self.root) as hub:
            env = dict(self.env, HF_ENDPOINT=f"http://127.0.0.1:{hub.port}")
            cases = [
                ("gated/tiny", {}, "is gated or private (HTTP 401): accept the license on the model page"),
                ("org/missing", {}, "'org/missing' is not on the Hub (HTTP 404)"),
                ("slow/tiny", {}, "no answer within 3 s"),
                ("org/uncached", {"HF_HUB_OFFLINE": "1"}, "HF_HUB_OFFLINE is set and org/uncached is in neither"),
            ]
            for model, extra, says in cases:
                with self.subTest(model=model):
                    r = run(["estimate", model], dict(env, **extra))
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertEqual(r.stdout, "")
                    self.assertIn(says, r.stderr)
            r = run(["estimate", "gated/tiny", "-w", "weights", "--format", "json"], dict(env, HF_TOKEN="sesame"))
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(weights_of(r.stdout), (PARAMS, WEIGHT_BYTES))
        r = run(["estimate", "org/tiny"], dict(self.env, HF_ENDPOINT="http://127.0.0.1:9"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot reach the Hub", r.stderr)

    def test_hostile_header_is_refused(self):
        path = os.path.join(self.root, "org", "hostile")
        write_repo(path)
        shard = os.path.join(path, "model-00001-of-00002.safetensors")
        with open(shard, "r+b") as f:
            f.write(struct.pack("<Q", 1 << 40))
        with Hub(self.root) as hub:
            r = run(["estimate", "org/hostile"], dict(self.env, HF_ENDPOINT=f"http://127.0.0.1:{hub.port}"))
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("model-00001-of-00002.safetensors: header length 1,099,511,627,776 bytes", r.stderr)


def _get(url):
    import urllib.request
    with urllib.request.urlopen(url) as response:
        return response.read().decode()


if __name__ == "__main__":
    MEMPLAN = sys.argv.pop(1)
    unittest.main()
