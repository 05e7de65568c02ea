#include "memplan/estimators/serving.hpp"

#include <algorithm>
#include <cmath>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"

namespace memplan {

ServingCapacity vllm_kv_capacity(Bytes capacity, double utilization, Bytes non_kv, Bytes block_bytes,
                                 std::uint64_t block_size, std::uint64_t max_model_len, std::optional<Bytes> given) {
  if (!(utilization > 0.0 && utilization <= 1.0)) {
    throw Error(ErrorKind::invalid_input, "`gpu_memory_utilization` must be above 0 and at most 1",
                "gpu_memory_utilization");
  }
  if (block_size == 0) {
    throw Error(ErrorKind::invalid_input, "the KV cache block size must be at least 1 token", "block_size");
  }
  if (block_bytes.count() == 0) throw Error(ErrorKind::invalid_input, "a KV cache block of 0 bytes", "block_size");
  ServingCapacity out;
  out.capacity = capacity;
  out.gpu_memory_utilization = utilization;
  // vllm/v1/worker/utils.py request_memory: math.ceil(total_gpu_memory * gpu_memory_utilization),
  // in Python's double arithmetic (capacities are below 2^53, so the conversion is exact).
  const double requested = std::ceil(static_cast<double>(capacity.count()) * utilization);
  out.requested = Bytes(std::min<std::uint64_t>(static_cast<std::uint64_t>(requested), capacity.count()));
  out.non_kv = non_kv;
  if (given) {
    // kv_cache_memory_bytes: vLLM reserves that much and skips the profile's budget
    // (gpu_worker.py determine_available_memory).
    out.kv_budget = *given;
    out.kv_given = true;
  } else if (out.requested > non_kv) {
    out.kv_budget = Bytes(out.requested.count() - non_kv.count());
  } else {
    out.shortfall = Bytes(non_kv.count() - out.requested.count());
  }
  out.block_bytes = block_bytes;
  out.block_size = block_size;
  out.blocks = out.kv_budget.count() / block_bytes.count();
  out.tokens = checked_mul(out.blocks, block_size, "KV cache tokens");
  out.max_model_len = max_model_len;
  out.full_sequences = max_model_len > 0 ? out.tokens / max_model_len : 0;
  return out;
}

double ServingCapacity::concurrency() const {
  if (per_request_blocks > 0) return static_cast<double>(blocks) / static_cast<double>(per_request_blocks);
  return max_model_len > 0 ? static_cast<double>(tokens) / static_cast<double>(max_model_len) : 0.0;
}

std::uint64_t ServingCapacity::logged_tokens() const {
  // Python's int(num_blocks / blocks_per_request * max_model_len), in the same double arithmetic.
  return concurrency_tokens ? static_cast<std::uint64_t>(concurrency() * static_cast<double>(max_model_len)) : tokens;
}

ServingCapacity vllm_state_space_capacity(Bytes capacity, double utilization, Bytes non_kv,
                                          const VllmLayerPages& layers, std::uint64_t block_size,
                                          std::uint64_t max_model_len, std::optional<Bytes> given) {
  const std::uint64_t A = layers.attention_layers, M = layers.mamba_layers;
  if (M == 0 || layers.state_bytes.count() == 0) {
    throw Error(ErrorKind::invalid_input, "a KV cache of Mamba layers needs at least one", "engine");
  }
  if (block_size == 0) {
    throw Error(ErrorKind::invalid_input, "the KV cache block size must be at least 1 token", "block_size");
  }
  const std::uint64_t state = layers.state_bytes.count(), token = layers.token_bytes.count();
  std::uint64_t page = state, group = M, attention_groups = 0, mamba_groups = 1;
  if (A > 0) {
    if (token == 0) throw Error(ErrorKind::invalid_input, "an attention layer of 0 bytes a token", "block_size");
    // config.py HybridAttentionMambaModelConfig: the attention block in multiples of 16 tokens
    // (the kernels' alignment) until a layer's page holds the state; the state padded to it.
    constexpr std::uint64_t kAlign = 16;
    block_size = std::max(block_size, kAlign * ceil_div(state, checked_mul(kAlign, token, "page")));
    page = checked_mul(block_size, token, "page");
    // kv_cache_utils.py _get_kv_cache_groups_uniform_page_size.
    const std::uint64_t fewer = std::min(A, M), more = std::max(A, M);
    group = static_cast<double>(more) < 1.5 * static_cast<double>(fewer) ? more : fewer;
    attention_groups = ceil_div(A, group);
    mamba_groups = ceil_div(M, group);
  }
  // A block id costs a page in every layer of a group: the pool's tensors are shared by groups.
  ServingCapacity out = vllm_kv_capacity(capacity, utilization, non_kv, Bytes(checked_mul(page, group, "KV block")),
                                         block_size, max_model_len, given);
  out.kv_groups = attention_groups + mamba_groups;
  out.group_layers = group;
  out.state_bytes = layers.state_bytes;
  if (A == 0) {
    // One group of every Mamba layer, a block a request, logged as max_model_len tokens.
    out.block_size = max_model_len;
    out.per_request_blocks = 1;
    out.tokens = checked_mul(out.blocks, max_model_len, "KV cache tokens");
  } else {
    out.per_request_blocks = checked_add(checked_mul(attention_groups, ceil_div(max_model_len, block_size), "c"),
                                         checked_mul(mamba_groups, layers.state_blocks, "KV blocks a request"),
                                         "KV blocks a request");
    out.tokens = checked_mul(out.blocks / out.kv_groups, block_size, "KV cache tokens");
  }
  out.full_sequences = out.blocks / out.per_request_blocks;
  return out;
}

ServingCapacity vllm_sliding_capacity(Bytes capacity, double utilization, Bytes non_kv,
                                      const VllmAttentionPages& layers, std::uint64_t block_size,
                                      std::uint64_t max_model_len, bool concurrency_tokens,
                                      std::optional<Bytes> given) {
  const std::uint64_t F = layers.full_layers, W = layers.sliding_layers;
  if (F == 0 || W == 0 || layers.window == 0 || layers.full_token_bytes.count() == 0 ||
      layers.sliding_token_bytes.count() == 0) {
    throw Error(ErrorKind::invalid_input, "a hybrid KV cache needs full-attention and sliding-window layers", "engine");
  }
  if (block_size == 0) {
    throw Error(ErrorKind::invalid_input, "the KV cache block size must be at least 1 token", "block_size");
  }
  // unify_kv_cache_spec_page_size: the smaller page's block grows by the pages' ratio where it
  // is whole; otherwise its page is padded to the larger.
  const std::uint64_t full_page = checked_mul(block_size, layers.full_token_bytes.count(), "page");
  const std::uint64_t sliding_page = checked_mul(block_size, layers.sliding_token_bytes.count(), "page");
  const std::uint64_t page = std::max(full_page, sliding_page);
  const auto grown = [&](std::uint64_t own) {
    return page % own == 0 ? checked_mul(block_size, page / own, "block size") : block_size;
  };
  const std::uint64_t full_block = grown(full_page), sliding_block = grown(sliding_page);
  // _get_kv_cache_groups_uniform_page_size, as for Mamba layers.
  const std::uint64_t fewer = std::min(F, W), more = std::max(F, W);
  const std::uint64_t group = static_cast<double>(more) < 1.5 * static_cast<double>(fewer) ? more : fewer;
  const std::uint64_t full_groups = ceil_div(F, group), sliding_groups = ceil_div(W, group);
  ServingCapacity out = vllm_kv_capacity(capacity, utilization, non_kv, Bytes(checked_mul(page, group, "KV block")),
                                         std::min(full_block, sliding_block), max_model_len, given);
  out.kv_groups = full_groups + sliding_groups;
  out.group_layers = group;
  // FullAttentionSpec and SlidingWindowSpec.max_memory_usage_bytes over the page.
  const std::uint64_t window_tokens = std::min(checked_add(layers.window - 1, layers.in_flight_tokens, "window tokens"),
                                               max_model_len);
  out.per_request_blocks = checked_add(
      checked_mul(full_groups, ceil_div(max_model_len, full_block), "KV blocks a request"),
      checked_mul(sliding_groups, ceil_div(window_tokens, sliding_block) + 1, "KV blocks a request"),
      "KV blocks a request");
  out.tokens = checked_mul(out.blocks / out.kv_groups, out.block_size, "KV cache tokens");
  out.full_sequences = out.blocks / out.per_request_blocks;
  out.concurrency_tokens = concurrency_tokens;
  return out;
}

}  // namespace memplan
