#include "memplan/estimators/representation.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace representation_test {

// TensorScope's example shapes: a 50k vocabulary and a 4,096-wide model of 32 layers.
ModelSpec wide() {
  ModelSpec s = family_defaults(Family::llama);
  s.name = "wide";
  s.d_model = 4096;
  s.n_layers = 32;
  s.n_heads = s.n_kv_heads = 32;
  s.d_head = 128;
  s.d_mlp = 11008;
  s.vocab_size = 50000;
  s.max_seq_len = 4096;
  return s;
}

std::uint64_t total(const Breakdown& b) {
  testing::expect_consistent(b);
  return b.total().count();
}

TEST(Representation, EmbeddingSingularities) {
  // TensorScope: "~1GB for 50k vocab, 4096 dim". Embedding 50,000 x 4,096 x 4 = 819,200,000;
  // distances 1,024 x 50,000 x 4 = 204,800,000; neighbours 1,024 x 100 x 4 = 409,600 and
  // x 8 = 819,200; neighbourhood 100 x 4,096 x 4 = 1,638,400; Gram 100^2 x 4 = 40,000;
  // its eigendecomposition: eigenvalues 400, solver copy 40,000, vectors 298 x 4 = 1,192.
  EXPECT_EQ(total(estimate_embedding_singularities(wide(), {})),
            819200000ULL + 204800000ULL + 409600ULL + 819200ULL + 1638400ULL + 40000ULL + 400ULL + 40000ULL + 1192ULL);
}

TEST(Representation, FiberBundle) {
  // TensorScope: "~2GB for 1000 samples, 4096 dim". Points 16,384,000; distances 4,000,000;
  // neighbourhood 1,638,400; the d x d covariance 67,108,864 and its eigendecomposition
  // (eigenvalues 16,384, copy 67,108,864, vectors 12,286 x 4 = 49,144): 156,305,656 B.
  EXPECT_EQ(total(estimate_fiber_bundle(wide(), {})), 156305656ULL);
}

TEST(Representation, Superposition) {
  // N = 1,000, F = 8 x 4,096 = 32,768: activations 16,384,000, directions 536,870,912,
  // feature activations 131,072,000; the F x F overlap would add 4,294,967,296.
  const Breakdown b = estimate_superposition(wide(), {});
  EXPECT_EQ(total(b), 684326912ULL);
  ASSERT_EQ(b.alternatives.size(), 1U);
  EXPECT_EQ(b.alternatives.front().item.bytes.count(), 684326912ULL + 4294967296ULL);
}

TEST(Representation, LinearCkaPicksTheCheaperForm) {
  // 33 layer boundaries x 1,000 x 4,096 x 4 = 540,672,000; Grams 33 x 1,000^2 x 4 =
  // 132,000,000 beat 3 x 4,096^2 x 4 = 201,326,592; similarity 33^2 x 4 = 4,356.
  const Breakdown b = estimate_cka(wide(), {});
  EXPECT_EQ(total(b), 540672000ULL + 132000000ULL + 4356ULL);
  EXPECT_EQ(b.alternatives.front().item.bytes.count(), 540672000ULL + 201326592ULL + 4356ULL);
}

TEST(Representation, MoreSamplesNeverCostLess) {
  RepresentationOptions o;
  std::uint64_t previous[4] = {0, 0, 0, 0};
  for (std::uint64_t n = 16; n <= 8192; n *= 2) {
    o.samples = n;
    const std::uint64_t now[4] = {total(estimate_embedding_singularities(wide(), o)),
                                  total(estimate_fiber_bundle(wide(), o)), total(estimate_superposition(wide(), o)),
                                  total(estimate_cka(wide(), o))};
    for (int i = 0; i < 4; ++i) {
      EXPECT_GE(now[i], previous[i]);
      previous[i] = now[i];
    }
  }
  o.samples = 0;
  EXPECT_THROW(estimate_cka(wide(), o), Error);
}

}  // namespace representation_test
}  // namespace memplan
