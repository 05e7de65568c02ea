#include "memplan/plan/options.hpp"

#include <gtest/gtest.h>

#include <set>

#include "memplan/core/error.hpp"
#include "memplan/plan/calibration.hpp"
#include "memplan/plan/plan.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace options_test {

using testing::llama2_7b;

PlanSettings with(std::initializer_list<std::pair<const char*, std::vector<std::string>>> options) {
  PlanSettings s;
  for (const auto& [name, values] : options) {
    const OptionDef* o = find_option(name);
    if (o == nullptr) throw std::logic_error(std::string("no option ") + name);
    set_option(s, *o, values);
  }
  return s;
}

std::string error_of(std::initializer_list<std::pair<const char*, std::vector<std::string>>> options) {
  try {
    (void)with(options);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OptionTable, KeysAndFlagsAreUniqueAndEveryEntryIsComplete) {
  std::set<std::string_view> keys, flags;
  std::set<char> shorts;
  for (const OptionDef& o : plan_options()) {
    EXPECT_TRUE(keys.insert(o.key).second) << "duplicate key " << o.key;
    EXPECT_TRUE(flags.insert(o.flag).second) << "duplicate flag " << o.flag;
    if (o.short_flag != 0) {
      EXPECT_TRUE(shorts.insert(o.short_flag).second) << o.key;
    }
    EXPECT_NE(o.set, nullptr) << o.key;
    EXPECT_FALSE(o.help.empty()) << o.key;
    EXPECT_FALSE(o.group.empty()) << o.key;
    EXPECT_NE(o.applies, 0U) << o.key;
    EXPECT_EQ(o.key.find('-'), std::string_view::npos) << "keys are snake_case: " << o.key;
    if (o.kind == OptionKind::count) {
      EXPECT_LE(o.min, o.max) << o.key;
    }
    EXPECT_FALSE(o.negated && o.kind != OptionKind::flag) << o.key;
  }
  // A key and a flag name may be the same option's, never two options'.
  for (const OptionDef& o : plan_options()) {
    EXPECT_EQ(find_option(o.key), &o);
    EXPECT_EQ(find_option(o.flag), &o);
  }
}

TEST(OptionTable, CountsRefuseNegativesZeroAndJunkNamingTheKey) {
  EXPECT_EQ(error_of({{"batch", {"-1"}}}), "`batch_size` must be an integer from 1 to 1,099,511,627,776, got -1");
  EXPECT_EQ(error_of({{"seq", {"0"}}}), "`seq_len` must be an integer from 1 to 1,099,511,627,776, got 0");
  EXPECT_EQ(error_of({{"batch", {"8x"}}}), "`batch_size` must be a whole number, got '8x'");
  EXPECT_EQ(error_of({{"batch", {"18446744073709551616"}}}),
            "`batch_size` is too large: 18446744073709551616 (at most 1,099,511,627,776)");
  EXPECT_EQ(error_of({{"tp", {"-4"}}}), "`tp` must be an integer from 1 to 4,096, got -4");
  // 0 keeps its meaning where it has one: a contiguous KV cache.
  EXPECT_EQ(with({{"kv_page", {"0"}}}).workload.kv_page_tokens, 0U);
}

TEST(OptionTable, NumbersRefuseInfinityNanAndOutOfRange) {
  EXPECT_EQ(error_of({{"threshold", {"1.5"}}}), "`threshold` must be a fraction in (0, 1], got 1.5");
  EXPECT_EQ(error_of({{"threshold", {"0"}}}), "`threshold` must be a fraction in (0, 1], got 0");
  EXPECT_EQ(error_of({{"fragmentation", {"nan"}}}), "`fragmentation` must be a fraction in [0, 1], got 'nan'");
  EXPECT_EQ(error_of({{"zlib_ratio", {"inf"}}}), "`zlib_ratio` must be a number in [1, 1000000], got 'inf'");
  EXPECT_EQ(error_of({{"zlib_ratio", {"1e309"}}}), "`zlib_ratio` must be a number in [1, 1000000], got '1e309'");
  EXPECT_DOUBLE_EQ(with({{"threshold", {"0.9"}}}).threshold, 0.9);
}

TEST(OptionTable, NegatedFlagsSetTheirKeyFalseOnTheCommandLineAndAsGivenInAFile) {
  EXPECT_FALSE(with({{"no_kv_cache", {}}}).workload.kv_cache);      // --no-kv-cache
  EXPECT_FALSE(with({{"kv_cache", {"false"}}}).workload.kv_cache);  // kv_cache: false
  EXPECT_TRUE(with({{"kv_cache", {"true"}}}).workload.kv_cache);
  EXPECT_EQ(error_of({{"kv_cache", {"maybe"}}}), "`kv_cache` is true or false, got 'maybe'");
}

TEST(OptionTable, ParsersErrorsNameTheOption) {
  EXPECT_NE(error_of({{"precision", {"int3"}}}).find("`precision`: "), std::string::npos);
  EXPECT_NE(error_of({{"compute", {"int8"}}}).find("`compute`: must be a float precision"), std::string::npos);
  EXPECT_NE(error_of({{"offload", {"disk"}}}).find("`offload` takes 'optimizer' and/or 'params', not 'disk'"),
            std::string::npos);
}

TEST(OptionTable, ListsSplitAtCommasOutsideBraces) {
  const PlanSettings s = with({{"filter", {"blocks.{0,5}.hook_resid_post,hook_embed", "blocks.1.attn.hook_z"}}});
  EXPECT_EQ(s.workload.cache.filter,
            (std::vector<std::string>{"blocks.{0,5}.hook_resid_post", "hook_embed", "blocks.1.attn.hook_z"}));
}

TEST(OptionTable, NegativePosSliceKeepsOnePositionAsTransformerLensDoes) {
  // run_with_cache(pos_slice=-1) keeps the last position only.
  const PlanSettings s = with({{"workload", {"extraction"}}, {"pos_slice", {"-1"}}});
  EXPECT_EQ(s.workload.cache.pos_slice, 1U);
  EXPECT_EQ(s.pos_index_from_end, 1U);
  // -3000 is before the first of 2048 positions: an IndexError in Python, an error here.
  const PlanSettings far = with({{"workload", {"extraction"}}, {"pos_slice", {"-3000"}}});
  try {
    (void)bind(llama2_7b(), far, DeviceChoice{});
    FAIL() << "pos_slice -3000 on 2048 positions was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "pos_slice");
  }
}

TEST(OptionTable, AnOptionForAnotherWorkloadIsAnErrorNamingWhereItApplies) {
  const PlanSettings s = with({{"lanczos_k", {"50"}}});  // -w inference by default
  try {
    (void)bind(llama2_7b(), s, DeviceChoice{});
    FAIL() << "lanczos_k on inference was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "`lanczos_k` applies to lanczos; this plan's workload is inference");
    EXPECT_EQ(e.key(), "lanczos_k");
  }
  // A sweep checks against every workload it runs.
  EXPECT_NO_THROW(check_options_apply(with({{"new_tokens", {"8"}}}),
                                      workload_bit(WorkloadKind::inference) | workload_bit(WorkloadKind::generation)));
}

TEST(OptionTable, RenderingWritesKnownKeysAndLeavesTheRest) {
  const auto flags = [](std::string_view key) -> std::optional<std::string> {
    if (const OptionDef* o = find_option(key)) return "--" + std::string(o->flag);
    return std::nullopt;
  };
  EXPECT_EQ(render_option_refs("`stage_layers` lists 3 but `pp` is 4; `nothing` stays", flags),
            "--stage_layers lists 3 but --pp is 4; `nothing` stays");
  EXPECT_EQ(render_option_refs("an unclosed ` stays", flags), "an unclosed ` stays");
}

TEST(Bind, DefaultsFollowTheModelAndTheWorkload) {
  ModelSpec short_context = llama2_7b();
  short_context.max_seq_len = 1024;
  EXPECT_EQ(bind(short_context, PlanSettings{}, DeviceChoice{}).workload.seq_len, 1024U);  // min(2048, context)
  EXPECT_EQ(bind(llama2_7b(), PlanSettings{}, DeviceChoice{}).workload.seq_len, 2048U);
  const Plan generation = bind(llama2_7b(), with({{"workload", {"generation"}}}), DeviceChoice{});
  EXPECT_EQ(generation.workload.new_tokens, 256U);
  EXPECT_EQ(bind(llama2_7b(), with({{"workload", {"generation"}}, {"new_tokens", {"0"}}}), DeviceChoice{})
                .workload.new_tokens,
            0U);  // given, even as 0: kept
}

// A plan's device: one GPU of `memory` bytes and compute capability `cc`.
DeviceChoice one_gpu(const char* name, ComputeCapability cc, Bytes memory) {
  DeviceChoice d;
  d.gpu = GpuSpec{};
  d.gpu->name = name;
  d.gpu->compute_capability = cc;
  d.gpu->memory = memory;
  return d;
}

TEST(Bind, ResolvesThePrecisionForTheDeviceAndSetsItsBudget) {
  const DeviceChoice v100 = one_gpu("v100", {7, 0}, Bytes{32ULL << 30});
  const Plan plan = bind(llama2_7b(), PlanSettings{}, v100);
  EXPECT_EQ(plan.workload.weights.precision, precisions::fp16);  // auto: no bf16 before compute capability 8.0
  EXPECT_FALSE(plan.workload.overhead.hopper_or_newer);
  EXPECT_EQ(plan.budget, Bytes{32ULL << 30});
  EXPECT_FALSE(plan.precision_note.empty());
}

TEST(Bind, TheCpuRunsFp32WithoutCudaOverheads) {
  DeviceChoice cpu;
  cpu.cpu = true;
  cpu.budget = Bytes{64ULL << 30};
  const Plan plan = bind(llama2_7b(), PlanSettings{}, cpu);
  EXPECT_EQ(plan.workload.weights.precision, precisions::fp32);  // auto on a CPU: fp32 is the one native kernel
  EXPECT_TRUE(plan.workload.overhead.host);
  EXPECT_TRUE(plan.cpu);
  EXPECT_FALSE(plan.device.has_value());
  EXPECT_EQ(plan.budget, Bytes{64ULL << 30});
  PlanSettings layout;
  set_option(layout, *find_option("tp"), {"2"});
  EXPECT_THROW(bind(llama2_7b(), layout, cpu), Error);
}

std::string bind_error(const PlanSettings& s, const DeviceChoice& d = {}) {
  try {
    (void)bind(llama2_7b(), s, d);
  } catch (const Error& e) {
    return e.key() + ": " + e.what();
  }
  return "";
}

TEST(Bind, MixedPrecisionIsOneNamedRecipe) {
  const auto bound = [](PlanSettings s) { return bind(llama2_7b(), s, DeviceChoice{}).workload; };
  // Each name sets the dtypes it means (auto with no device resolves bf16).
  const Workload amp = bound(with({{"workload", {"training"}}, {"mixed_precision", {"amp"}}}));
  EXPECT_EQ(amp.weights.precision, precisions::fp32);
  EXPECT_EQ(compute_precision(amp), precisions::bf16);
  const Workload amp_fp16 = bound(
      with({{"workload", {"training"}}, {"mixed_precision", {"amp"}}, {"compute", {"fp16"}}}));
  EXPECT_EQ(compute_precision(amp_fp16), precisions::fp16);  // fp16 autocast, as with a GradScaler
  const Workload pure = bound(with({{"workload", {"training"}}, {"mixed_precision", {"pure"}}}));
  EXPECT_EQ(pure.weights.precision, precisions::bf16);
  EXPECT_FALSE(pure.analysis.training.master_weights);
  const Workload master = bound(
      with({{"workload", {"training"}}, {"mixed_precision", {"master"}}, {"precision", {"fp16"}}}));
  EXPECT_EQ(master.weights.precision, precisions::fp16);
  EXPECT_TRUE(master.analysis.training.master_weights);
  const Workload fp32 = bound(with({{"workload", {"training"}}, {"mixed_precision", {"fp32"}}}));
  EXPECT_EQ(compute_precision(fp32), precisions::fp32);

  // The older spellings name the recipe they mean.
  EXPECT_EQ(bound(with({{"workload", {"training"}}, {"precision", {"fp32"}}, {"compute", {"bf16"}}})).mixed_precision,
            MixedPrecision::amp);
  EXPECT_EQ(bound(with({{"workload", {"training"}}, {"precision", {"bf16"}}})).mixed_precision, MixedPrecision::master);
  EXPECT_EQ(bound(with({{"workload", {"training"}}, {"no_master_weights", {}}})).mixed_precision, MixedPrecision::pure);
  EXPECT_EQ(bound(with({{"workload", {"training"}}, {"precision", {"fp32"}}})).mixed_precision, MixedPrecision::fp32);
  EXPECT_FALSE(bound(with({{"workload", {"training"}}, {"precision", {"nf4"}}, {"lora_rank", {"8"}}}))
                   .mixed_precision.has_value());  // QLoRA: only the adapters train

  // A dtype that contradicts the recipe names the one that has it.
  EXPECT_EQ(bind_error(with({{"workload", {"training"}}, {"mixed_precision", {"amp"}}, {"precision", {"bf16"}}})),
            "precision: `mixed_precision` amp keeps fp32 weights and casts them per matmul, not bf16 ones: 16-bit "
            "weights are `mixed_precision` master (an fp32 master copy) or pure");
  EXPECT_NE(bind_error(with({{"workload", {"training"}}, {"mixed_precision", {"master"}}, {"no_master_weights", {}}}))
                .find("master_weights: "),
            std::string::npos);
  EXPECT_NE(bind_error(with({{"workload", {"training"}}, {"mixed_precision", {"fp32"}}, {"compute", {"fp16"}}}))
                .find("compute: "),
            std::string::npos);
  DeviceChoice cpu;
  cpu.cpu = true;
  EXPECT_NE(bind_error(with({{"workload", {"training"}}, {"mixed_precision", {"amp"}}}), cpu).find("compute: "),
            std::string::npos);  // auto on a CPU is fp32: autocast's dtype must be named
}

TEST(Bind, TheContextIsTheCardsMeasuredOneUnlessCalibratedOrGiven) {
  DeviceChoice card = one_gpu("card", {8, 6}, Bytes{24ULL << 30});
  card.gpu->cuda_context = Bytes{256ULL << 20};
  card.gpu->cuda_context_source = "a run";
  EXPECT_EQ(bind(llama2_7b(), PlanSettings{}, card).workload.overhead.cuda_context, Bytes{256ULL << 20});
  // A size given wins, and so does this machine's calibration.
  EXPECT_EQ(bind(llama2_7b(), with({{"cuda_context", {"300MiB"}}}), card).workload.overhead.cuda_context,
            Bytes{300ULL << 20});
  DeviceChoice calibrated = card;
  calibrated.calibration = Calibration{"card", "13.0", {{"cuda_context", 400ULL << 20, true, "measured here"}}};
  EXPECT_EQ(bind(llama2_7b(), PlanSettings{}, calibrated).workload.overhead.cuda_context, Bytes{400ULL << 20});
  // Without a figure for the card: the assumption, 512 MiB.
  card.gpu->cuda_context = Bytes{0};
  EXPECT_EQ(bind(llama2_7b(), PlanSettings{}, card).workload.overhead.cuda_context, Bytes{512ULL << 20});
  // CUDA_MODULE_LOADING=EAGER loads every kernel image at start: measured on an H200 with
  // PyTorch 2.11, 1,286,406,144 - 615,317,504 = 671,088,640 B for the context and 536,870,912
  // - 102,760,448 = 434,110,464 for cuBLAS: 1,105,199,104 B more than lazy loading.
  Workload eager = bind(llama2_7b(), with({{"module_loading", {"eager"}}}), card).workload;
  eager.include_overhead = true;
  const Breakdown b = estimate_workload(llama2_7b(), eager);
  const Item* overhead = b.find("overhead");
  ASSERT_NE(overhead, nullptr);
  EXPECT_EQ(overhead->detail.front().bytes.count(), (512ULL << 20) + 671088640ULL + 434110464ULL);
  EXPECT_NE(error_of({{"module_loading", {"eagre"}}}).find("lazy or eager"), std::string::npos);
}

TEST(Verdict, ThreeStatesAroundTheThresholdAndTheBudget) {
  const Bytes budget{1'000'000};
  // floor(1,000,000 x 0.85) = 850,000.
  EXPECT_EQ(verdict_of(Bytes{850'000}, budget, 0.85), Verdict::fits);
  EXPECT_EQ(verdict_of(Bytes{850'001}, budget, 0.85), Verdict::above_threshold);
  EXPECT_EQ(verdict_of(Bytes{1'000'000}, budget, 0.85), Verdict::above_threshold);
  EXPECT_EQ(verdict_of(Bytes{1'000'001}, budget, 0.85), Verdict::does_not_fit);
  EXPECT_EQ(verdict_of(Bytes{1'000'000}, budget, 1.0), Verdict::fits);
}

}  // namespace options_test
}  // namespace memplan
