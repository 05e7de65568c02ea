#include "memplan/estimators/parallelism.hpp"

#include <gtest/gtest.h>

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "reference_models.hpp"

namespace memplan {
namespace {

using testing::llama2_7b;

// meta-llama/Llama-2-70b-hf config.json: hidden 8192, 80 layers, 64 heads, 8 KV heads,
// intermediate 28672, vocabulary 32000, 4096 positions; 68,976,648,192 parameters.
ModelSpec llama2_70b() {
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

TrainingShape bf16_shape(std::uint64_t seq = 2048) {
  TrainingShape t;
  t.batch = 1;
  t.seq = seq;
  t.weights.precision = precisions::bf16;
  t.compute = precisions::bf16;
  return t;
}

std::uint64_t bytes_of(const Breakdown& b, const std::string& name) {
  const Item* item = b.find(name);
  EXPECT_NE(item, nullptr) << "no component " << name;
  return item == nullptr ? 0 : item->bytes.count();
}

void expect_all_consistent(const LayoutEstimate& layout) {
  for (const DeviceMemory& d : layout.devices) {
    SCOPED_TRACE(d.role);
    testing::expect_consistent(d.breakdown);
  }
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

// ------------------------------------------------------------------- data parallel

struct StateBytes {
  std::uint64_t weights, gradients, master, states;
};

StateBytes states_of(const Breakdown& b) {
  const auto get = [&](const char* name) {
    const Item* i = b.find(name);
    return i ? i->bytes.count() : 0;
  };
  return {get("weights"), get("gradients"), get("master_weights"), get("optimizer_states")};
}

LayoutEstimate data_parallel(Sharding sharding, std::uint64_t d = 8) {
  ParallelTrainingOptions par;
  par.data = d;
  par.sharding = sharding;
  return estimate_parallel_training(llama2_7b(), bf16_shape(), {}, par, std::nullopt);
}

constexpr std::uint64_t kPsi = 6738415616ULL;  // Llama-2-7b
constexpr std::uint64_t kPart = kPsi / 8;      // 842,301,952: divides exactly
constexpr std::uint64_t kBucket = 500000000ULL * 2;

TEST(DataParallel, ZeroStagesFollowRajbhandariFigure1) {
  // Adam in mixed precision, Psi parameters, N = 8 ranks, K = 12 (fp32 master + two states).
  const StateBytes ddp = states_of(data_parallel(Sharding::none).devices[0].breakdown);
  EXPECT_EQ(ddp.weights + ddp.gradients + ddp.master + ddp.states, 16 * kPsi);  // (2 + 2 + K) Psi

  const StateBytes z1 = states_of(data_parallel(Sharding::zero1).devices[0].breakdown);
  EXPECT_EQ(z1.weights, 2 * kPsi);
  EXPECT_EQ(z1.gradients, 2 * kPsi);
  EXPECT_EQ(z1.master + z1.states, 12 * kPart);  // 2Psi + 2Psi + K Psi / N

  const StateBytes z2 = states_of(data_parallel(Sharding::zero2).devices[0].breakdown);
  EXPECT_EQ(z2.weights, 2 * kPsi);
  EXPECT_EQ(z2.gradients, 2 * kPart + kBucket);  // 2Psi/N and DeepSpeed's reduce bucket (5e8 x 2 B)
  EXPECT_EQ(z2.master + z2.states, 12 * kPart);

  const LayoutEstimate z3l = data_parallel(Sharding::zero3);
  const StateBytes z3 = states_of(z3l.devices[0].breakdown);
  EXPECT_EQ(z3.weights + (z3.gradients - kBucket) + z3.master + z3.states, 16 * kPart);  // 16 Psi / N
  // The largest module gathered with its gradient: the token table 32000 x 4096, 4 B each.
  EXPECT_EQ(bytes_of(z3l.devices[0].breakdown, "gathered_parameters"), 32000ULL * 4096 * 4);
  expect_all_consistent(z3l);
}

TEST(DataParallel, MatchesTheSingleGpuTrainingEstimatorWithoutSharding) {
  // One GPU, no sharding: the state rows are the training estimator's, byte for byte.
  const LayoutEstimate l = data_parallel(Sharding::none, 1);
  const Breakdown single = estimate_training(llama2_7b(), bf16_shape(), {});
  for (const char* name : {"weights", "master_weights", "optimizer_states"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(bytes_of(l.devices[0].breakdown, name), bytes_of(single, name));
  }
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "weights"), 2 * kPsi);
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "master_weights"), 4 * kPsi);
  EXPECT_EQ(bytes_of(l.devices[0].breakdown, "optimizer_states"), 8 * kPsi);
}

TEST(DataParallel, OptimizerOffloadMovesTheStatesToTheHost) {
  ParallelTrainingOptions par;
  par.data = 8;
  par.sharding = Sharding::zero2;
  par.offload_optimizer = true;
  const LayoutEstimate l = estimate_parallel_training(llama2_7b(), bf16_shape(), {}, par, std::nullopt);
  const Breakdown& b = l.devices[0].breakdown;
  EXPECT_EQ(b.find("master_weights"), nullptr);
  EXPECT_EQ(b.find("optimizer_states"), nullptr);
  EXPECT_EQ(bytes_of(b, "gradients"), kBucket);  // the bucket; the gradients go to the host
  // Host, per rank: master 4, Adam 8 and fp32 gradients 4 bytes per parameter of the partition.
  EXPECT_EQ(b.host_total().count(), 16 * kPart);
  testing::expect_consistent(b);
}

TEST(DataParallel, FsdpFullShardGathersTheRootAndTwoBlocks) {
  const LayoutEstimate l = data_parallel(Sharding::fsdp_full);
  const Breakdown& b = l.devices[0].breakdown;
  // Sharded fp32 flat parameters, fp32 gradients and Adam: 16 Psi / N.
  EXPECT_EQ(bytes_of(b, "weights") + bytes_of(b, "gradients") + bytes_of(b, "optimizer_states"), 16 * kPart);
  EXPECT_EQ(b.find("master_weights"), nullptr);  // the fp32 shards are the master copy
  // Gathered in bf16: the root unit (token table, final norm, LM head: 262,148,096 params)
  // and two blocks (202,383,360 each), plus one block's bf16 gradients.
  EXPECT_EQ(bytes_of(b, "gathered_parameters"), (262148096ULL + 2 * 202383360ULL) * 2 + 202383360ULL * 2);
  testing::expect_consistent(b);
}

TEST(DataParallel, FsdpHybridShardsWithinTheGroup) {
  ParallelTrainingOptions par;
  par.data = 16;
  par.sharding = Sharding::fsdp_hybrid;
  par.shard_group = 8;
  const LayoutEstimate l = estimate_parallel_training(llama2_7b(), bf16_shape(), {}, par, std::nullopt);
  const Breakdown& b = l.devices[0].breakdown;
  EXPECT_EQ(bytes_of(b, "weights") + bytes_of(b, "gradients") + bytes_of(b, "optimizer_states"), 16 * kPart);
  EXPECT_EQ(l.devices[0].count, 16u);
  // SHARD_GRAD_OP keeps every unit gathered between forward and backward.
  const LayoutEstimate grad_op = data_parallel(Sharding::fsdp_grad_op);
  EXPECT_EQ(bytes_of(grad_op.devices[0].breakdown, "gathered_parameters"), 2 * kPsi + 2 * 202383360ULL);
}

TEST(DataParallel, AStageNeverCostsMoreThanTheOneBelow) {
  // Property: each ZeRO stage shards more; per device it never needs more.
  std::uint64_t previous = data_parallel(Sharding::none).devices[0].breakdown.total().count();
  for (const Sharding s : {Sharding::zero1, Sharding::zero2}) {
    const std::uint64_t total = data_parallel(s).devices[0].breakdown.total().count();
    EXPECT_LE(total, previous) << to_string(s);
    previous = total;
  }
  // More ranks never cost more per rank.
  EXPECT_LE(data_parallel(Sharding::zero3, 16).devices[0].breakdown.total(),
            data_parallel(Sharding::zero3, 8).devices[0].breakdown.total());
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

TEST(Combined, MoreMicroBatchesNeverCostLess) {
  ParallelTrainingOptions par;
  par.pipeline = 4;
  std::uint64_t previous = 0;
  for (std::uint64_t m = 1; m <= 6; ++m) {
    par.micro_batches = m;
    const std::uint64_t total =
        estimate_parallel_training(llama2_7b(), bf16_shape(), {}, par, std::nullopt).devices[0].breakdown.total().count();
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

// ------------------------------------------------------------------- vLLM arithmetic

TEST(Serving, KvBudgetIsWhatUtilizationLeaves) {
  // 80 GiB at 0.9: ceil(85,899,345,920 x 0.9) = 77,309,411,328; less 40e9 of weights and
  // activations = 37,309,411,328; blocks of 1,310,720 B: 28,464 (remainder 1,077,248).
  const ServingCapacity c = vllm_kv_capacity(Bytes(85899345920ULL), 0.9, Bytes(40000000000ULL), Bytes(1310720), 16, 4096);
  EXPECT_EQ(c.requested.count(), 77309411328ULL);
  EXPECT_EQ(c.kv_budget.count(), 37309411328ULL);
  EXPECT_EQ(c.blocks, 28464u);
  EXPECT_EQ(c.tokens, 28464u * 16);
  EXPECT_EQ(c.full_sequences, 28464u * 16 / 4096);  // 111
  EXPECT_TRUE(c.holds_a_sequence());
  const ServingCapacity none = vllm_kv_capacity(Bytes(85899345920ULL), 0.5, Bytes(50000000000ULL), Bytes(1310720), 16, 4096);
  EXPECT_EQ(none.blocks, 0u);
  EXPECT_EQ(none.shortfall.count(), 50000000000ULL - 42949672960ULL);
  EXPECT_FALSE(none.holds_a_sequence());
  expect_invalid([] { vllm_kv_capacity(Bytes(1), 0.0, Bytes(0), Bytes(1), 16, 1); }, "gpu_memory_utilization");
  expect_invalid([] { vllm_kv_capacity(Bytes(1), 1.5, Bytes(0), Bytes(1), 16, 1); }, "gpu_memory_utilization");
}

// ------------------------------------------------------------------- placement

TEST(Placement, UnitsFollowTheModuleOrder) {
  const std::vector<PlacementUnit> units = placement_units(llama2_70b(), {});
  ASSERT_EQ(units.size(), 1u + 80 + 1 + 1);
  EXPECT_EQ(units.front().name, "token_embedding");
  EXPECT_EQ(units[1].name, "layers.0");
  EXPECT_EQ(units[80].name, "layers.79");
  EXPECT_EQ(units[81].name, "final_norm");
  EXPECT_EQ(units[82].name, "lm_head");
  // One block: 2*8192^2 + 2*8192*1024 + 3*8192*28672 + 2*8192 = 855,654,400 params, bf16; nine modules.
  EXPECT_EQ(units[1].bytes.count(), 2 * 855654400ULL);
  EXPECT_EQ(units[1].modules, 9u);
  // A tied LM head shares the token table: no unit of its own.
  const std::vector<PlacementUnit> gpt2 = placement_units(testing::gpt2(), {});
  EXPECT_EQ(gpt2.back().name, "final_norm");
}

TEST(Placement, Llama70bBalancedOverThreeA100s) {
  // transformers device_map="auto": per GPU total/3 + int(1.25 x one block) =
  // 45,984,432,128 + 2,139,136,000 = 48,123,568,128 for GPUs 0 and 1; GPU 2 keeps its free
  // memory (80 GiB less a 512 MiB context). GPU 0 keeps a block (1,711,308,800) free: the
  // token table and 26 blocks fit in 46,412,259,328; GPU 1 takes 28 blocks; GPU 2 the rest.
  const std::vector<PlacementUnit> units = placement_units(llama2_70b(), {});
  const Bytes free(85899345920ULL - 536870912ULL);
  const Placement p = place_units(units, {PlacementPolicy::balanced, {free, free, free}, false, std::nullopt});
  EXPECT_EQ(p.max_memory[0].count(), 48123568128ULL);
  EXPECT_EQ(p.max_memory[1].count(), 48123568128ULL);
  EXPECT_EQ(p.max_memory[2], free);
  EXPECT_EQ(p.largest_unit.count(), 1711308800ULL);
  EXPECT_EQ(p.device[0], 0);   // token_embedding
  EXPECT_EQ(p.device[26], 0);  // layers.25
  EXPECT_EQ(p.device[27], 1);  // layers.26
  EXPECT_EQ(p.device[54], 1);  // layers.53
  EXPECT_EQ(p.device[55], 2);  // layers.54
  EXPECT_EQ(p.device[82], 2);  // lm_head
  EXPECT_EQ(p.used[0].count(), 524288000ULL + 26 * 1711308800ULL);
}

TEST(Placement, WhatDoesNotFitGoesToTheCpu) {
  // Sequential over two 24 GiB budgets: 140 GB of bf16 weights cannot fit.
  const std::vector<PlacementUnit> units = placement_units(llama2_70b(), {});
  const Bytes budget(24ULL << 30);
  const Placement p = place_units(units, {PlacementPolicy::sequential, {budget, budget}, true, std::nullopt});
  EXPECT_EQ(p.device.back(), -1);  // lm_head on the CPU
  // GPU 0 keeps a block free: (24 GiB - 1,711,308,800 - 524,288,000) / 1,711,308,800 = 13 blocks.
  EXPECT_EQ(p.device[13], 0);
  EXPECT_EQ(p.device[14], 1);
  // With a host budget too small for the rest, the remainder goes to disk.
  const Placement disk = place_units(units, {PlacementPolicy::sequential, {budget, budget}, true, Bytes(8ULL << 30)});
  EXPECT_EQ(disk.device.back(), -2);
  expect_invalid([&] { place_units(units, {}); }, "gpus");
}

TEST(Placement, OneGpuKeepsTenPercent) {
  const std::vector<PlacementUnit> units = placement_units(llama2_7b(), {});
  const Placement p = place_units(units, {PlacementPolicy::balanced, {Bytes(1000)}, false, std::nullopt});
  EXPECT_EQ(p.max_memory[0].count(), 900u);
  const Placement user = place_units(units, {PlacementPolicy::balanced, {Bytes(1000)}, true, std::nullopt});
  EXPECT_EQ(user.max_memory[0].count(), 1000u);
}

}  // namespace
}  // namespace memplan
