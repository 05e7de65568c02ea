#!/usr/bin/env python3
"""Writes the small safetensors fixtures of tests/cli (run from this directory).

tiny-llama/: a 1-layer Llama (hidden 4, 2 query heads, 1 K/V head, MLP 8, vocab 8) as
transformers names its tensors, BF16 zeros, with the rotary inv_freq buffer older
transformers versions saved; its config.json; and the same tensors as a sharded checkpoint
(model-0000N-of-00002.safetensors + model.safetensors.index.json) in tiny-llama-sharded/.
bad/: hostile files the CLI must refuse. Standard library only; the output is committed.
"""
import json
import os
import struct

BITS = {"BF16": 16, "F32": 32}


def write(path, tensors, metadata=None, header_override=None):
    """tensors: [(name, dtype, shape)]; data is zeros laid out in the given order."""
    header, offset = {}, 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape in tensors:
        n = 1
        for d in shape:
            n *= d
        size = n * BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header_override if header_override is not None else header, separators=(",", ":"))
    text += " " * (-len(text) % 8)  # the format pads the header to 8 bytes
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text.encode() + bytes(offset))
    return offset


def tiny_llama():
    p = "model.layers.0."
    return [
        ("model.embed_tokens.weight", "BF16", [8, 4]),
        (p + "self_attn.q_proj.weight", "BF16", [4, 4]),
        (p + "self_attn.k_proj.weight", "BF16", [2, 4]),
        (p + "self_attn.v_proj.weight", "BF16", [2, 4]),
        (p + "self_attn.o_proj.weight", "BF16", [4, 4]),
        (p + "self_attn.rotary_emb.inv_freq", "F32", [1]),
        (p + "mlp.gate_proj.weight", "BF16", [8, 4]),
        (p + "mlp.up_proj.weight", "BF16", [8, 4]),
        (p + "mlp.down_proj.weight", "BF16", [4, 8]),
        (p + "input_layernorm.weight", "BF16", [4]),
        (p + "post_attention_layernorm.weight", "BF16", [4]),
        ("model.norm.weight", "BF16", [4]),
        ("lm_head.weight", "BF16", [8, 4]),
    ]


CONFIG = {
    "_name_or_path": "tiny-llama",
    "architectures": ["LlamaForCausalLM"],
    "hidden_act": "silu",
    "hidden_size": 4,
    "intermediate_size": 8,
    "max_position_embeddings": 16,
    "model_type": "llama",
    "num_attention_heads": 2,
    "num_hidden_layers": 1,
    "num_key_value_heads": 1,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 8,
}

for d in ("tiny-llama", "tiny-llama-sharded", "bad"):
    os.makedirs(d, exist_ok=True)
for d in ("tiny-llama", "tiny-llama-sharded"):
    with open(d + "/config.json", "w") as f:
        f.write(json.dumps(CONFIG, indent=2) + "\n")
write("tiny-llama/model.safetensors", tiny_llama(), {"format": "pt"})

tensors = tiny_llama()
shards = {"model-00001-of-00002.safetensors": tensors[:6], "model-00002-of-00002.safetensors": tensors[6:]}
total, weight_map = 0, {}
for shard, part in shards.items():
    total += write("tiny-llama-sharded/" + shard, part, {"format": "pt"})
    weight_map.update({name: shard for name, _, _ in part})
with open("tiny-llama-sharded/model.safetensors.index.json", "w") as f:
    f.write(json.dumps({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, indent=2) + "\n")

# The header length promises 1000 bytes; 10 follow.
with open("bad/truncated.safetensors", "wb") as f:
    f.write(struct.pack("<Q", 1000) + b'{"a":{"dty')
# b's data_offsets start inside a's.
write("bad/overlap.safetensors", [], header_override={
    "a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
    "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]},
})
with open("bad/overlap.safetensors", "ab") as f:
    f.write(bytes(12))


def raw(path, header_text, data_size, length=None):
    """A file whose header is `header_text` as given (hostile JSON included)."""
    body = header_text.encode() if isinstance(header_text, str) else header_text
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(body) if length is None else length) + body + bytes(data_size))


# The header length is 2^63: over the 100 MiB limit, refused before anything is allocated.
raw("bad/huge-header-length.safetensors", "{}", 0, length=1 << 63)
# a's data_offsets end past the 8-byte data area.
raw("bad/out-of-range.safetensors", '{"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}}', 8)
# A dtype the format does not define.
raw("bad/unknown-dtype.safetensors", '{"a":{"dtype":"F12","shape":[2],"data_offsets":[0,4]}}', 4)
# Two F32 elements need 8 bytes; the offsets hold 4.
raw("bad/shape-mismatch.safetensors", '{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}', 4)
# The same tensor twice (JSON parsers keep the last one silently).
raw("bad/duplicate-tensor.safetensors",
    '{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', 8)
# Shape dimensions whose product passes 2^64 elements.
raw("bad/huge-shape.safetensors",
    '{"a":{"dtype":"F32","shape":[4294967296,4294967296,2],"data_offsets":[0,8]}}', 8)
# The header is a JSON array, not an object of tensors.
raw("bad/not-an-object.safetensors", '[1,2,3]', 0)
# Nested 100 levels deep: refused before the parser recurses.
raw("bad/deep-nesting.safetensors", '{"a":' + "[" * 100 + "]" * 100 + "}", 0)
# A number beyond a double inside the header.
raw("bad/number-overflow.safetensors", '{"a":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}}', 4)
# Bytes that are not UTF-8 in a tensor name.
raw("bad/not-utf8.safetensors", b'{"\xff\xfe":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4)
# Nothing at all.
open("bad/empty.safetensors", "wb").close()
# Fewer than the 8 bytes of the header length.
with open("bad/too-short.safetensors", "wb") as f:
    f.write(b"\x10\x00\x00")
# An index that points a tensor outside its directory.
os.makedirs("bad/escaping-index", exist_ok=True)
with open("bad/escaping-index/model.safetensors.index.json", "w") as f:
    f.write(json.dumps({"weight_map": {"a": "../../tiny-llama/model.safetensors"}}, indent=2) + "\n")
