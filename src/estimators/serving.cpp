#include "memplan/estimators/serving.hpp"

#include <algorithm>
#include <cmath>

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

}  // namespace memplan
