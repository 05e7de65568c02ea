#include "memplan/estimators/serving.hpp"

#include <gtest/gtest.h>

#include "layout_fixtures.hpp"

namespace memplan {
namespace serving_test {

using testing::expect_invalid;

// ------------------------------------------------------------------- vLLM arithmetic

TEST(Serving, KvBudgetIsWhatUtilizationLeaves) {
  // 80 GiB at 0.9: ceil(85,899,345,920 x 0.9) = 77,309,411,328; less 40e9 of weights and
  // activations = 37,309,411,328; blocks of 1,310,720 B: 28,464 (remainder 1,077,248).
  const ServingCapacity c = vllm_kv_capacity(Bytes(85899345920ULL), 0.9, Bytes(40000000000ULL), Bytes(1310720), 16,
                                             4096);
  EXPECT_EQ(c.requested.count(), 77309411328ULL);
  EXPECT_EQ(c.kv_budget.count(), 37309411328ULL);
  EXPECT_EQ(c.blocks, 28464u);
  EXPECT_EQ(c.tokens, 28464u * 16);
  EXPECT_EQ(c.full_sequences, 28464u * 16 / 4096);  // 111
  EXPECT_TRUE(c.holds_a_sequence());
  const ServingCapacity none = vllm_kv_capacity(Bytes(85899345920ULL), 0.5, Bytes(50000000000ULL), Bytes(1310720), 16,
                                                4096);
  EXPECT_EQ(none.blocks, 0u);
  EXPECT_EQ(none.shortfall.count(), 50000000000ULL - 42949672960ULL);
  EXPECT_FALSE(none.holds_a_sequence());
  expect_invalid([] { vllm_kv_capacity(Bytes(1), 0.0, Bytes(0), Bytes(1), 16, 1); }, "gpu_memory_utilization");
  expect_invalid([] { vllm_kv_capacity(Bytes(1), 1.5, Bytes(0), Bytes(1), 16, 1); }, "gpu_memory_utilization");
}

TEST(Serving, MambaLayersShareTheKvPoolAsVllmLogsIt) {
  // vLLM 0.19's start-up of ibm-granite/granite-4.0-h-1b on an RTX 3060 (a public log, code-index
  // id 62458215816): 4 attention layers of 4 KV heads x 128 at bf16, 2 x 4 x 128 x 2 = 2,048 B a
  // token; 36 Mamba-2 layers of 3,072 channels (48 heads of 64, 1 group, state 128, conv 4) at
  // bf16, 3 x (3,072 + 2 x 128) x 2 + 48 x 64 x 128 x 2 = 806,400 B a request.
  // It logs "Setting attention block size to 400 tokens": 16 x ceil(806,400 / (16 x 2,048)) = 400;
  // "Padding mamba page size by 1.59%": 400 x 2,048 = 819,200 B; "GPU KV cache size: 53,200 tokens"
  // and "Maximum concurrency for 4,096 tokens per request: 66.95x" for "Available KV cache memory:
  // 4.09 GiB". Groups of 4 layers: 1 of attention, 9 of Mamba; a block is 4 pages; 1,339 blocks
  // (4,387,635,200 B, which prints as 4.09 GiB) give (1,339 / 10) x 400 = 53,200 tokens and
  // 1,339 / (ceil(4,096 / 400) + 9) = 66.95 requests.
  const VllmLayerPages granite{4, 36, Bytes(2048), Bytes(806400)};
  const ServingCapacity c = vllm_state_space_capacity(Bytes(0), 0.6, Bytes(0), granite, 16, 4096,
                                                      Bytes(1339ULL * 819200 * 4));
  EXPECT_EQ(c.block_size, 400u);
  EXPECT_EQ(c.block_bytes.count(), 819200u * 4);
  EXPECT_EQ(c.blocks, 1339u);
  EXPECT_EQ(c.kv_groups, 10u);
  EXPECT_EQ(c.per_request_blocks, 20u);
  EXPECT_EQ(c.tokens, 53200u);
  EXPECT_NEAR(c.concurrency(), 66.95, 0.005);
  EXPECT_EQ(c.full_sequences, 66u);

  // vLLM 0.19's start-up of Qwen/Qwen3.5-9B on an L40S (code-index id 51781852921): 8 attention
  // layers of 4 KV heads x 256 at bf16 (4,096 B a token) and 24 linear-attention layers whose
  // state (conv 3 x 8,192 x 2 + 32 x 128 x 128 x 4 = 2,146,304 B) vLLM pages like a Mamba's.
  // Logged: block size 528, "GPU KV cache size: 165,792 tokens", concurrency 2.52x at 262,144;
  // groups of 8 (24 is not below 1.5 x 8): 1 + 3; 1,258 blocks of 8 pages of 2,162,688 B.
  const VllmLayerPages qwen{8, 24, Bytes(4096), Bytes(2146304)};
  const ServingCapacity q = vllm_state_space_capacity(Bytes(0), 0.9, Bytes(0), qwen, 16, 262144,
                                                      Bytes(1258ULL * 2162688 * 8));
  EXPECT_EQ(q.block_size, 528u);
  EXPECT_EQ(q.tokens, 165792u);
  EXPECT_NEAR(q.concurrency(), 2.52, 0.005);

  // Prefix caching's align mode keeps 2 blocks a request in each Mamba group. vLLM 0.20's
  // start-up of Qwen3.6-27B (code-index id 52002965523): 16 attention layers of 4 KV heads x 256
  // in fp8 (2,048 B a token), 48 DeltaNet layers of 3 x 10,240 x 2 + 48 x 128 x 128 x 4 =
  // 3,207,168 B; block 16 x ceil(3,207,168 / 32,768) = 1,568; 139 blocks of 16 pages; a request
  // ceil(32,768 / 1,568) + 3 x 2 = 27 blocks: 5.15x, as logged (one block a group would be 5.79x).
  VllmLayerPages aligned{16, 48, Bytes(2048), Bytes(3207168)};
  aligned.state_blocks = 2;
  const ServingCapacity a = vllm_state_space_capacity(Bytes(0), 0.8, Bytes(0), aligned, 16, 32768,
                                                      Bytes(139ULL * 1568 * 2048 * 16));
  EXPECT_EQ(a.block_size, 1568u);
  EXPECT_EQ(a.per_request_blocks, 27u);
  EXPECT_EQ(a.tokens, 53312u);
  EXPECT_NEAR(a.concurrency(), 5.15, 0.005);

  // Speculative decoding with the checkpoint's MTP layer (vLLM 0.20.0, Qwen3.6-27B-Text-NVFP4-MTP,
  // --speculative-config '{"method":"mtp","num_speculative_tokens":1}', fp8 KV, prefix caching,
  // code-index id 52000797369): the MTP layer is a 17th attention layer; a state keeps one more
  // convolution row: 4 x 10,240 x 2 + 48 x 128 x 128 x 4 = 3,227,648 B, so the block is
  // 16 x ceil(3,227,648 / 32,768) = 1,584 tokens; groups of 17 (48 is not below 1.5 x 17): one
  // of attention, ceil(48 / 17) = 3 of DeltaNet; 4.8 GiB / (17 x 1,584 x 2,048 B) = 93 blocks;
  // a request ceil(65,536 / 1,584) = 42 blocks and 2 + 1 in each Mamba group, 51 in all.
  // Logged: "GPU KV cache size: 36,432 tokens" (93 / 4 = 23 blocks of 1,584) and 1.82x.
  VllmLayerPages drafted{17, 48, Bytes(2048), Bytes(3227648)};
  drafted.state_blocks = 3;
  const ServingCapacity d = vllm_state_space_capacity(Bytes(0), 0.82, Bytes(0), drafted, 16, 65536,
                                                      Bytes(5153960755ULL));
  EXPECT_EQ(d.block_size, 1584u);
  EXPECT_EQ(d.blocks, 93u);
  EXPECT_EQ(d.group_layers, 17u);
  EXPECT_EQ(d.per_request_blocks, 51u);
  EXPECT_EQ(d.tokens, 36432u);
  EXPECT_NEAR(d.concurrency(), 1.82, 0.005);

  // Mamba layers alone: one group, a block a request, max_model_len tokens a block.
  const ServingCapacity m = vllm_state_space_capacity(Bytes(0), 0.9, Bytes(0), {0, 64, Bytes(0), Bytes(2158592)}, 16,
                                                      32768, Bytes(10ULL * 2158592 * 64 + 5));
  EXPECT_EQ(m.blocks, 10u);
  EXPECT_EQ(m.tokens, 10u * 32768);
  EXPECT_NEAR(m.concurrency(), 10.0, 1e-9);
  expect_invalid(
      [] {
        vllm_state_space_capacity(Bytes(1), 0.9, Bytes(0), {4, 0, Bytes(2048), Bytes(0)}, 16, 1);
      },
      "engine");
}

TEST(Serving, SlidingLayersHoldTheirWindowAsVllmLogsIt) {
  // vLLM 0.26.0's start-up of google/gemma-4-31B-it in bf16 (code-index id 63390294774):
  // max_model_len 16,384, max_num_batched_tokens 8,192, "Available KV cache memory: 182.37 GiB",
  // "GPU KV cache size: 217,116 tokens", "Maximum concurrency for 16,384 tokens per request:
  // 13.25x". 50 sliding layers of 16 KV heads x 256 (2 x 16 x 256 x 2 = 16,384 B a token, a page
  // of 16 tokens 262,144 B) and 10 full layers of 4 x 512 (8,192 B a token, so 32 tokens a page);
  // groups of 10 layers: 1 full, 5 sliding; a block is 10 pages, 2,621,440 B. 182.37 GiB holds
  // 74,698 blocks. A request: ceil(16,384 / 32) = 512 blocks in the full group and, in each
  // sliding group, ceil(min(1,023 + 2 x 8,192, 16,384) / 16) + 1 = 1,025 (async scheduling's two
  // batches in flight): 5,637; 74,698 / 5,637 = 13.25x; x 16,384 = 217,110 tokens (the log's
  // memory is rounded to 0.01 GiB).
  VllmAttentionPages gemma4{10, 50, Bytes(8192), Bytes(16384), 1024, 2 * 8192};
  const auto gib = [](double g) { return Bytes(static_cast<std::uint64_t>(g * 1073741824.0)); };
  const ServingCapacity g = vllm_sliding_capacity(Bytes(0), 0.92, Bytes(0), gemma4, 16, 16384, true, gib(182.37));
  EXPECT_EQ(g.block_bytes.count(), 10u * 262144);
  EXPECT_EQ(g.blocks, 74698u);
  EXPECT_EQ(g.kv_groups, 6u);
  EXPECT_EQ(g.per_request_blocks, 512u + 5 * 1025);
  EXPECT_NEAR(g.concurrency(), 13.25, 0.005);
  EXPECT_EQ(g.logged_tokens(), 217110u);

  // vLLM 0.20.2, nvidia/Gemma-4-26B-A4B-NVFP4 on an RTX 5090 with fp8 KV (code-index id
  // 56816929356): max_model_len 256,000, max_num_batched_tokens 16,384, "Available KV cache
  // memory: 4.58 GiB", "GPU KV cache size: 286,007 tokens", 1.12x. 25 sliding layers of 8 x 256
  // (4,096 B a token: a page 65,536 B) and 5 full layers of 2 x 512 (2,048 B: 32 tokens a page);
  // groups of 5: 1 full, 5 sliding; 4.58 GiB / 327,680 B = 15,007 blocks. A request: 8,000 +
  // 5 x (ceil(1,023 + 16,384) / 16) + 1) = 8,000 + 5 x 1,089 = 13,445: 1.116x, 285,741 tokens.
  // 0.11-0.20.0 would have logged (15,007 / 6) x 16 = 40,016.
  VllmAttentionPages gemma4_26b{5, 25, Bytes(2048), Bytes(4096), 1024, 16384};
  ServingCapacity m = vllm_sliding_capacity(Bytes(0), 0.85, Bytes(0), gemma4_26b, 16, 256000, true, gib(4.58));
  EXPECT_EQ(m.blocks, 15007u);
  EXPECT_EQ(m.per_request_blocks, 8000u + 5 * 1089);
  EXPECT_NEAR(m.concurrency(), 1.12, 0.005);
  EXPECT_EQ(m.logged_tokens(), 285741u);
  m.concurrency_tokens = false;
  EXPECT_EQ(m.logged_tokens(), 40016u);

  // vLLM 0.23.0, google/gemma-3-4b-it in bf16 on an MI300X (code-index id 56281686060):
  // max_model_len 8,192, "Available KV cache memory: 162.84 GiB", "GPU KV cache size: 1,217,591
  // tokens", 148.63x. 29 sliding and 5 full layers of 4 x 256 (4,096 B a token: pages of 65,536 B
  // alike); groups of 5: 1 full, 6 sliding (one padding layer); 162.84 GiB / 327,680 B = 533,594
  // blocks; a request 512 + 6 x (ceil(min(1,023 + 8,192, 8,192) / 16) + 1) = 3,590 blocks:
  // 148.63x, 1,217,605 tokens.
  VllmAttentionPages gemma3{5, 29, Bytes(4096), Bytes(4096), 1024, 8192};
  const ServingCapacity t = vllm_sliding_capacity(Bytes(0), 0.9, Bytes(0), gemma3, 16, 8192, true, gib(162.84));
  EXPECT_EQ(t.blocks, 533594u);
  EXPECT_EQ(t.kv_groups, 7u);
  EXPECT_EQ(t.per_request_blocks, 3590u);
  EXPECT_NEAR(t.concurrency(), 148.63, 0.005);
  EXPECT_EQ(t.logged_tokens(), 1217605u);
  expect_invalid(
      [] {
        vllm_sliding_capacity(Bytes(1), 0.9, Bytes(0), {4, 0, Bytes(2048), Bytes(0), 1024, 0}, 16, 1, true);
      },
      "engine");
}

}  // namespace serving_test
}  // namespace memplan
