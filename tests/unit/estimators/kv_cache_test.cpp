#include "memplan/estimators/kv_cache.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace kv_cache_test {

ModelSpec decoder(std::uint64_t layers, std::uint64_t heads, std::uint64_t kv_heads, std::uint64_t d_head) {
  ModelSpec s = family_defaults(Family::llama);
  s.n_layers = layers;
  s.n_heads = heads;
  s.n_kv_heads = kv_heads;
  s.d_head = d_head;
  s.d_model = heads * d_head;
  s.d_mlp = 4 * s.d_model;
  s.vocab_size = 32000;
  s.max_seq_len = 4096;
  return s;
}

Bytes kv(const ModelSpec& s, KvCacheOptions o) {
  const Breakdown b = estimate_kv_cache(s, o);
  testing::expect_consistent(b);
  return b.total();
}

TEST(KvCache, Llama2_7bFp16At2048TokensIsOneGiB) {
  // 2 x 32 layers x 32 kv_heads x 128 x 2048 tokens x 1 x 2 B = 1,073,741,824 = 1 GiB.
  EXPECT_EQ(kv(decoder(32, 32, 32, 128), {1, 2048, precisions::fp16}).count(), 1073741824ULL);
}

TEST(KvCache, Llama3_8bGqaIsAQuarter) {
  // 8 kv heads instead of 32: 2 x 32 x 8 x 128 x 2048 x 2 B = 268,435,456 = 256 MiB.
  EXPECT_EQ(kv(decoder(32, 32, 8, 128), {1, 2048, precisions::fp16}).count(), 268435456ULL);
}

TEST(KvCache, SlidingWindowCapsTheTokens) {
  ModelSpec mistral = decoder(32, 32, 8, 128);
  mistral.sliding_window = 4096;
  // 32k tokens held as 4096: 2 x 32 x 8 x 128 x 4096 x 2 B = 536,870,912.
  EXPECT_EQ(kv(mistral, {1, 32768, precisions::bf16}).count(), 536870912ULL);
  KvCacheOptions full{1, 32768, precisions::bf16};
  full.honor_sliding_window = false;
  EXPECT_EQ(kv(mistral, full).count(), 8ULL * 536870912ULL);
}

TEST(KvCache, PagesRoundUpPerSequence) {
  KvCacheOptions o{2, 1000, precisions::fp16};
  o.page_tokens = 16;  // 1000 tokens -> 63 pages = 1008 tokens
  // 2 x 2 layers x 4 kv_heads x 64 x 1008 x 2 batch x 2 B = 8,257,536.
  EXPECT_EQ(kv(decoder(2, 8, 4, 64), o).count(), 2ULL * 2 * 4 * 64 * 1008 * 2 * 2);
}

TEST(KvCache, QuantisedCacheCountsItsScales) {
  // int8 with one fp32 scale per (token, head) row of 128:
  // per side per layer: 2048 x 32 rows x (128 x 8 + 32) bits / 8 = 8,650,752 B.
  KvCacheOptions o{1, 2048, parse_precision("int8")};
  EXPECT_EQ(kv(decoder(32, 32, 32, 128), o).count(), 2ULL * 32 * (2048ULL * 32 * (128 * 8 + 32) / 8));
  o.precision = parse_precision("fp8");
  EXPECT_EQ(kv(decoder(32, 32, 32, 128), o).count(), 1073741824ULL / 2);
}

TEST(KvCache, MoreTokensOrBatchNeverCostLess) {
  const ModelSpec s = decoder(4, 8, 2, 64);
  Bytes previous;
  for (std::uint64_t tokens : {1U, 7U, 512U, 4096U, 100000U}) {
    for (std::uint64_t batch : {1U, 3U}) {
      const Bytes now = kv(s, {batch, tokens, precisions::bf16});
      if (batch == 1) {
        EXPECT_GT(now, previous);
      } else {
        EXPECT_GT(now, previous) << "batch 3 costs more than batch 1";
      }
      previous = now;
    }
  }
}

TEST(KvCache, ExtremeButValidSizesAreExact) {
  // Llama-2-70B shapes, a million-token context (2^20), batch 65,536 (2^16), fp16:
  // per side per layer 2^16 x 2^20 x 8 kv_heads x 128 x 2 B = 2^47 B; x 80 layers x 2 sides.
  EXPECT_EQ(kv(decoder(80, 64, 8, 128), {65536, 1ULL << 20, precisions::fp16}).count(), 160ULL << 47);
}

TEST(KvCache, OverflowIsAnErrorNotAWrappedNumber) {
  try {
    estimate_kv_cache(decoder(1ULL << 20, 1024, 1024, 1024), {65536, 1ULL << 20, precisions::fp16});
    ADD_FAILURE() << "no overflow reported";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::overflow);
  }
}

}  // namespace kv_cache_test
}  // namespace memplan
