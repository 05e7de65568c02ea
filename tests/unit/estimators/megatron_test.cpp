#include "memplan/estimators/megatron.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "layout_fixtures.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace megatron_test {

using testing::bf16_shape;
using testing::bytes_of;
using testing::expect_all_consistent;
using testing::expect_invalid;
using testing::llama2_70b;
using testing::llama2_7b;
using testing::StateBytes;
using testing::states_of;

// A GPT-3-style layer small enough to write out (Korthikanti et al.'s setting: LayerNorm,
// 4h GeLU MLP, dropout, 16-bit eager softmax): h = 1024, a = 16, s = 512, b = 2.
ModelSpec gpt_like() {
  ModelSpec s = family_defaults(Family::gpt2);
  s.name = "gpt-like";
  s.d_model = 1024;
  s.n_layers = 2;
  s.n_heads = s.n_kv_heads = 16;
  s.d_head = 64;
  s.d_mlp = 4096;
  s.vocab_size = 1024;
  s.max_seq_len = 512;
  return s;
}

TrainingShape gpt_like_shape() {
  TrainingShape t;
  t.batch = 2;
  t.seq = 512;
  t.weights.precision = precisions::fp16;
  t.compute = precisions::fp16;
  t.flash_attention = false;
  t.softmax_fp32 = false;
  t.dropout = true;
  t.hf_unfused_ops = false;  // fused norm and GeLU kernels, as Megatron-LM and Korthikanti et al. count
  return t;
}

// ------------------------------------------------------------------- tensor parallel

TEST(TensorParallel, Llama70bShardHoldsAnEighthOfTheMatricesAndWholeNorms) {
  // vLLM-style: vocabulary padded to 64 (32000 already is), 8 KV heads over 8 ranks.
  const TensorShard shard = tensor_parallel_shard(llama2_70b(), {8, 64, true});
  EXPECT_EQ(shard.spec.n_heads, 8u);
  EXPECT_EQ(shard.spec.n_kv_heads, 1u);
  EXPECT_EQ(shard.spec.d_mlp, 3584u);
  EXPECT_EQ(shard.spec.vocab_size, 4000u);
  EXPECT_EQ(shard.kv_replicas, 1u);
  // Per rank: q 8192x1024, k and v 8192x128, o 1024x8192, gate/up/down 8192x3584 per layer,
  // 161 RMSNorm weights of 8192 (whole on every rank), token table and LM head 4000x8192.
  const std::uint64_t layer = 2 * 8192 * 1024 + 2 * 8192 * 128 + 3 * 8192 * 3584;
  const std::uint64_t params = 80 * layer + 161 * 8192 + 2 * 4000 * 8192;
  EXPECT_EQ(params, 8623235072ULL);
  EXPECT_EQ(count_parameters(shard.spec), params);
  // Eight ranks hold the model once, plus seven more copies of the replicated norms.
  EXPECT_EQ(8 * params, 68976648192ULL + 7 * 161 * 8192);
  const Item w = slice_weights(shard.spec, {}, {0, 80, true, true, false});
  EXPECT_EQ(w.bytes.count(), 2 * params);
  testing::expect_item_consistent(w);
}

TEST(TensorParallel, MegatronPadsTheVocabularyTo128TimesT) {
  const TensorShard shard = tensor_parallel_shard(llama2_70b(), {8, 128 * 8, false});
  EXPECT_EQ(shard.padded_vocab, 32768u);  // ceil(32000 / 1024) x 1024
  EXPECT_EQ(shard.spec.vocab_size, 4096u);
}

TEST(TensorParallel, FewerKvHeadsThanRanksAreReplicatedOrRefused) {
  const TensorShard shard = tensor_parallel_shard(llama2_70b(), {16, 64, true});
  EXPECT_EQ(shard.spec.n_kv_heads, 1u);
  EXPECT_EQ(shard.kv_replicas, 2u);
  EXPECT_EQ(shard.spec.n_heads, 4u);
  expect_invalid([] { tensor_parallel_shard(llama2_70b(), {16, 64, false}); }, "tensor_parallel");
  // 8 KV heads cannot be replicated evenly over 12 ranks (and 64 heads do not split 12 ways).
  expect_invalid([] { tensor_parallel_shard(llama2_70b(), {12, 64, true}); }, "tensor_parallel");
}

TEST(TensorParallel, ImpossibleSplitsAreTypedErrors) {
  expect_invalid([] { tensor_parallel_shard(llama2_70b(), {0, 1, false}); }, "tensor_parallel");
  expect_invalid([] { tensor_parallel_shard(llama2_70b(), {3, 1, false}); }, "tensor_parallel");  // 64 heads
  ModelSpec odd = testing::tiny();
  odd.n_heads = odd.n_kv_heads = 8;
  odd.d_head = 8;
  odd.d_mlp = 100;  // 100 is not divisible by 8
  expect_invalid([&] { tensor_parallel_shard(odd, {8, 1, false}); }, "tensor_parallel");
  ModelSpec vocab = testing::tiny();  // a vocabulary of 1001 rows does not split 8 ways unpadded
  vocab.n_heads = vocab.n_kv_heads = 8;
  vocab.d_head = 8;
  vocab.d_mlp = 256;
  vocab.vocab_size = 1001;
  expect_invalid([&] { tensor_parallel_shard(vocab, {8, 1, false}); }, "tensor_parallel");
  EXPECT_EQ(tensor_parallel_shard(vocab, {8, 64, false}).spec.vocab_size, 1024u / 8);  // padded to 1024
}

TEST(TensorParallel, ActivationsFollowKorthikantiTable2) {
  // Tensor parallelism without sequence parallelism: s*b*h*(10 + 24/t + 5as/(ht)) per layer.
  // s*b*h = 512*2*1024 = 1,048,576; 5as/h = 5*16*512/1024 = 40; t = 4: 10 + 6 + 10 = 26.
  const TensorShard shard = tensor_parallel_shard(gpt_like(), {4, 1, false});
  EXPECT_EQ(layer_activations(shard.spec, gpt_like_shape()).bytes.count(), 1048576ULL * 26);
}

TEST(TensorParallel, SequenceParallelSplitsTheReplicatedTerms) {
  // Korthikanti et al. with sequence parallelism: s*b*h/t*(34 + 5as/h) per layer =
  // 262,144 x 74 = 19,398,656; two layers, plus outside them the embedding dropout mask
  // (1 B) and the final-norm and LM-head inputs (2 B each): 5*s*b*h/t = 1,310,720.
  ParallelTrainingOptions par;
  par.tensor = 4;
  par.sequence_parallel = true;
  par.vocab_multiple = 1;
  const LayoutEstimate l = estimate_parallel_training(gpt_like(), gpt_like_shape(), {}, par, std::nullopt);
  ASSERT_EQ(l.devices.size(), 1u);
  const Item* activations = l.devices[0].breakdown.find("activations");
  ASSERT_NE(activations, nullptr);
  EXPECT_EQ(activations->bytes.count(), 2 * 262144ULL * 74 + 5 * 262144ULL);
  // Without it the replicated 10sbh stays whole: 2 x 26 x sbh + 5 x sbh.
  par.sequence_parallel = false;
  const LayoutEstimate whole = estimate_parallel_training(gpt_like(), gpt_like_shape(), {}, par, std::nullopt);
  EXPECT_EQ(whole.devices[0].breakdown.find("activations")->bytes.count(), 2 * 1048576ULL * 26 + 5 * 1048576ULL);
  expect_all_consistent(l);
}

// ------------------------------------------------------------------- pipeline

TEST(Pipeline, LayersPerStageWithTheRemainderAtTheEnd) {
  EXPECT_EQ(pipeline_stage_layers(80, 3), (std::vector<std::uint64_t>{26, 27, 27}));
  EXPECT_EQ(pipeline_stage_layers(32, 4), (std::vector<std::uint64_t>{8, 8, 8, 8}));
  EXPECT_EQ(pipeline_stage_layers(10, 4), (std::vector<std::uint64_t>{2, 2, 3, 3}));
  EXPECT_EQ(pipeline_stage_layers(32, 4, {7, 9, 8, 8}), (std::vector<std::uint64_t>{7, 9, 8, 8}));
  expect_invalid([] { pipeline_stage_layers(32, 0); }, "pipeline_parallel");
  expect_invalid([] { pipeline_stage_layers(4, 5); }, "pipeline_parallel");
  expect_invalid([] { pipeline_stage_layers(32, 4, {8, 8, 8}); }, "stage_layers");
  expect_invalid([] { pipeline_stage_layers(32, 4, {8, 8, 8, 9}); }, "stage_layers");
  expect_invalid([] { pipeline_stage_layers(32, 2, {32, 0}); }, "stage_layers");
}

TEST(Pipeline, OneFOneBHoldsUpToPMicroBatchesOnTheFirstStage) {
  // Narayanan et al. 2021: stage i of p holds min(p - i, m) micro-batches; GPipe all m.
  EXPECT_EQ(micro_batches_in_flight(PipelineSchedule::one_f_one_b, 4, 0, 8), 4u);
  EXPECT_EQ(micro_batches_in_flight(PipelineSchedule::one_f_one_b, 4, 3, 8), 1u);
  EXPECT_EQ(micro_batches_in_flight(PipelineSchedule::one_f_one_b, 4, 0, 2), 2u);
  EXPECT_EQ(micro_batches_in_flight(PipelineSchedule::gpipe, 4, 3, 8), 8u);
  expect_invalid([] { micro_batches_in_flight(PipelineSchedule::gpipe, 4, 0, 0); }, "micro_batches");
  EXPECT_EQ(parse_pipeline_schedule("gpipe"), PipelineSchedule::gpipe);
  expect_invalid([] { parse_pipeline_schedule("1f1f"); }, "schedule");
}

TEST(Pipeline, FirstAndLastStagesHoldTheEmbeddingsAndTheHead) {
  ParallelTrainingOptions par;
  par.pipeline = 4;
  par.micro_batches = 8;
  TrainingOptions tr;
  tr.optimizer = Optimizer::none;  // a gradient pass: weights, gradients and activations, no optimizer step
  const LayoutEstimate l = estimate_parallel_training(llama2_7b(), bf16_shape(), tr, par, std::nullopt);
  ASSERT_EQ(l.devices.size(), 4u);
  expect_all_consistent(l);
  // Llama-2-7b: one block 4*4096^2 + 3*4096*11008 + 2*4096 = 202,383,360 params; token table
  // and LM head 32000*4096 = 131,072,000 each; the final norm 4096. Megatron pads 32000 to a
  // multiple of 128: no change. bf16: 2 B per parameter.
  const std::uint64_t block = 202383360;
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "weights"), 2 * (131072000 + 8 * block));
  EXPECT_EQ(bytes_of(l.devices[1].breakdown, "weights"), 2 * (8 * block));
  EXPECT_EQ(bytes_of(l.devices[3].breakdown, "weights"), 2 * (8 * block + 4096 + 131072000));
  // One layer keeps (bf16, fused attention, s = 2048, b = 1, h = 4096, f = 11008):
  // 8 s*b*h tensors (2 norm inputs, qkv input, q, k, v, attention output, mlp input) x 2 B
  // = 134,217,728; 4 s*b*f tensors x 2 B = 180,355,072; the log-sum-exp 32*2048*4 B = 262,144.
  const std::uint64_t layer = 8ULL * 2048 * 4096 * 2 + 4ULL * 2048 * 11008 * 2 + 32ULL * 2048 * 4;
  EXPECT_EQ(layer, 314834944u);
  // 1F1B: stage 0 holds 4 micro-batches of its 8 layers, stage 3 one, plus the final norm's
  // and the LM head's inputs (2048*4096*2 B each).
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "activations"), 4 * 8 * layer);
  EXPECT_EQ(bytes_of(l.devices[3].breakdown, "activations"), 8 * layer + 2 * 16777216ULL);
  // The loss on the last stage: logits 2048x32000 in bf16, their fp32 copy and the fp32 log-softmax.
  EXPECT_EQ(bytes_of(l.devices[3].breakdown, "loss"), 2048ULL * 32000 * (2 + 4 + 4));
  EXPECT_EQ(l.devices[0].breakdown.find("loss"), nullptr);
  EXPECT_EQ(l.devices[0].count, 1u);
  EXPECT_EQ(l.world_size, 4u);
}

// ------------------------------------------------------------------- combined

TEST(Combined, Llama70bOverTensorPipelineAndData) {
  // t = 8, p = 4 (20 layers each), d = 2 with Megatron's distributed optimizer (ZeRO-1) and
  // fp32 gradients (Megatron's main_grad): 2 + 4 + 12/2 = 12 B per parameter of the shard.
  ParallelTrainingOptions par;
  par.tensor = 8;
  par.pipeline = 4;
  par.data = 2;
  par.sharding = Sharding::zero1;
  par.micro_batches = 16;
  par.sequence_parallel = true;
  TrainingOptions tr;
  tr.grad_precision = precisions::fp32;
  tr.recompute = Recompute::selective;
  const LayoutEstimate l = estimate_parallel_training(llama2_70b(), bf16_shape(4096), tr, par, std::nullopt);
  ASSERT_EQ(l.devices.size(), 4u);
  EXPECT_EQ(l.world_size, 64u);
  EXPECT_EQ(l.devices[0].count, 16u);
  // Stage 0 on one rank: the token table padded to 32768 rows (128 x 8), 4096 of them here,
  // and 20 blocks of 2*8192*1024 + 2*8192*128 + 3*8192*3584 + 2*8192 = 106,971,136 params.
  const std::uint64_t psi0 = 4096ULL * 8192 + 20ULL * 106971136;
  EXPECT_EQ(psi0, 2172977152ULL);
  const StateBytes s0 = states_of(l.devices[0].breakdown);
  EXPECT_EQ(s0.weights, 2 * psi0);
  EXPECT_EQ(s0.gradients, 4 * psi0);
  EXPECT_EQ(s0.master + s0.states, 12 * (psi0 / 2));
  EXPECT_EQ(s0.weights + s0.gradients + s0.master + s0.states, 12 * psi0);  // Megatron: 6 + 12/d
  expect_all_consistent(l);
}

TEST(Combined, MegatronDefaultsToItsOwnGradientAndSoftmaxDtypes) {
  // Llama-2-7b at t = 2, the gradient dtype unset. Per rank: 32 layers of half the attention
  // (4 x 4096^2 / 2) and MLP (3 x 4096 x 11008 / 2) and both norms (2 x 4096), 101,195,776
  // each; half the token table and of the head (32,000 rows, already a multiple of 128 x 2);
  // the final norm: 3,369,340,928.
  ParallelTrainingOptions par;
  par.tensor = 2;
  TrainingOptions tr;
  const std::uint64_t psi = 32ULL * (4ULL * 4096 * 4096 / 2 + 3ULL * 4096 * 11008 / 2 + 2 * 4096) +
                            2ULL * (32000 / 2) * 4096 + 4096;
  EXPECT_EQ(psi, 3369340928ULL);
  // bf16 weights: fp32 main_grad, 4 B per parameter (Megatron-LM's arguments.py).
  const StateBytes bf16 = states_of(
      estimate_parallel_training(llama2_7b(), bf16_shape(1024), tr, par, std::nullopt).devices[0].breakdown);
  EXPECT_EQ(bf16.gradients, 4 * psi);
  // fp16 weights keep fp16 gradients, and a dtype given wins.
  TrainingShape fp16 = bf16_shape(1024);
  fp16.weights.precision = fp16.compute = precisions::fp16;
  EXPECT_EQ(
      states_of(estimate_parallel_training(llama2_7b(), fp16, tr, par, std::nullopt).devices[0].breakdown).gradients,
      2 * psi);
  tr.grad_precision = precisions::bf16;
  EXPECT_EQ(states_of(
                estimate_parallel_training(llama2_7b(), bf16_shape(1024), tr, par, std::nullopt).devices[0].breakdown)
                .gradients,
            2 * psi);
  // Its fused softmax keeps 16-bit probabilities: eager attention asked as Hugging Face runs it
  // (fp32 softmax and a 16-bit copy) prices the same as Korthikanti's 16-bit softmax.
  TrainingShape hf_eager = bf16_shape(1024), megatron_eager = bf16_shape(1024);
  hf_eager.flash_attention = megatron_eager.flash_attention = false;
  hf_eager.softmax_fp32 = true;
  EXPECT_EQ(
      estimate_parallel_training(llama2_7b(), hf_eager, tr, par, std::nullopt).devices[0].breakdown.total(),
      estimate_parallel_training(llama2_7b(), megatron_eager, tr, par, std::nullopt).devices[0].breakdown.total());
}

TEST(Combined, MoreMicroBatchesNeverCostLess) {
  ParallelTrainingOptions par;
  par.pipeline = 4;
  std::uint64_t previous = 0;
  for (std::uint64_t m = 1; m <= 6; ++m) {
    par.micro_batches = m;
    const std::uint64_t total = estimate_parallel_training(llama2_7b(), bf16_shape(), {}, par, std::nullopt)
                                    .devices[0]
                                    .breakdown.total()
                                    .count();
    EXPECT_GE(total, previous) << m;
    previous = total;
  }
}

TEST(Combined, ImpossibleLayoutsAreTypedErrors) {
  const auto run = [](ParallelTrainingOptions par, TrainingOptions tr = {}, TrainingShape shape = bf16_shape()) {
    estimate_parallel_training(llama2_7b(), shape, tr, par, std::nullopt);
  };
  ParallelTrainingOptions p;
  p.pipeline = 2;
  p.data = 2;
  p.sharding = Sharding::zero3;
  expect_invalid([&] { run(p); }, "pipeline_parallel");
  p = {};
  p.offload_optimizer = true;
  expect_invalid([&] { run(p); }, "offload");
  p.sharding = Sharding::fsdp_full;
  expect_invalid([&] { run(p); }, "offload");
  p = {};
  p.sharding = Sharding::zero2;
  p.offload_params = true;
  expect_invalid([&] { run(p); }, "offload");
  p = {};
  p.data = 8;
  p.sharding = Sharding::fsdp_hybrid;
  expect_invalid([&] { run(p); }, "shard_group");
  p.shard_group = 3;
  expect_invalid([&] { run(p); }, "shard_group");
  p = {};
  p.sequence_parallel = true;
  expect_invalid([&] { run(p); }, "sequence_parallel");
  p.tensor = 4;
  expect_invalid([&] { run(p, {}, bf16_shape(2050)); }, "sequence_parallel");  // 2050 not divisible by 4
  p = {};
  p.pipeline = 33;
  expect_invalid([&] { run(p); }, "pipeline_parallel");
  p = {};
  p.data = 0;
  expect_invalid([&] { run(p); }, "data_parallel");
  TrainingOptions lora;
  lora.lora.rank = 8;
  expect_invalid([&] { run({}, lora); }, "lora_rank");
  TrainingOptions adam8;
  adam8.optimizer = Optimizer::adam_8bit;
  expect_invalid([&] { run({}, adam8); }, "optimizer");
  TrainingShape int4 = bf16_shape();
  int4.weights.precision = parse_precision("int4");
  expect_invalid([&] { run({}, {}, int4); }, "precision");
  expect_invalid([] { parse_sharding("zero4"); }, "sharding");
}

}  // namespace megatron_test
}  // namespace memplan
