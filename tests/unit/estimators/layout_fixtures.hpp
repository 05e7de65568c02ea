// Fixtures the multi-GPU layout tests share (megatron_test, sharding_test, serving_test,
// placement_test): reference models, training shapes and checks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"
#include "memplan/estimators/layout_estimate.hpp"
#include "memplan/estimators/training.hpp"

namespace memplan::testing {

// meta-llama/Llama-2-70b-hf config.json: hidden 8192, 80 layers, 64 heads, 8 KV heads,
// intermediate 28672, vocabulary 32000, 4096 positions; 68,976,648,192 parameters.
inline ModelSpec llama2_70b() {
  ModelSpec s = family_defaults(Family::llama);
  s.name = "llama-2-70b";
  s.d_model = 8192;
  s.n_layers = 80;
  s.n_heads = 64;
  s.n_kv_heads = 8;
  s.d_head = 128;
  s.d_mlp = 28672;
  s.vocab_size = 32000;
  s.max_seq_len = 4096;
  return s;
}

inline TrainingShape bf16_shape(std::uint64_t seq = 2048) {
  TrainingShape t;
  t.batch = 1;
  t.seq = seq;
  t.weights.precision = precisions::bf16;
  t.compute = precisions::bf16;
  return t;
}

inline std::uint64_t bytes_of(const Breakdown& b, const std::string& name) {
  const Item* item = b.find(name);
  EXPECT_NE(item, nullptr) << "no component " << name;
  return item == nullptr ? 0 : item->bytes.count();
}

inline void expect_all_consistent(const LayoutEstimate& layout) {
  for (const DeviceMemory& d : layout.devices) {
    SCOPED_TRACE(d.role);
    expect_consistent(d.breakdown);
  }
}

// The training state rows of a device, 0 for those it lacks.
struct StateBytes {
  std::uint64_t weights, gradients, master, states;
};

inline StateBytes states_of(const Breakdown& b) {
  const auto get = [&](const char* name) {
    const Item* i = b.find(name);
    return i ? i->bytes.count() : 0;
  };
  return {get("weights"), get("gradients"), get("master_weights"), get("optimizer_states")};
}

template <typename F>
void expect_invalid(F&& f, const std::string& key) {
  try {
    f();
    ADD_FAILURE() << "expected Error(invalid_input, " << key << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_input);
    EXPECT_EQ(e.key(), key) << e.what();
  }
}

}  // namespace memplan::testing
