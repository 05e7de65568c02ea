// Rules read off real PyTorch runs on an H200 (bench/accuracy, docs/accuracy.md, 2026-11-27:
// PyTorch 2.11, transformers 5.17): what each run showed that the estimate had missed, each
// figure written out from the config's sizes.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "hf_fixtures.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {
namespace measured_rules_test {

using testing::find_row;
using testing::hf_fixture;
using testing::row_bytes;

TrainingOptions lora(std::uint64_t rank, std::vector<std::string> targets = {"q", "v"}) {
  TrainingOptions o;
  o.lora.rank = rank;
  o.lora.targets = std::move(targets);
  return o;
}

// What the layers keep for backward, as the forward phase ends (bf16).
std::vector<Item> activations(const ModelSpec& s, std::uint64_t batch, std::uint64_t seq, const TrainingOptions& o) {
  TrainingShape shape;
  shape.batch = batch;
  shape.seq = seq;
  shape.weights.precision = shape.compute = precisions::bf16;
  for (const TrainingPhase& p : estimate_training_phases(s, shape, o).phases) {
    if (p.name != "forward") continue;
    if (const Item* a = find_row(p.components, "activations")) return a->detail;
  }
  ADD_FAILURE() << "no forward activations";
  return {};
}

// LoRA on q and v of Llama-2-7b: the frozen down projection's matmul keeps no input (autograd
// saves x only for the weight's gradient). The estimate was 1.245 GiB above the measured
// peak; the 32 layers' down inputs are 32 x 2048 x 11008 x 2 B = 1,442,840,576 B (1.34 GiB).
TEST(MeasuredRules, LoraKeepsNoInputOfAFrozenDownProjection) {
  const ModelSpec s = hf_fixture("llama-2-7b");
  EXPECT_EQ(find_row(activations(s, 1, 2048, lora(8)), "down_input"), nullptr);
  EXPECT_EQ(row_bytes(activations(s, 1, 2048, lora(8, {"q", "v", "down"})), "down_input"), 32ULL * 2048 * 11008 * 2);
  EXPECT_EQ(row_bytes(activations(s, 1, 2048, lora(0)), "down_input"), 32ULL * 2048 * 11008 * 2);
}

// Qwen3-8B's per-head q and k RMSNorms keep their fp32 input copies, 36 layers x 2048 x
// (32 + 8) x 128 x 4 B, and, when their weights train, the bf16 normalised outputs (half that).
TEST(MeasuredRules, QkNormsKeepTheirFp32Copies) {
  const ModelSpec s = hf_fixture("qwen3-8b");
  const std::uint64_t elements = 36ULL * 2048 * (32 + 8) * 128;
  const std::vector<Item> full = activations(s, 1, 2048, lora(0));
  EXPECT_EQ(row_bytes(full, "qk_norm_fp32_copies"), elements * 4);
  EXPECT_EQ(row_bytes(full, "qk_norm_outputs"), elements * 2);
  const std::vector<Item> adapters = activations(s, 1, 2048, lora(16));
  EXPECT_EQ(row_bytes(adapters, "qk_norm_fp32_copies"), elements * 4);
  EXPECT_EQ(find_row(adapters, "qk_norm_outputs"), nullptr);
}

// Gemma's RMSNorm multiplies by (1 + weight) in fp32, so the normalised x it keeps is fp32:
// gemma-3-1b, batch 2 x 2048, 26 layers x 4 norms x 2048 x 2 x 1152 x 4 B, and its q/k norms'
// outputs 26 x 2048 x 2 x (4 + 1) x 256 x 4 B. Without them the step's peak was 9.3% above
// the estimate; with them 2.0%.
TEST(MeasuredRules, GemmaNormsKeepFp32Outputs) {
  const std::vector<Item> rows = activations(hf_fixture("gemma-3-1b-it"), 2, 2048, lora(0));
  EXPECT_EQ(row_bytes(rows, "rmsnorm_fp32_outputs"), 26ULL * 4 * 2048 * 2 * 1152 * 4);
  EXPECT_EQ(find_row(rows, "norm_inputs"), nullptr);
  EXPECT_EQ(row_bytes(rows, "qk_norm_outputs"), 26ULL * 2048 * 2 * (4 + 1) * 256 * 4);
}

// gpt-oss's eager attention softmaxes in bf16 over cat([scores, sinks]) - max: the scores,
// that difference (one column wider) and the probabilities, 64 heads x 4096 queries each.
// Measured at 4096 tokens: 1.001 of the estimate.
TEST(MeasuredRules, GptOssEagerSoftmaxesWithItsSinksInBf16) {
  Workload w;
  w.kind = WorkloadKind::inference;
  w.seq_len = 4096;
  w.weights.precision = precisions::bf16;
  w.attention = AttentionVariant::eager;
  const Breakdown b = estimate_workload(hf_fixture("gpt-oss-20b"), w);
  const std::vector<Item>& rows = find_row(b.components, "forward_workspace")->detail;
  EXPECT_EQ(row_bytes(rows, "attn_scores"), 64ULL * 4096 * 4096 * 2);
  EXPECT_EQ(row_bytes(rows, "attn_probabilities"), 64ULL * 4096 * 4096 * 2);
  EXPECT_EQ(row_bytes(rows, "attn_sink_logits"), 64ULL * 4096 * 4097 * 2);
  EXPECT_EQ(find_row(rows, "attn_probabilities_16bit"), nullptr);
}

}  // namespace measured_rules_test
}  // namespace memplan
