#include "memplan/estimators/weights.hpp"

#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"

namespace memplan {
namespace weights_test {

using testing::llama2_7b;

Bytes weights_of(const ModelSpec& s, const std::string& precision) {
  WeightsOptions o;
  o.precision = parse_precision(precision);
  const Breakdown b = estimate_weights(s, o);
  testing::expect_consistent(b);
  return b.total();
}

TEST(Weights, Llama2_7bIn16Bit) {
  // 6,738,415,616 params x 2 bytes.
  EXPECT_EQ(weights_of(llama2_7b(), "bf16").count(), 13476831232ULL);
  EXPECT_EQ(weights_of(llama2_7b(), "fp16").count(), 13476831232ULL);
  EXPECT_EQ(weights_of(llama2_7b(), "fp32").count(), 26953662464ULL);
  EXPECT_EQ(weights_of(llama2_7b(), "tf32").count(), 26953662464ULL);
}

TEST(Weights, Llama2_7bInt4QuantisesLinearLayersOnly) {
  // Per layer, int4-g128 with fp16 scales:
  //   q, k, v, o: 4096x4096 -> (4096*4096*4 + 4096*32*16) / 8 = 8,650,752 bytes each
  //   gate, up:  11008 rows x 4096 -> (11008*4096*4 + 11008*32*16) / 8 = 23,248,896 bytes each
  //   down:      4096 rows x 11008 -> (4096*11008*4 + 4096*86*16) / 8 = 23,248,896 bytes
  //   = 4*8,650,752 + 3*23,248,896 = 104,349,696; x 32 layers = 3,339,190,272.
  // fp16 for the rest: embeddings 262,144,000 + lm_head 262,144,000 + norms 65*4096*2 = 532,480.
  EXPECT_EQ(weights_of(llama2_7b(), "int4").count(), 3339190272ULL + 262144000ULL + 262144000ULL + 532480ULL);
}

TEST(Weights, QuantisingTheLmHeadIsAChoice) {
  WeightsOptions o;
  o.precision = parse_precision("int8");
  const Bytes kept = estimate_weights(llama2_7b(), o).total();
  o.quantize_lm_head = true;
  const Bytes quantised = estimate_weights(llama2_7b(), o).total();
  // lm_head 32000x4096: fp16 = 262,144,000 bytes; int8 = 131,072,000 + 32000 fp32 row scales = 128,000.
  EXPECT_EQ(kept.count() - quantised.count(), 262144000ULL - 131072000ULL - 128000ULL);
}

TEST(Weights, BreakdownRowsCarryParamsAndStayConsistent) {
  const Breakdown b = estimate_weights(llama2_7b(), {});
  testing::expect_consistent(b);
  ASSERT_EQ(b.components.size(), 1U);
  const Item& w = b.components.front();
  EXPECT_EQ(w.name, "weights");
  EXPECT_EQ(*w.params, 6738415616ULL);
  std::vector<std::string> names;
  for (const Item& d : w.detail) names.push_back(d.name);
  EXPECT_EQ(names, (std::vector<std::string>{"embeddings", "attention", "mlp", "norms", "lm_head"}));
}

TEST(Weights, TiedHeadShowsAsAZeroRow) {
  ModelSpec s = llama2_7b();
  s.lm_head = LmHead::tied;
  const Breakdown b = estimate_weights(s, {});
  testing::expect_consistent(b);
  EXPECT_EQ(b.total().count(), 2ULL * (6738415616ULL - 32000ULL * 4096));
  EXPECT_FALSE(b.components.front().detail.back().note.empty());
}

TEST(Weights, LowerPrecisionNeverCostsMore) {
  // Chains ordered by bits per weight, scales included.
  for (const auto& chain : std::vector<std::vector<std::string>>{{"fp32", "bf16", "fp8", "int4-g128-zp", "int4"},
                                                                 {"fp32", "fp16", "int8", "nf4", "nf4-dq"},
                                                                 {"int4-g32", "int4-g64", "int4-g128"}}) {
    Bytes previous(UINT64_MAX);
    for (const std::string& p : chain) {
      const Bytes now = weights_of(llama2_7b(), p);
      EXPECT_LE(now, previous) << p;
      previous = now;
    }
  }
}

TEST(Weights, MoreLayersNeverCostLess) {
  ModelSpec s = llama2_7b();
  Bytes previous;
  for (std::uint64_t layers : {1U, 2U, 16U, 32U, 80U}) {
    s.n_layers = layers;
    const Bytes now = weights_of(s, "int4");
    EXPECT_GT(now, previous);
    previous = now;
  }
}

TEST(Weights, OverflowIsAnErrorNotAWrappedNumber) {
  ModelSpec s = llama2_7b();
  s.d_model = 1ULL << 40;
  s.d_head = (1ULL << 40) / 32;
  s.d_mlp = 1ULL << 40;
  try {
    estimate_weights(s, {});
    ADD_FAILURE() << "no overflow reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow);
  }
}

}  // namespace weights_test
}  // namespace memplan
