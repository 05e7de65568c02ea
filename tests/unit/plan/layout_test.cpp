#include "memplan/plan/layout.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "hf_fixtures.hpp"
#include "memplan/core/error.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace layout_test {

using testing::llama2_7b;

// meta-llama/Llama-2-70b-hf config.json (as in parallelism_test.cpp).
ModelSpec llama2_70b() {
  ModelSpec s = family_defaults(Family::llama);
  s.name = "llama-2-70b";
  s.d_model = 8192;
  s.n_layers = 80;
  s.n_heads = 64;
  s.n_kv_heads = 8;
  s.d_head = 128;
  s.d_mlp = 28672;
  s.vocab_size = 32000;
  s.max_seq_len = 4096;
  return s;
}

// nvidia-smi reports an A100-SXM4-80GB as 81920 MiB (configs/gpus.yaml).
GpuSpec a100_80gb() {
  GpuSpec g;
  g.name = "a100-sxm4-80gb";
  g.memory = Bytes(81920ULL << 20);
  g.compute_capability = {8, 0};
  return g;
}

Workload bf16(WorkloadKind kind, std::uint64_t seq = 2048) {
  Workload w;
  w.kind = kind;
  w.seq_len = seq;
  w.weights.precision = precisions::bf16;
  return w;
}

std::uint64_t bytes_of(const Breakdown& b, const std::string& name) {
  const Item* item = b.find(name);
  EXPECT_NE(item, nullptr) << "no component " << name;
  return item == nullptr ? 0 : item->bytes.count();
}

template <typename F>
void expect_invalid(F&& f, const std::string& key) {
  try {
    f();
    ADD_FAILURE() << "expected Error(invalid_input, " << key << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_EQ(e.key(), key) << e.what();
  }
}

TEST(Layout, TensorParallelInferenceRunsEachRanksShard) {
  Workload w = bf16(WorkloadKind::inference);
  w.include_overhead = false;
  LayoutOptions o;
  o.parallel.tensor = 4;
  const LayoutEstimate l = estimate_layout(llama2_7b(), w, o);
  ASSERT_EQ(l.devices.size(), 1u);
  EXPECT_EQ(l.devices[0].count, 4u);
  const Breakdown& b = l.devices[0].breakdown;
  testing::expect_consistent(b);
  // Per rank: q, k, v, o 4096x1024 and gate, up, down 4096x2752 in each of 32 layers; 65
  // RMSNorm weights of 4096 (whole); token table and LM head 8000x4096. bf16.
  const std::uint64_t params = 32ULL * (4 * 4096 * 1024 + 3 * 4096 * 2752) + 65 * 4096 + 2 * 8000 * 4096;
  EXPECT_EQ(bytes_of(b, "weights"), 2 * params);
  // The KV cache of 8 of the 32 heads: a quarter of Llama-2-7b's 1 GiB at 2048 tokens.
  EXPECT_EQ(bytes_of(b, "kv_cache"), (1ULL << 30) / 4);
  EXPECT_FALSE(l.fits().has_value());  // no GPU named
}

// The dummy sampler run peaks in its top-k/top-p sort: 256 sequences x Qwen3-8B's 151,936
// logits x (2 B bf16 + 4 fp32 copy + 4 sorted values + 8 indices + 8 the sort's index input +
// 12 the radix sort's second keys and values) = 38 B an element; a 0.10 start-up's own
// breakdown measured 1.40 GiB (38.65 B) at these sizes (docs/accuracy.md).
TEST(Layout, VllmProfilesTheSamplersSort) {
  Workload w = bf16(WorkloadKind::inference);
  LayoutOptions o;
  o.vllm = ServingOptions{};
  o.vllm->max_num_batched_tokens = 1024;
  o.vllm->max_model_len = 1024;
  o.gpus = {a100_80gb()};
  o.vllm->version = {0, 10, 0};
  const LayoutEstimate l = estimate_layout(testing::hf_fixture("qwen3-8b"), w, o);
  const Item* peak = l.devices[0].breakdown.find("activation_peak");
  ASSERT_NE(peak, nullptr);
  ASSERT_EQ(peak->detail.size(), 1U);
  EXPECT_EQ(peak->detail[0].name, "sampler");
  EXPECT_EQ(peak->bytes.count(), 256ULL * 151936 * (2 + 4 + 4 + 8 + 8 + 12));
  // From vLLM 0.17 top-k/top-p filter in place: the logits, their fp32 copy, the probabilities
  // and random_sample's exponential draws, 2 + 4 + 4 + 4 B (topk_topp_sampler.py, sampler.py).
  o.vllm->version = {0, 19, 0};
  const LayoutEstimate later = estimate_layout(testing::hf_fixture("qwen3-8b"), w, o);
  const Item* in_place = later.devices[0].breakdown.find("activation_peak");
  ASSERT_NE(in_place, nullptr);
  EXPECT_EQ(in_place->detail[0].name, "sampler");
  EXPECT_EQ(in_place->bytes.count(), 256ULL * 151936 * (2 + 4 + 4 + 4));
}

// A quantised checkpoint keeps its stored types on every rank: Qwen3-30B-A3B-FP8, whose
// per-layer tensors HfQuantization.Qwen3MoeFp8RoutersKept writes out. Tensor parallelism
// halves every split tensor (fp8 weights and their bf16 128 x 128 block scales alike) and
// keeps the norms and the bf16 router whole; vLLM's rotary table, 40,960 x 128 x 2 B, on each.
TEST(Layout, VllmShardsAQuantisedCheckpointAsStored) {
  const std::uint64_t q = 4096ULL * 2048 + 32 * 16 * 2, kv = 512ULL * 2048 + 4 * 16 * 2;
  const std::uint64_t o_proj = 2048ULL * 4096 + 16 * 32 * 2;
  const std::uint64_t expert = 3 * (768ULL * 2048 + 6 * 16 * 2);
  const std::uint64_t router = 128ULL * 2048 * 2, norms = 2 * 2048 * 2 + 2 * 128 * 2;
  const std::uint64_t split = q + 2 * kv + o_proj + 128 * expert, table = 151936ULL * 2048 * 2;
  const std::uint64_t cos_sin = 40960ULL * 128 * 2;
  const ModelSpec s = testing::hf_fixture("quantized/qwen3-30b-a3b-fp8");
  for (const std::uint64_t t : {1ULL, 2ULL}) {
    SCOPED_TRACE(t);
    LayoutOptions o;
    o.parallel.tensor = t;
    o.vllm = ServingOptions{};
    o.gpus = {a100_80gb()};
    const LayoutEstimate l = estimate_layout(s, bf16(WorkloadKind::inference), o);
    EXPECT_EQ(bytes_of(l.devices[0].breakdown, "weights"),
              48 * (split / t + router + norms) + 2 * table / t + 2048 * 2 + cos_sin);
  }
}

// pipeline_parallel_size: vLLM's get_pp_indices gives each stage n / p layers and one more to
// the stages before the last (DeepSeek-V2-Lite's 27 over 2: 14 and 13; Llama-2-7B's 32 over 3:
// 11, 11, 10). Each stage keeps its layers' latent KV blocks, 16 tokens x (512 + 64) x 2 B a
// layer; the engine takes the fewest blocks any stage has room for, and every stage allocates
// that many. The sampler's sort, 256 x 102,400 x 38 B, runs on the last stage only.
TEST(Layout, VllmSplitsTheLayersOverPipelineStages) {
  LayoutOptions o;
  o.parallel.tensor = 2;
  o.parallel.pipeline = 2;
  o.vllm = ServingOptions{};
  o.vllm->max_model_len = 1024;
  o.vllm->version = {0, 10, 0};  // the sampler's sort, 38 B a logit
  o.gpus = {a100_80gb()};
  const LayoutEstimate l = estimate_layout(testing::hf_fixture("deepseek-v2-lite"), bf16(WorkloadKind::inference), o);
  ASSERT_EQ(l.devices.size(), 2U);
  EXPECT_EQ(l.devices[0].role, "stage 0 (layers 0-13)");
  EXPECT_EQ(l.devices[1].role, "stage 1 (layers 14-26)");
  EXPECT_EQ(l.world_size, 4U);
  ASSERT_TRUE(l.serving.has_value());
  const std::uint64_t blocks = l.serving->blocks;
  EXPECT_EQ(l.serving->tokens, blocks * 16);
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "kv_cache"), blocks * 14 * 16 * 576 * 2);
  EXPECT_EQ(bytes_of(l.devices[1].breakdown, "kv_cache"), blocks * 13 * 16 * 576 * 2);
  EXPECT_EQ(bytes_of(l.devices[1].breakdown, "activation_peak"), 256ULL * 102400 * 38);
  EXPECT_LT(bytes_of(l.devices[0].breakdown, "activation_peak"), 256ULL * 102400 * 38);

  o.parallel.tensor = 1;
  o.parallel.pipeline = 3;
  o.vllm->max_model_len = 4096;
  const LayoutEstimate llama = estimate_layout(testing::hf_fixture("llama-2-7b"), bf16(WorkloadKind::inference), o);
  ASSERT_EQ(llama.devices.size(), 3U);
  EXPECT_EQ(llama.devices[0].role, "stage 0 (layers 0-10)");
  EXPECT_EQ(llama.devices[1].role, "stage 1 (layers 11-21)");
  EXPECT_EQ(llama.devices[2].role, "stage 2 (layers 22-31)");
}

// enable_lora with 2 slots of rank 16 on Llama-3.1-8B (bf16, one GPU): per layer q, o: A 16 x
// 4096 and B 4096 x 16; k, v: A 16 x 4096, B 1024 x 16; gate, up: A 16 x 4096, B 14336 x 16;
// down: A 16 x 14336, B 4096 x 16. The embedding: A (128,256 + 256 added tokens) x 16, B 4096 x
// 16, the added tokens' 256 x 4096; the logits: A 16 x 4096, B 128,256 (a multiple of 256) x
// 16, 256 x 4096; the token table and the untied head 256 rows more each. vLLM 0.8.2 logged
// "Model loading took 15.1749 GB" for this (docs/accuracy.md): 14.99 GiB without LoRA.
TEST(Layout, VllmKeepsLoraBuffersForEverySlot) {
  LayoutOptions o;
  o.vllm = ServingOptions{};
  o.vllm->max_loras = 2;
  o.vllm->max_lora_rank = 16;
  o.gpus = {a100_80gb()};
  const std::uint64_t layer = 2 * 16ULL * ((4096 + 4096) * 2 + (4096 + 1024) * 2 + (4096 + 14336) * 2 + (14336 + 4096));
  const std::uint64_t embedding = 2 * 16ULL * (128256 + 256) + 2 * 16ULL * 4096 + 2 * 256ULL * 4096;
  const std::uint64_t logits = 2 * 16ULL * 4096 + 2 * 16ULL * 128256 + 2 * 256ULL * 4096;
  const std::uint64_t lora = (32 * layer + embedding + logits + 2 * 256 * 4096) * 2;
  EXPECT_EQ(lora, 197'312'512U);
  const ModelSpec s = testing::hf_fixture("llama-3.1-8b");
  const LayoutEstimate with = estimate_layout(s, bf16(WorkloadKind::inference), o);
  o.vllm->max_loras = 0;
  const LayoutEstimate without = estimate_layout(s, bf16(WorkloadKind::inference), o);
  EXPECT_EQ(bytes_of(with.devices[0].breakdown, "weights"), bytes_of(without.devices[0].breakdown, "weights") + lora);
}

TEST(Layout, VllmFillsWhatUtilizationLeavesWithKvBlocks) {
  Workload w = bf16(WorkloadKind::inference);
  LayoutOptions o;
  o.parallel.tensor = 4;
  o.vllm = ServingOptions{};
  o.gpus = {a100_80gb()};
  const LayoutEstimate l = estimate_layout(llama2_70b(), w, o);
  ASSERT_TRUE(l.serving.has_value());
  const ServingCapacity& c = *l.serving;
  const Breakdown& b = l.devices[0].breakdown;
  testing::expect_consistent(b);
  // Per rank: q 8192x2048, k and v 8192x256, o 2048x8192, gate/up/down 8192x7168 per layer
  // x 80; 161 norms of 8192; token table and LM head 8000x8192; bf16.
  const std::uint64_t params = 80ULL * (2 * 8192 * 2048 + 2 * 8192 * 256 + 3 * 8192 * 7168) + 161 * 8192 +
                               2 * 8000 * 8192;
  // vLLM's rotary table on every rank: 4,096 positions x 128 x 2 B of cos and sin.
  const std::uint64_t cos_sin = 4096ULL * 128 * 2;
  EXPECT_EQ(bytes_of(b, "weights"), 2 * params + cos_sin);
  EXPECT_EQ(2 * params, 34490302464ULL);
  // One block: 16 tokens x keys and values x 80 layers x 2 KV heads x 128 x 2 B.
  EXPECT_EQ(c.block_bytes.count(), 16ULL * 2 * 80 * 2 * 128 * 2);
  // vLLM: non-KV = weights + the profile's activation peak + the cuBLAS workspace (8.125 MiB on an A100).
  const std::uint64_t cublas = (8ULL << 20) + (128ULL << 10);
  EXPECT_EQ(c.non_kv.count(), 2 * params + cos_sin + bytes_of(b, "activation_peak") + cublas);
  EXPECT_EQ(c.requested.count(), 77309411328ULL);  // ceil(0.9 x 85,899,345,920)
  EXPECT_EQ(c.blocks, (77309411328ULL - c.non_kv.count()) / c.block_bytes.count());
  EXPECT_EQ(bytes_of(b, "kv_cache"), c.blocks * c.block_bytes.count());
  EXPECT_EQ(c.max_model_len, 4096u);
  EXPECT_TRUE(c.holds_a_sequence());
  EXPECT_EQ(l.fits(), std::optional<bool>(true));

  // On one A100 the bf16 weights alone exceed 0.9 x 80 GiB: no KV cache, vLLM would not start.
  o.parallel.tensor = 1;
  const LayoutEstimate one = estimate_layout(llama2_70b(), w, o);
  EXPECT_EQ(one.serving->blocks, 0u);
  EXPECT_GT(one.serving->shortfall.count(), 0u);
  EXPECT_EQ(one.fits(), std::optional<bool>(false));
}

TEST(Layout, DeviceMapPlacesLlama70bOverThreeA100sWithEachGpusRuntime) {
  Workload w = bf16(WorkloadKind::extraction);
  LayoutOptions o;
  o.device_map = PlacementPolicy::balanced;
  o.gpus = {a100_80gb(), a100_80gb(), a100_80gb()};
  const LayoutEstimate l = estimate_layout(llama2_70b(), w, o);
  ASSERT_EQ(l.devices.size(), 3u);
  for (const DeviceMemory& d : l.devices) testing::expect_consistent(d.breakdown);
  EXPECT_EQ(l.devices[0].holds, "token_embedding, layers 0-25");
  EXPECT_EQ(l.devices[1].holds, "layers 26-53");
  EXPECT_EQ(l.devices[2].holds, "layers 54-79, final_norm, lm_head");
  // Weights: the token table (32000x8192) and 26 blocks of 855,654,400 params, bf16.
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "weights"), 2 * (262144000ULL + 26 * 855654400ULL));
  // KV cache of the layers each GPU runs (inference): per layer 2 x 8 heads x 128 x 2048
  // tokens x 2 B. Extraction keeps none (TransformerLens's run_with_cache).
  const LayoutEstimate forward = estimate_layout(llama2_70b(), bf16(WorkloadKind::inference), o);
  EXPECT_EQ(bytes_of(forward.devices[0].breakdown, "kv_cache"), 26 * 8388608ULL);
  EXPECT_EQ(bytes_of(forward.devices[1].breakdown, "kv_cache"), 28 * 8388608ULL);
  // The cached hooks, split by the GPU whose layers produce them, add up to the single-GPU cache.
  const Breakdown whole = estimate_workload(llama2_70b(), w);
  std::uint64_t hooks = 0;
  for (const DeviceMemory& d : l.devices) hooks += bytes_of(d.breakdown, "activations");
  EXPECT_EQ(hooks, bytes_of(whole, "activations"));
  // The logits are computed on the GPU with the LM head: its working set is the single-GPU one.
  EXPECT_EQ(bytes_of(l.devices[2].breakdown, "forward_workspace"), bytes_of(whole, "forward_workspace"));
  EXPECT_TRUE(l.offloaded.empty());
}

TEST(Layout, DeviceMapOffloadsWhatDoesNotFit) {
  Workload w = bf16(WorkloadKind::inference);
  LayoutOptions o;
  o.device_map = PlacementPolicy::balanced;
  GpuSpec small = a100_80gb();
  small.name = "rtx-4090";
  small.memory = Bytes(24564ULL << 20);
  o.gpus = {small, small};
  const LayoutEstimate l = estimate_layout(llama2_70b(), w, o);
  EXPECT_FALSE(l.offloaded.empty());
  EXPECT_EQ(l.offloaded.back(), "lm_head (cpu)");
  EXPECT_EQ(l.fits(), std::optional<bool>(false));
  EXPECT_GT(l.devices[0].breakdown.host_total().count(), 0u);  // offloaded weights, streamed through GPU 0
}

TEST(Layout, TrainingLayoutsAreCheckedAgainstTheGpu) {
  Workload w = bf16(WorkloadKind::training, 4096);
  LayoutOptions o;
  o.parallel.tensor = 8;
  o.parallel.pipeline = 4;
  o.parallel.data = 2;
  o.parallel.sharding = Sharding::zero1;
  o.gpus = {a100_80gb()};
  const LayoutEstimate l = estimate_layout(llama2_70b(), w, o);
  ASSERT_EQ(l.devices.size(), 4u);
  for (const DeviceMemory& d : l.devices) {
    EXPECT_EQ(d.gpu, "a100-sxm4-80gb");
    EXPECT_TRUE(d.capacity.has_value());
  }
  EXPECT_TRUE(l.fits().has_value());
}

TEST(Layout, LayoutsThatDoNotApplyAreTypedErrors) {
  LayoutOptions map;
  map.device_map = PlacementPolicy::balanced;
  map.gpus = {a100_80gb()};
  expect_invalid([&] { estimate_layout(llama2_7b(), bf16(WorkloadKind::training), map); }, "device_map");
  map.parallel.tensor = 2;
  expect_invalid([&] { estimate_layout(llama2_7b(), bf16(WorkloadKind::inference), map); }, "device_map");

  LayoutOptions pp;
  pp.parallel.pipeline = 2;
  expect_invalid([&] { estimate_layout(llama2_7b(), bf16(WorkloadKind::inference), pp); }, "workload");

  LayoutOptions vllm;
  vllm.vllm = ServingOptions{};
  expect_invalid([&] { estimate_layout(llama2_7b(), bf16(WorkloadKind::inference), vllm); }, "gpu");
  vllm.gpus = {a100_80gb()};
  expect_invalid([&] { estimate_layout(llama2_7b(), bf16(WorkloadKind::training), vllm); }, "engine");
  vllm.vllm->max_model_len = 8192;  // Llama-2's context is 4096
  expect_invalid([&] { estimate_layout(llama2_7b(), bf16(WorkloadKind::inference), vllm); }, "max_model_len");

  LayoutOptions two;
  two.gpus = {a100_80gb(), a100_80gb()};
  expect_invalid([&] { estimate_layout(llama2_7b(), bf16(WorkloadKind::inference), two); }, "gpus");

  LayoutOptions sae;
  sae.parallel.tensor = 2;
  expect_invalid([&] { estimate_layout(llama2_7b(), bf16(WorkloadKind::sae), sae); }, "workload");
}

}  // namespace layout_test
}  // namespace memplan
