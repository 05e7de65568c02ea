#include "memplan/io/plan_file.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <limits>

#include "memplan/core/error.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/io/gpu_table.hpp"

namespace memplan {
namespace plan_file_test {

const std::string kData = MEMPLAN_TEST_DATA;

PlanFile parse(const std::string& text, const std::string& base_dir = ".") {
  return parse_plan_yaml(text, "plan.yaml", base_dir);
}

ConfigError plan_error(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ConfigError("", 0, 0, "", "");
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(PlanFile, DefaultsFollowTheSeedsMemorySection) {
  const PlanFile p = parse("model: llama-2-7b\nworkload: inference\n");
  EXPECT_EQ(p.model.spec.name, "llama-2-7b");
  EXPECT_EQ(p.workload.kind, WorkloadKind::inference);
  EXPECT_EQ(p.memory.precision_mode, "auto");
  EXPECT_EQ(p.memory.streaming_chunk_size, 512U);
  EXPECT_DOUBLE_EQ(p.memory.memory_warning_threshold, 0.85);
  EXPECT_TRUE(p.memory.activation_cache_filter.empty());
  EXPECT_FALSE(p.memory.enable_gradient_checkpointing);
  EXPECT_EQ(p.workload.batch, 1U);
  EXPECT_EQ(p.workload.seq_len, 2048U);  // min(2048, 4096)
  EXPECT_EQ(p.budget.kind, BudgetKind::none);
}

TEST(PlanFile, SeqDefaultsToTheModelsContextWhenShorter) {
  EXPECT_EQ(parse("model: gpt2\nworkload: inference\n").workload.seq_len, 1024U);           // gpt2: 1024 positions
  EXPECT_EQ(parse("model: llama-2-7b\nworkload: generation\n").workload.new_tokens, 256U);  // as memplan estimate
  // gpt2 generation: 1024 prompt tokens + 256 new ones pass its 1024 learned positions.
  EXPECT_THROW(parse("model: gpt2\nworkload: generation\n"), ConfigError);
}

TEST(PlanFile, KnobsAndMemorySectionMapOntoTheWorkload) {
  const PlanFile p = parse(
      "model: gpt2\n"
      "workload:\n"
      "  kind: streaming_extraction\n"
      "  batch_size: 4\n"
      "  seq_len: 1000\n"
      "  attention: eager\n"
      "  kv_precision: fp8\n"
      "  layers: [0, 5, 11]\n"
      "memory:\n"
      "  precision_mode: fp16\n"
      "  streaming_chunk_size: 256\n"
      "  memory_warning_threshold: 0.9\n"
      "  activation_cache_filter: [\"blocks.*.hook_resid_post\"]\n"
      "budget: 24GiB\n");
  EXPECT_EQ(p.workload.kind, WorkloadKind::streaming_extraction);
  EXPECT_EQ(p.workload.batch, 4U);
  EXPECT_EQ(p.workload.seq_len, 1000U);
  EXPECT_EQ(p.workload.attention, AttentionVariant::eager);
  ASSERT_TRUE(p.workload.kv_precision.has_value());
  EXPECT_EQ(to_string(*p.workload.kv_precision), "fp8_e4m3");
  EXPECT_EQ(p.workload.cache.layers, (std::vector<std::uint64_t>{0, 5, 11}));
  EXPECT_EQ(p.workload.streaming_chunk, 256U);
  EXPECT_EQ(p.workload.cache.filter, (std::vector<std::string>{"blocks.*.hook_resid_post"}));
  EXPECT_EQ(p.memory.precision_mode, "fp16");
  EXPECT_DOUBLE_EQ(p.memory.memory_warning_threshold, 0.9);
  EXPECT_EQ(p.budget.kind, BudgetKind::bytes);
  EXPECT_EQ(p.budget.bytes.count(), 24ULL << 30);
  EXPECT_TRUE(p.notes.empty());
}

TEST(PlanFile, GradientCheckpointingTurnsOnFullRecomputationForTraining) {
  const PlanFile t = parse("model: gpt2\nworkload: training\nmemory:\n  enable_gradient_checkpointing: true\n");
  EXPECT_EQ(t.workload.analysis.training.recompute, Recompute::full);
  EXPECT_TRUE(t.notes.empty());
  const PlanFile i = parse("model: gpt2\nworkload: inference\nmemory:\n  enable_gradient_checkpointing: true\n");
  EXPECT_EQ(i.workload.analysis.training.recompute, Recompute::none);
  ASSERT_EQ(i.notes.size(), 1U);
  EXPECT_TRUE(contains(i.notes[0], "applies to training")) << i.notes[0];
}

TEST(PlanFile, BudgetsAreGpusSizesOrProbe) {
  const PlanBudget gpu = parse_budget("A100");  // an alias, case-insensitive
  EXPECT_EQ(gpu.kind, BudgetKind::gpu);
  ASSERT_TRUE(gpu.gpu.has_value());
  EXPECT_EQ(gpu.gpu->name, "a100-sxm4-80gb");
  EXPECT_EQ(gpu.bytes.count(), 81050ULL << 20);           // CUDA's total, 81050 MiB (configs/gpus.yaml)
  EXPECT_EQ(parse_budget("3060").kind, BudgetKind::gpu);  // an alias that looks like a number
  EXPECT_EQ(parse_budget("80GB").bytes.count(), 80'000'000'000ULL);
  EXPECT_EQ(parse_budget("probe").kind, BudgetKind::probe);
  EXPECT_THROW(parse_budget("80G"), Error);  // ambiguous
  EXPECT_THROW(parse_budget("0GiB"), Error);
  EXPECT_THROW(parse_budget("a100-81"), Error);
}

TEST(PlanFile, LimitIsFloorOfBudgetTimesThreshold) {
  EXPECT_EQ(budget_limit(Bytes{100}, 0.85).count(), 85U);
  EXPECT_EQ(budget_limit(Bytes{3}, 0.5).count(), 1U);  // 1.5 rounds down
  EXPECT_EQ(budget_limit(Bytes{1'000'000'000}, 0.85).count(), 850'000'000U);
  // A100 80GB: 81920 MiB x 0.85 = 73,014,444,032 bytes exactly (85899345920 x 85 / 100).
  EXPECT_EQ(budget_limit(Bytes{81920ULL << 20}, 0.85).count(), 73'014'444'032ULL);
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(budget_limit(Bytes{max}, 1.0).count(), max);  // no overflow
}

TEST(PlanFile, EvaluateComparesWithTheLimitAtTheBoundary) {
  // GPT-2 weights in fp32: 124,439,808 parameters x 4 B = 497,759,232 bytes.
  const std::string base =
      "model: gpt2\nworkload:\n  kind: weights\n  include_overhead: false\nmemory:\n  precision_mode: fp32\n";
  const PlanFile fits = parse(base + "  memory_warning_threshold: 0.5\nbudget: 1GB\n");
  const PlanOutcome a = evaluate_plan(fits, std::nullopt, fits.budget.bytes);
  EXPECT_EQ(a.total.count(), 497'759'232U);
  EXPECT_EQ(a.limit->count(), 500'000'000U);
  EXPECT_TRUE(*a.fits);
  const PlanFile over = parse(base + "  memory_warning_threshold: 0.49\nbudget: 1GB\n");
  const PlanOutcome b = evaluate_plan(over, std::nullopt, over.budget.bytes);
  EXPECT_EQ(b.limit->count(), 490'000'000U);
  EXPECT_FALSE(*b.fits);
}

TEST(PlanFile, AutoResolvesForTheBudgetGpu) {
  const PlanFile p = parse("model: gpt2\nworkload: weights\nbudget: rtx-2080\n");
  const PlanOutcome o = evaluate_plan(p, p.budget.gpu, p.budget.bytes);
  EXPECT_EQ(to_string(o.precision), "fp16");  // compute capability 7.5: no bf16
  const PlanOutcome none = evaluate_plan(p, std::nullopt, std::nullopt);
  EXPECT_EQ(to_string(none.precision), "bf16");
  EXPECT_FALSE(none.fits.has_value());
}

TEST(PlanFile, RelativeModelPathsResolveAgainstThePlansFolder) {
  const PlanFile p = parse("model: tiny-gpt2.yaml\nworkload: inference\n", kData);
  EXPECT_EQ(p.model.spec.name, "tiny-gpt2");
  const ConfigError e = plan_error("model: no-such-model.yaml\nworkload: inference\n");
  EXPECT_EQ(e.key(), "model");
  EXPECT_EQ(e.line(), 1U);
  EXPECT_EQ(e.column(), 8U);
}

TEST(PlanFile, ErrorsNameLineColumnAndKey) {
  ConfigError e = plan_error("model: gpt2\nworkload: inference\nmemory:\n  precision_mod: fp16\n");
  EXPECT_EQ(e.key(), "precision_mod");
  EXPECT_EQ(e.line(), 4U);
  EXPECT_EQ(e.column(), 3U);
  EXPECT_TRUE(contains(e.message(), "did you mean 'precision_mode'")) << e.what();
  EXPECT_TRUE(contains(e.what(), "plan.yaml:4:3: ")) << e.what();

  e = plan_error("model: gpt2\nworkload: inference\nbuget: a100\n");
  EXPECT_EQ(e.line(), 3U);
  EXPECT_TRUE(contains(e.message(), "did you mean 'budget'")) << e.what();

  e = plan_error("model: gpt2\nworkload: inference\nmemory:\n  memory_warning_threshold: 1.5\n");
  EXPECT_EQ(e.key(), "memory_warning_threshold");
  EXPECT_EQ(e.line(), 4U);
  EXPECT_EQ(e.column(), 29U);

  e = plan_error("model: gpt2\nworkload: inference\nmemory:\n  memory_warning_threshold: 0\n");
  EXPECT_TRUE(contains(e.message(), "greater than 0")) << e.what();

  e = plan_error("model: gpt2\nworkload: inference\nbudget: 80G\n");
  EXPECT_EQ(e.key(), "budget");
  EXPECT_EQ(e.line(), 3U);
  EXPECT_EQ(e.column(), 9U);

  e = plan_error("model: gpt2\nworkload:\n  kind: extration\n");
  EXPECT_EQ(e.key(), "kind");
  EXPECT_EQ(e.line(), 3U);
  EXPECT_TRUE(contains(e.message(), "did you mean 'extraction'")) << e.what();

  e = plan_error("model: gpt2\nworkload:\n  kind: inference\n  batch_size: 0\n");
  EXPECT_EQ(e.key(), "batch_size");
  EXPECT_EQ(e.line(), 4U);

  e = plan_error("model: gpt-2\nworkload: inference\n");
  EXPECT_EQ(e.key(), "model");
  EXPECT_TRUE(contains(e.message(), "'gpt2'")) << e.what();

  e = plan_error("model: gpt2\n");
  EXPECT_TRUE(contains(e.message(), "missing required key 'workload'")) << e.what();

  e = plan_error("model: gpt2\nworkload: inference\nmemory:\n  precision_mode: fp17\n");
  EXPECT_EQ(e.key(), "precision_mode");
  EXPECT_EQ(e.line(), 4U);
}

TEST(PlanFile, KnobCombinationsTheEstimatorRefusesArePointedAt) {
  // A filter that matches no hook of gpt2 (12 blocks) points at the memory section's key.
  ConfigError e = plan_error(
      "model: gpt2\nworkload: extraction\nmemory:\n  activation_cache_filter: [blocks.40.hook_resid_post]\n");
  EXPECT_EQ(e.key(), "activation_cache_filter");
  EXPECT_EQ(e.line(), 4U);
  // gpt2 has learned positions for 1024 tokens.
  e = plan_error("model: gpt2\nworkload:\n  kind: inference\n  seq_len: 4096\n");
  EXPECT_EQ(e.key(), "seq_len");
  EXPECT_EQ(e.line(), 4U);
}

TEST(PlanFile, ShippedExamplesParse) {
  for (const char* name : {"llama2-7b-extraction-a100.yaml", "gpt2-selective-cache-rtx3060.yaml",
                           "llama2-13b-generation-rtx3060.yaml", "mistral-7b-streaming-24gib.yaml"}) {
    const PlanFile p = load_plan_file(
        (std::filesystem::path(MEMPLAN_TEST_DATA) / "../../../configs/plans" / name).string());
    EXPECT_NE(p.budget.kind, BudgetKind::none) << name;
  }
}

}  // namespace plan_file_test
}  // namespace memplan
