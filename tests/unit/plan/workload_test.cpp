#include "memplan/plan/workload.hpp"

#include <algorithm>

#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace workload_test {

using testing::llama2_7b;

using testing::gpt2;

Workload bare(WorkloadKind kind, std::uint64_t seq, const char* precision) {
  Workload w;
  w.kind = kind;
  w.seq_len = seq;
  w.weights.precision = parse_precision(precision);
  w.include_overhead = false;
  return w;
}

const Item& component(const Breakdown& b, const std::string& name) {
  const Item* item = b.find(name);
  if (item == nullptr) throw std::runtime_error("no component " + name);
  return *item;
}

Breakdown checked(const ModelSpec& s, const Workload& w) {
  Breakdown b = estimate_workload(s, w);
  testing::expect_consistent(b);
  return b;
}

constexpr std::uint64_t kLlamaWeightsBf16 = 13476831232ULL;  // 6,738,415,616 x 2

TEST(Workload, InferencePeaksInTheMlp) {
  // Llama-2-7b, 1 x 2048 tokens, bf16, SDPA. The MLP phase: block input 2 x 2048 x 4096 x 2
  // = 33,554,432 + 3 x 2048 x 11008 x 2 = 135,266,304 -> 168,820,736, above the logits
  // phase (final hidden 2048 x 4096 x 2 = 16,777,216 + logits 2048 x 32000 x 2 =
  // 131,072,000 -> 147,849,216: no fp32 copy, as transformers >= 4.45 runs inference).
  const Breakdown b = checked(llama2_7b(), bare(WorkloadKind::inference, 2048, "bf16"));
  EXPECT_EQ(component(b, "weights").bytes.count(), kLlamaWeightsBf16);
  EXPECT_EQ(component(b, "kv_cache").bytes.count(), 1073741824ULL);
  EXPECT_EQ(component(b, "forward_workspace").bytes.count(), 168820736ULL);
  EXPECT_EQ(b.total().count(), kLlamaWeightsBf16 + 1073741824ULL + 168820736ULL);
}

TEST(Workload, FourBitInferenceDequantisesTheWeightItMultiplies) {
  // bitsandbytes' 4-bit matmul dequantises the weight whole before F.linear (bitsandbytes
  // backends/cuda/ops.py, _dequant_linear_fallback). Llama-2-7b nf4, fp16 activations, 2048
  // tokens: the MLP phase of InferencePeaksInTheMlp (168,820,736) plus the largest MLP weight,
  // 11008 x 4096 x 2 = 90,177,536 -> 258,998,272.
  Workload w = bare(WorkloadKind::inference, 2048, "nf4");
  const Breakdown b = checked(llama2_7b(), w);
  const Item& workspace = component(b, "forward_workspace");
  EXPECT_EQ(workspace.bytes.count(), 258998272ULL);
  const auto row = std::find_if(workspace.detail.begin(), workspace.detail.end(),
                                [](const Item& r) { return r.name == "dequantized_weight"; });
  ASSERT_NE(row, workspace.detail.end());
  EXPECT_EQ(row->bytes.count(), 90177536ULL);
  // GPTQ's int4 kernels multiply the packed weight: no copy.
  EXPECT_EQ(
      component(checked(llama2_7b(), bare(WorkloadKind::inference, 2048, "int4")), "forward_workspace").bytes.count(),
      168820736ULL);

  // 4 rows: bitsandbytes 0.50's own kernel (no copy): the MLP phase 2 x 4 x 4096 x 2 = 65,536
  // + 3 x 4 x 11008 x 2 = 264,192 -> 329,728 (the logits: 32,768 + 256,000 = 288,768).
  w.seq_len = 4;
  EXPECT_EQ(component(checked(llama2_7b(), w), "forward_workspace").bytes.count(), 329728ULL);
  // Before 0.50 only a single row went to gemv_4bit: 329,728 + 90,177,536.
  w.weights.bitsandbytes = parse_bitsandbytes_version("0.49.2");
  EXPECT_EQ(component(checked(llama2_7b(), w), "forward_workspace").bytes.count(), 90507264ULL);
  w.seq_len = 1;  // 1 row: 2 x 4096 x 2 + 3 x 11008 x 2 = 82,432 (logits 8,192 + 64,000)
  EXPECT_EQ(component(checked(llama2_7b(), w), "forward_workspace").bytes.count(), 82432ULL);
}

TEST(Workload, Fp32LogitsCopyForOlderTransformers) {
  // logits_fp32 adds the copy 2048 x 32000 x 4 = 262,144,000: 147,849,216 + 262,144,000
  // = 409,993,216, now above the MLP phase.
  Workload w = bare(WorkloadKind::inference, 2048, "bf16");
  w.logits_fp32 = true;
  EXPECT_EQ(component(checked(llama2_7b(), w), "forward_workspace").bytes.count(), 409993216ULL);
  // In fp32 the upcast is the same tensor: gpt2 at 1024 keeps 1024 x 768 x 4 = 3,145,728
  // + 1024 x 50257 x 4 = 205,852,672 -> 208,998,400 either way.
  Workload fp32 = bare(WorkloadKind::inference, 1024, "fp32");
  fp32.logits_fp32 = true;
  EXPECT_EQ(component(checked(gpt2(), fp32), "forward_workspace").bytes.count(), 208998400ULL);
}

TEST(Workload, EagerAttentionMovesThePeakIntoTheBlock) {
  // Eager at 2048: scores 32 x 2048^2 x 2 = 268,435,456, fp32 probabilities 536,870,912 and
  // their bf16 cast 268,435,456, output 16,777,216, plus block input 33,554,432, q/k/v
  // 50,331,648 and o_proj 16,777,216. Measured on an H100 and an H200, this forward peaked
  // 0.243 GiB above the estimate without the cast (docs/accuracy.md).
  Workload w = bare(WorkloadKind::inference, 2048, "bf16");
  w.attention = AttentionVariant::eager;
  const Breakdown b = checked(llama2_7b(), w);
  EXPECT_EQ(component(b, "forward_workspace").bytes.count(),
            33554432ULL + 50331648ULL + 268435456ULL + 536870912ULL + 268435456ULL + 16777216ULL + 16777216ULL);
}

TEST(Workload, GenerationTakesTheLargerOfPrefillAndDecode) {
  // Prefill: KV for 2048 tokens 1,073,741,824 + the MLP phase 168,820,736 = 1,242,562,560.
  // Last decode step: KV for 2304 tokens 1,207,959,552 + one token's MLP phase
  // (2 x 8,192 + 3 x 11,008 x 2 = 82,432) = 1,208,041,984. Prefill binds.
  Workload w = bare(WorkloadKind::generation, 2048, "bf16");
  w.new_tokens = 256;
  const Breakdown b = checked(llama2_7b(), w);
  EXPECT_EQ(b.total().count(), kLlamaWeightsBf16 + 1242562560ULL);
  // With 1024 new tokens the decode step binds: KV for 3072 tokens = 1,610,612,736.
  w.new_tokens = 1024;
  EXPECT_EQ(component(checked(llama2_7b(), w), "kv_cache").bytes.count(), 1610612736ULL);
}

TEST(Workload, SelectiveExtractionOfGpt2) {
  // fp32: weights 124,439,808 x 4 = 497,759,232; no KV cache (TransformerLens's
  // run_with_cache keeps none); three resid_post hooks 3 x 1024 x 768 x 4 = 9,437,184; logits
  // phase 1024 x 768 x 4 + 1024 x 50257 x 4 = 208,998,400.
  Workload w = bare(WorkloadKind::extraction, 1024, "fp32");
  w.cache.filter = {"blocks.0.hook_resid_post", "blocks.5.hook_resid_post", "blocks.11.hook_resid_post"};
  const Breakdown b = checked(gpt2(), w);
  EXPECT_EQ(component(b, "activations").bytes.count(), 9437184ULL);
  EXPECT_EQ(b.total().count(), 497759232ULL + 9437184ULL + 208998400ULL);
  EXPECT_EQ(b.find("kv_cache"), nullptr);
  ASSERT_EQ(b.alternatives.size(), 1U);  // the full cache beside it
  EXPECT_GT(b.alternatives.front().item.bytes, component(b, "activations").bytes);
}

TEST(Workload, StreamingKeepsTheWholeKvCacheButOneChunksHooks) {
  Workload w = bare(WorkloadKind::streaming_extraction, 8192, "fp16");
  w.streaming_chunk = 512;
  w.cache.filter = {"blocks.*.hook_resid_post"};
  const Breakdown b = checked(llama2_7b(), w);
  EXPECT_EQ(component(b, "kv_cache").bytes.count(), 4ULL << 30);                 // 8192 tokens: 4 GiB
  EXPECT_EQ(component(b, "activations").bytes.count(), 32ULL * 512 * 4096 * 2);  // one chunk's 32 hooks
  EXPECT_EQ(b.host_total().count(), 32ULL * 8192 * 4096 * 2);                    // all chunks, collected on the host
}

TEST(Workload, OverheadIsItsOwnComponent) {
  Workload w = bare(WorkloadKind::inference, 2048, "bf16");
  w.include_overhead = true;
  const Breakdown b = checked(llama2_7b(), w);
  const Item& overhead = component(b, "overhead");
  EXPECT_EQ(overhead.detail.front().name, "cuda_context");
  EXPECT_LT(*overhead.low, overhead.bytes);
  EXPECT_GT(*overhead.high, overhead.bytes);
  // allocated: the tensors; reserved adds the allocator's rounding and fragmentation rows.
  EXPECT_EQ(b.allocated().count(), kLlamaWeightsBf16 + 1073741824ULL + 168820736ULL);
  EXPECT_EQ(b.reserved().count(),
            b.allocated().count() + overhead.detail[2].bytes.count() + overhead.detail[3].bytes.count());
  EXPECT_EQ(b.total().count(),
            b.reserved().count() + overhead.detail[0].bytes.count() + overhead.detail[1].bytes.count());
}

TEST(WorkloadBytes, HandDerivedFiguresWithoutTheBreakdown) {
  // The figures of the tests above, from the totals-only path.
  EXPECT_EQ(estimate_workload_bytes(llama2_7b(), bare(WorkloadKind::weights, 2048, "bf16")).total.count(),
            kLlamaWeightsBf16);
  const WorkloadBytes inference = estimate_workload_bytes(llama2_7b(), bare(WorkloadKind::inference, 2048, "bf16"));
  EXPECT_EQ(inference.total.count(), kLlamaWeightsBf16 + 1073741824ULL + 168820736ULL);
  EXPECT_EQ(inference.allocated, inference.total);
  EXPECT_EQ(inference.reserved, inference.total);
  Workload eager = bare(WorkloadKind::inference, 2048, "bf16");
  eager.attention = AttentionVariant::eager;
  EXPECT_EQ(estimate_workload_bytes(llama2_7b(), eager).total.count(), kLlamaWeightsBf16 + 1073741824ULL + 33554432ULL +
                                                                           50331648ULL + 268435456ULL + 536870912ULL +
                                                                           268435456ULL + 16777216ULL + 16777216ULL);
  Workload generation = bare(WorkloadKind::generation, 2048, "bf16");
  generation.new_tokens = 256;
  EXPECT_EQ(estimate_workload_bytes(llama2_7b(), generation).total.count(), kLlamaWeightsBf16 + 1242562560ULL);
  // 1024 new tokens: the last decode step binds with KV for 3072 tokens, 1,610,612,736, and
  // one token's MLP phase, 82,432 (its attention phase is 57,472, its logits 72,192).
  generation.new_tokens = 1024;
  EXPECT_EQ(estimate_workload_bytes(llama2_7b(), generation).total.count(),
            kLlamaWeightsBf16 + 1610612736ULL + 82432ULL);
}

TEST(WorkloadBytes, OverheadRowsByHand) {
  // Llama-2-7b inference, bf16, 2048 tokens, default overhead before Hopper:
  //   cuda_context 512 MiB = 536,870,912; cublas 2 x 4 MiB + 8 x 16 KiB = 8,519,680;
  //   fragmentation: the caching allocator replaying two layers and the logits. Layer 1
  //   takes a segment for each tensor: the input and normed input (16 MiB each); q, k, v,
  //   SDPA's output and o_proj's output (16 MiB each) and SDPA's 256 KiB log-sum-exp (a 2 MiB
  //   small segment); the MLP's 129 MiB (135,266,304 B, a 130 MiB segment, its 1 MiB tail
  //   not split). Layer 2 reuses them all, and the logits (16 MiB hidden, 131,072,000 B of
  //   logits) fit a 16 MiB block and the 130 MiB one. Reserved: 7 x 16 + 2 + 130 = 244 MiB
  //   = 255,852,544 B, less the 168,820,736 B alive in the MLP phase = 87,031,808;
  //   allocator rounding: every large tensor is a whole number of 2 MiB (32 MiB q/k/v/o,
  //   86 MiB MLP matrices, 250 MiB embedding and head, 16 MiB KV layers); the 65 RMSNorm
  //   weights of 8,192 B share the small pool, 532,480 B rounded up to one 2 MiB segment:
  //   2,097,152 - 532,480 = 1,564,672.
  Workload w = bare(WorkloadKind::inference, 2048, "bf16");
  w.include_overhead = true;
  const WorkloadBytes b = estimate_workload_bytes(llama2_7b(), w);
  const std::uint64_t allocated = kLlamaWeightsBf16 + 1073741824ULL + 168820736ULL;
  EXPECT_EQ(b.allocated.count(), allocated);
  EXPECT_EQ(b.reserved.count(), allocated + 1564672ULL + 87031808ULL);
  EXPECT_EQ(b.total.count(), allocated + 1564672ULL + 87031808ULL + 536870912ULL + 8519680ULL);
  // --fragmentation 0.1 in place of the replay: 10% of 168,820,736 = 16,882,073 (rounded down).
  w.overhead.fragmentation_given = true;
  EXPECT_EQ(estimate_workload_bytes(llama2_7b(), w).reserved.count(), allocated + 1564672ULL + 16882073ULL);
}

TEST(WorkloadBytes, AgreesWithTheBreakdownAcrossModelsAndKnobs) {
  // The contract of the totals-only path: the breakdown's three figures, whatever the model.
  ModelSpec moe = llama2_7b();  // a Mixtral-like MoE with a sliding window, to reach every branch
  moe.name = "moe";
  moe.experts = 8;
  moe.experts_per_token = 2;
  moe.sliding_window = 512;
  for (const ModelSpec& model : {llama2_7b(), gpt2(), moe}) {
    for (const WorkloadKind kind : {WorkloadKind::weights, WorkloadKind::inference, WorkloadKind::generation}) {
      for (const char* precision : {"fp32", "bf16", "int4-g128", "fp8"}) {
        for (const AttentionVariant attention :
             {AttentionVariant::sdpa, AttentionVariant::eager, AttentionVariant::chunked}) {
          for (const std::uint64_t seq : {1ULL, 333ULL, 1000ULL}) {
            for (const bool overhead : {false, true}) {
              Workload w = bare(kind, seq, precision);
              w.batch = 3;
              w.attention = attention;
              w.include_overhead = overhead;
              w.kv_page_tokens = seq == 333 ? 16 : 0;
              w.logits_fp32 = seq == 1;
              if (kind == WorkloadKind::generation) w.new_tokens = seq == 1 ? 600 : 7;  // within gpt2's 1,024 positions
              const Breakdown b = estimate_workload(model, w);
              const WorkloadBytes fast = estimate_workload_bytes(model, w);
              const std::string where = model.name + " " + to_string(kind) + " " + precision + " " +
                                        to_string(attention) + " seq " + std::to_string(seq);
              EXPECT_EQ(fast.total, b.total()) << where;
              EXPECT_EQ(fast.allocated, b.allocated()) << where;
              EXPECT_EQ(fast.reserved, b.reserved()) << where;
            }
          }
        }
      }
    }
  }
}

TEST(Workload, MoreBatchOrTokensNeverCostLess) {
  for (WorkloadKind kind : {WorkloadKind::inference, WorkloadKind::extraction, WorkloadKind::generation}) {
    Workload w = bare(kind, 128, "bf16");
    if (kind == WorkloadKind::generation) w.new_tokens = 16;
    Bytes previous;
    for (std::uint64_t seq : {128U, 256U, 1024U}) {
      for (std::uint64_t batch : {1U, 2U}) {
        w.seq_len = seq;
        w.batch = batch;
        const Bytes now = checked(llama2_7b(), w).total();
        EXPECT_GE(now, previous) << to_string(kind) << " seq " << seq << " batch " << batch;
        previous = now;
      }
    }
  }
}

TEST(Workload, InconsistentKnobsNameTheirKey) {
  Workload w = bare(WorkloadKind::inference, 4096, "bf16");
  try {
    checked(gpt2(), w);  // learned positions stop at 1024
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "seq_len");
  }
  w = bare(WorkloadKind::inference, 16, "bf16");
  w.new_tokens = 4;
  EXPECT_THROW(checked(gpt2(), w), Error);
  w = bare(WorkloadKind::inference, 16, "int4");
  w.compute = parse_precision("int8");
  EXPECT_THROW(checked(gpt2(), w), Error);
}

}  // namespace workload_test
}  // namespace memplan
