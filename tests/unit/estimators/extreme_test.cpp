// Arithmetic at the edges: a 10-trillion-parameter model, a 1,048,576-token
// context and a batch of 65,536 give each estimator's exact bytes, written out below as
// products of the spec's sizes, or Error(overflow) -- never a wrapped number.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/estimators/activations.hpp"
#include "memplan/estimators/attention.hpp"
#include "memplan/estimators/block_eig.hpp"
#include "memplan/estimators/curvature.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/estimators/lanczos.hpp"
#include "memplan/estimators/representation.hpp"
#include "memplan/estimators/sae.hpp"
#include "memplan/estimators/sample_gradients.hpp"
#include "memplan/estimators/training.hpp"
#include "memplan/estimators/weights.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {
namespace extreme_test {

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t kContext = 1ULL << 20;  // 1,048,576 tokens
constexpr std::uint64_t kBatch = 65536;

// A Llama-style model of 10,054,540,001,280 parameters, counted by hand:
//   per block: q 65536x65536 = 4,294,967,296; k, v 8192x65536 = 536,870,912 each (64 KV heads
//   of 128); o 4,294,967,296; gate, up, down 262144x65536 = 17,179,869,184 each; two RMSNorm
//   weights 65,536 each: 61,203,415,040
//   164 blocks: 10,037,360,066,560; token table and untied head 131072x65536 = 8,589,934,592
//   each; final norm 65,536: 10,037,360,066,560 + 17,179,869,184 + 65,536.
constexpr std::uint64_t kParams = 10054540001280ULL;

ModelSpec ten_trillion() {
  ModelSpec s = family_defaults(Family::llama);
  s.name = "ten-trillion";
  s.d_model = 65536;
  s.n_layers = 164;
  s.n_heads = 512;
  s.n_kv_heads = 64;
  s.d_head = 128;
  s.d_mlp = 262144;
  s.vocab_size = 131072;
  s.max_seq_len = kContext;
  return s;
}

// Runs `compute` and expects Error(overflow): a count past 2^64 - 1 is refused, not wrapped.
void expect_overflow(const std::function<void()>& compute) {
  try {
    compute();
    ADD_FAILURE() << "expected Error(overflow), got a result";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow) << e.what();
    EXPECT_NE(std::string(e.what()).find("2^64"), std::string::npos) << e.what();
  }
}

Bytes checked_total(const Breakdown& b) {
  testing::expect_consistent(b);
  return b.total();
}

TEST(Extreme, TenTrillionParametersCountExactly) {
  validate(ten_trillion());
  EXPECT_EQ(count_parameters(ten_trillion()), kParams);
}

TEST(Extreme, Weights) {
  WeightsOptions o;
  o.precision = precisions::bf16;
  EXPECT_EQ(checked_total(estimate_weights(ten_trillion(), o)).count(), 2 * kParams);  // 20,109,080,002,560
  o.precision = precisions::fp32;
  EXPECT_EQ(checked_total(estimate_weights(ten_trillion(), o)).count(), 40218160005120ULL);
  // int4-g128 on the linear layers: 4 bits + a 16-bit scale per 128 inputs per row, per block
  //   q, o: 65536 x 65536 x 4 + 65536 x 512 x 16 bits = 2,214,592,512 B each
  //   k, v: 8192 x 65536 x 4 + 8192 x 512 x 16 bits = 276,824,064 B each
  //   gate, up: 262144 x 65536 x 4 + 262144 x 512 x 16 bits = 8,858,370,048 B each
  //   down: 65536 x 262144 x 4 + 65536 x 2048 x 16 bits = 8,858,370,048 B
  //   = 31,557,943,296 B per block x 164 = 5,175,502,700,544
  // fp16 elsewhere: token table and head 2 x 8,589,934,592 x 2 B = 34,359,738,368; norms
  //   (2 x 164 + 1) x 65,536 x 2 B = 43,122,688; in all 5,209,905,561,600.
  o.precision = parse_precision("int4");
  EXPECT_EQ(checked_total(estimate_weights(ten_trillion(), o)).count(),
            164ULL * (2 * 2214592512ULL + 2 * 276824064ULL + 3 * 8858370048ULL) + 2 * 8589934592ULL * 2 +
                (2 * 164 + 1) * 65536ULL * 2);
  EXPECT_EQ(checked_total(estimate_weights(ten_trillion(), o)).count(), 5209905561600ULL);
}

TEST(Extreme, KvCache) {
  // 2 (K, V) x 164 layers x 65,536 sequences x 1,048,576 tokens x 64 heads x 128 x 2 B.
  const KvCacheOptions o{kBatch, kContext, precisions::fp16};
  EXPECT_EQ(checked_total(estimate_kv_cache(ten_trillion(), o)).count(), 369295169444380672ULL);
  EXPECT_EQ(369295169444380672ULL, 2ULL * 164 * kBatch * kContext * 64 * 128 * 2);
  // fp32 at 2^44 tokens: 2^64 bytes per layer's keys, one past the largest count.
  expect_overflow([] { estimate_kv_cache(ten_trillion(), {kBatch, 1ULL << 28, precisions::fp32}); });
  // Pages of 16 round 2^64 - 1 tokens up to 2^64: refused, not wrapped to 0 tokens.
  KvCacheOptions paged{1, kMax, precisions::fp16};
  paged.page_tokens = 16;
  expect_overflow([&] { estimate_kv_cache(ten_trillion(), paged); });
}

TEST(Extreme, ActivationCache) {
  ActivationCacheOptions o;
  o.batch = kBatch;
  o.seq = kContext;
  o.precision = precisions::fp16;
  o.filter = {"blocks.*.hook_resid_post"};
  // 164 hooks of 65,536 x 1,048,576 x 65,536 at 2 B = 164 x 2^53. The full cache it is
  // compared with is past 2^64: said in a note, not an error that loses the answer.
  const Breakdown selective = estimate_activation_cache(ten_trillion(), o);
  EXPECT_EQ(checked_total(selective).count(), 1477180677777522688ULL);
  EXPECT_EQ(1477180677777522688ULL, 164ULL * kBatch * kContext * 65536 * 2);
  EXPECT_EQ(selective.components.front().note, "caching every hook would take more than 2^64 bytes");
  EXPECT_TRUE(selective.alternatives.empty());
  // Every hook: the attention pattern alone is 65,536 x 512 x 2^20 x 2^20 = 2^65 elements.
  o.filter.clear();
  expect_overflow([&] { estimate_activation_cache(ten_trillion(), o); });
}

TEST(Extreme, Attention) {
  AttentionShape s;
  s.batch = 1;
  s.heads = 512;
  s.seq = kContext;
  s.head_dim = 128;
  s.dtype = precisions::fp16;
  // sdpa: q, k, v and the output, 512 x 2^20 x 128 at 2 B each, and a fp32 log-sum-exp per row.
  EXPECT_EQ(checked_total(estimate_attention(AttentionVariant::sdpa, s)).count(),
            4ULL * 512 * kContext * 128 * 2 + 512ULL * kContext * 4);
  EXPECT_EQ(checked_total(estimate_attention(AttentionVariant::sdpa, s)).count(), 551903297536ULL);
  // eager at batch 65,536: the scores are 65,536 x 512 x 2^20 x 2^20 = 2^65 elements.
  s.batch = kBatch;
  expect_overflow([&] { estimate_attention(AttentionVariant::eager, s); });
}

TEST(Extreme, TrainingModelStates) {
  // Mixed-precision AdamW at the optimizer step: bf16 weights and gradients 2 + 2, fp32
  // master 4, m and v 4 + 4, the upcast gradient 4 = 20 B per parameter.
  TrainingShape shape;
  shape.batch = 1;
  shape.seq = 1;
  const TrainingEstimate e = estimate_training_phases(ten_trillion(), shape, TrainingOptions{});
  const auto step = std::find_if(e.phases.begin(), e.phases.end(),
                                 [](const TrainingPhase& p) { return p.name == "optimizer_step"; });
  ASSERT_NE(step, e.phases.end());
  EXPECT_EQ(step->total().count(), 20 * kParams);  // 201,090,800,025,600
  // A batch of 65,536 sequences of 2^20 tokens: the saved activations pass 2^64 bytes.
  shape.batch = kBatch;
  shape.seq = kContext;
  expect_overflow([&] { estimate_training(ten_trillion(), shape, TrainingOptions{}); });
}

TEST(Extreme, Sae) {
  // d_in 65,536, F = 8 x 65,536 = 524,288, T = 65,536 x 2^20 = 2^36 tokens, fp32, Adam:
  //   parameters 2 x 65,536 x 524,288 + 524,288 + 65,536 = 68,720,066,560 x 4 B, and as much
  //   again for gradients and twice for m and v; counters 2 x 524,288 x 4 B; store 262,144 x
  //   65,536 x 4 B; activations 4 x T x d_in + 3 x T x F at 4 B; backward 2 x T x F x 4 B.
  SaeOptions o;
  o.batch_tokens = kBatch * kContext;
  const std::uint64_t T = kBatch * kContext, d = 65536, F = 8 * d;
  EXPECT_EQ(checked_total(estimate_sae(o, d)).count(),
            4 * (2 * d * F + F + d) * 4 + 2 * F * 4 + 262144 * d * 4 + (4 * T * d + 3 * T * F) * 4 + 2 * T * F * 4);
  EXPECT_EQ(checked_total(estimate_sae(o, d)).count(), 792634702661943296ULL);
  o.batch_tokens = 1ULL << 40;
  o.expansion = 1ULL << 14;  // T x F = 2^40 x 2^30
  expect_overflow([&] { estimate_sae(o, d); });
}

TEST(Extreme, Curvature) {
  FisherBlockOptions f;
  f.blocks = 164;
  f.block_size = 65536;
  // 164 blocks of 65,536^2, gradient slices and eigenvalues 164 x 65,536 each, one reused
  // solver of 65,536^2 and 3 x 65,536 - 2 vectors, all fp32.
  EXPECT_EQ(checked_total(estimate_fisher_blocks(f)).count(),
            (164ULL * 65536 * 65536 + 2 * 164ULL * 65536 + 65536ULL * 65536 + 3 * 65536 - 2) * 4);
  EXPECT_EQ(checked_total(estimate_fisher_blocks(f)).count(), 2834765185016ULL);
  // The dense Fisher of 10^13 parameters: n^2 x 4 B is far past 2^64.
  try {
    estimate_full_curvature(kParams, precisions::fp32, "fisher", "ten-trillion", std::nullopt);
    ADD_FAILURE() << "expected Error(overflow)";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow);
    EXPECT_NE(std::string(e.what()).find("10,054,540,001,280 parameters"), std::string::npos) << e.what();
  }
  // 2^62 parameters: n^2 x 32 bits is 2^129, past 128 bits too; no exact size (it wrapped to 0).
  EXPECT_FALSE(full_curvature_size(1ULL << 62, precisions::fp32, "Hessian", "m", std::nullopt).exact.has_value());
  EXPECT_EQ(full_curvature_size(1ULL << 30, precisions::fp32, "Hessian", "m", std::nullopt).exact, Bytes(1ULL << 62));
}

TEST(Extreme, SampleGradients) {
  // 65,536 fp32 gradients of every parameter: 65,536 x 10,054,540,001,280 x 4 B.
  SampleGradientOptions o;
  EXPECT_EQ(checked_total(estimate_sample_gradients(ten_trillion(), o, kBatch)).count(), kBatch * kParams * 4);
  EXPECT_EQ(kBatch * kParams * 4, 2635737334095544320ULL);
  expect_overflow([&] { estimate_sample_gradients(ten_trillion(), o, 1ULL << 20); });
}

TEST(Extreme, Lanczos) {
  LanczosShape s;
  s.dimension = kParams;
  s.iterations = 1000;
  s.k = 20;
  // Basis (m + 1) x n, a work vector n, m + 1 projections and 2m tridiagonal entries, fp32.
  EXPECT_EQ(checked_total(estimate_lanczos(s)).count(), (1001 * kParams + kParams + 1001 + 2000) * 4);
  EXPECT_EQ(checked_total(estimate_lanczos(s)).count(), 40298596325142244ULL);
  // m = n = 2^64 - 1: m + 1 is 2^64, refused (it used to wrap to an empty basis).
  s.dimension = s.iterations = kMax;
  expect_overflow([&] { estimate_lanczos(s); });
}

TEST(Extreme, BlockEig) {
  BlockEigShape s;
  s.blocks = 164;
  s.block_size = 65536;
  EXPECT_EQ(checked_total(estimate_block_eig(s)).count(),
            (164ULL * 65536 * 65536 + 164ULL * 65536 + 65536ULL * 65536 + 3 * 65536 - 2) * 4);
  s.block_size = 1ULL << 32;  // b^2 = 2^64
  expect_overflow([&] { estimate_block_eig(s); });
}

TEST(Extreme, Representation) {
  RepresentationOptions o;
  o.samples = kBatch;
  // CKA over 165 representations of 65,536 samples x 65,536: the d x d form (3 x d^2 is
  // smaller than 165 Gram matrices of N^2), 165 x N x d + 3 x d^2 + 165^2, fp32.
  const Breakdown cka = estimate_cka(ten_trillion(), o);
  testing::expect_consistent(cka);
  EXPECT_EQ(cka.total().count(), (165ULL * 65536 * 65536 + 3ULL * 65536 * 65536 + 165 * 165) * 4);
  // 2^64 - 1 blocks: layers + 1 is refused (it wrapped to no representations at all).
  ModelSpec deep = ten_trillion();
  deep.n_layers = kMax;
  expect_overflow([&] { estimate_cka(deep, o); });
}

// Every workload kind at the edge: an exact breakdown whose parts sum to its total (checked
// in 128 bits) and that is no smaller than the same workload at batch 1, or an overflow.
// (A wrapped total would come out smaller, or its parts would not add up.)
TEST(Extreme, EveryWorkloadIsExactOrRefused) {
  std::vector<std::string> exact_at_batch_1, exact_at_the_edge, refused;  // workload kinds
  for (const std::string& name : workload_names()) {
    SCOPED_TRACE(name);
    Workload small;
    small.kind = parse_workload_kind(name);
    small.seq_len = kContext;
    small.weights.precision = precisions::bf16;
    if (small.kind == WorkloadKind::generation) {
      small.seq_len = kContext - 1;
      small.new_tokens = 1;
    }
    Workload large = small;
    large.batch = kBatch;
    Bytes base;
    try {
      base = checked_total(estimate_workload(ten_trillion(), small));
    } catch (const Error& e) {
      EXPECT_NE(e.kind(), ErrorKind::internal) << e.what();
      refused.push_back(name);
      continue;
    }
    exact_at_batch_1.push_back(name);
    try {
      const Bytes big = checked_total(estimate_workload(ten_trillion(), large));
      EXPECT_GE(big, base);
      exact_at_the_edge.push_back(name);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::overflow) << e.what();
    }
  }
  // Only the dense n x n curvature matrices are refused at batch 1 (10^13 squared); the
  // weights, a forward pass and the analyses that scale with the batch stay exact at 65,536.
  EXPECT_EQ(refused.size(), 2U);
  EXPECT_EQ(exact_at_batch_1.size(), workload_names().size() - 2);
  for (const char* kind : {"weights", "inference", "sae", "sample_gradients", "cka"}) {
    EXPECT_NE(std::find(exact_at_the_edge.begin(), exact_at_the_edge.end(), kind), exact_at_the_edge.end()) << kind;
  }
}

TEST(Extreme, GenerationTokensPastTwoToTheSixtyFourAreRefused) {
  ModelSpec s = ten_trillion();
  s.max_seq_len = kMax;
  Workload w;
  w.kind = WorkloadKind::generation;
  w.seq_len = 1ULL << 63;
  w.new_tokens = 1ULL << 63;  // prompt + generated = 2^64: it wrapped to an empty cache
  expect_overflow([&] { estimate_workload(s, w); });
}

// Inputs that once hung or exhausted memory: every hook listed for a trillion blocks, a
// range ending at 2^64 - 1 (l <= last never fails there), a product of brace ranges, and a
// long layer list deduplicated by linear search.
TEST(Extreme, HookListsAreBounded) {
  ModelSpec s = family_defaults(Family::llama);
  s.name = "deep";
  s.d_model = 64;
  s.n_heads = s.n_kv_heads = 2;
  s.d_head = 32;
  s.d_mlp = 256;
  s.vocab_size = 1000;
  s.max_seq_len = 128;
  s.n_layers = 1000000000000ULL;
  ActivationCacheOptions o;
  try {
    estimate_activation_cache(s, o);
    ADD_FAILURE() << "expected Error(invalid_input)";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_EQ(e.key(), "n_layers");
    EXPECT_NE(std::string(e.what()).find("up to 20,000,000,000,000 hooks, more than the 1,000,000"), std::string::npos)
        << e.what();
  }
  // The weights of the same model are counted in closed form, not listed.
  EXPECT_GT(count_parameters(s), 0U);
}

TEST(Extreme, RangesEndingAtTheTopOfUint64End) {
  EXPECT_EQ(parse_layer_selection("18446744073709551615"), std::vector<std::uint64_t>{kMax});
  EXPECT_EQ(parse_layer_selection("18446744073709551614-18446744073709551615"),
            (std::vector<std::uint64_t>{kMax - 1, kMax}));
  EXPECT_TRUE(hook_name_matches("blocks.{18446744073709551615-18446744073709551615}.hook_z",
                                "blocks.18446744073709551615.hook_z"));
}

TEST(Extreme, SelectionsAndPatternsHaveLimits) {
  EXPECT_EQ(parse_layer_selection("0-999999").size(), 1000000U);  // a million, deduplicated in O(n log n)
  for (const char* selection : {"0-1000000", "0-999999,1000000-1999999"}) {
    try {
      parse_layer_selection(selection);
      ADD_FAILURE() << selection;
    } catch (const Error& e) {
      EXPECT_EQ(e.key(), "layers");
      EXPECT_NE(std::string(e.what()).find("names more than 1,000,000 layers"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(hook_name_matches("blocks.{0-9999}.hook_z", "blocks.9999.hook_z"));
  // Ranges are matched as numbers, not listed: a million-name product costs nothing.
  EXPECT_TRUE(hook_name_matches("blocks.{0-99}.{0-99}.{0-99}.hook_z", "blocks.1.1.1.hook_z"));
  EXPECT_TRUE(hook_name_matches("blocks.{0-18446744073709551615}.hook_z", "blocks.18446744073709551615.hook_z"));
  EXPECT_FALSE(hook_name_matches("blocks.{0-18446744073709551615}.hook_z", "blocks.18446744073709551616.hook_z"));
  // Comma lists are: three lists of 100 would be a million alternatives.
  std::string hundred;
  for (int i = 0; i < 100; ++i) hundred += (i ? "," : "") + std::to_string(i);
  try {
    hook_name_matches("blocks.{" + hundred + "}.{" + hundred + "}.{" + hundred + "}.hook_z", "blocks.1.1.1.hook_z");
    ADD_FAILURE() << "expected Error(invalid_input)";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "activation_cache_filter");
    EXPECT_NE(std::string(e.what()).find("expands to more than 1,000 names"), std::string::npos) << e.what();
  }
  // Plain names are looked up; globs are tried one by one, so a list of them is bounded.
  EXPECT_TRUE(hook_name_matches("blocks.0.{" + hundred + "}", "blocks.0.99"));
  try {
    hook_name_matches("*.{" + hundred + ",100}*", "blocks.1.1.1.hook_z");
    ADD_FAILURE() << "expected Error(invalid_input)";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("expands to more than 100 globs and ranges"), std::string::npos) << e.what();
  }
  // The bounds hold for a whole filter, not only one pattern: 101 globs in separate entries.
  ActivationCacheOptions o;
  o.seq = 16;
  for (int i = 0; i <= 100; ++i) o.filter.push_back("*hook_resid_post" + std::string(static_cast<std::size_t>(i), '*'));
  try {
    selected_hooks(testing::gpt2(), o);
    ADD_FAILURE() << "expected Error(invalid_input)";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "activation_cache_filter");
    EXPECT_NE(std::string(e.what()).find("more than 100 globs and ranges in the filter"), std::string::npos)
        << e.what();
  }
  o.filter.resize(100);  // 100 globs are accepted: gpt2's 12 resid_post hooks
  EXPECT_EQ(selected_hooks(testing::gpt2(), o).size(), 12U);
}

}  // namespace extreme_test
}  // namespace memplan
