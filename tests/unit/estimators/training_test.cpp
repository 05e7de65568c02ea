#include "memplan/estimators/training.hpp"

#include <gtest/gtest.h>

#include "reference_models.hpp"

#include "breakdown_check.hpp"
#include "memplan/core/error.hpp"

namespace memplan {
namespace training_test {

using testing::llama2_7b;
constexpr std::uint64_t kLlamaParams = 6738415616ULL;

// GPT-3 175B (Brown et al. 2020): h = 12288, a = 96, 96 layers, 4h GeLU MLP, LayerNorm.
ModelSpec gpt3() {
  ModelSpec s = family_defaults(Family::gpt2);
  s.name = "gpt3-175b";
  s.d_model = 12288;
  s.n_layers = 96;
  s.n_heads = s.n_kv_heads = 96;
  s.d_head = 128;
  s.d_mlp = 49152;
  s.vocab_size = 50257;
  s.max_seq_len = 2048;
  return s;
}

using testing::tiny;
constexpr std::uint64_t kTinyParams = 193728;

TrainingShape shape(std::uint64_t batch, std::uint64_t seq, const char* weights = "bf16") {
  TrainingShape t;
  t.batch = batch;
  t.seq = seq;
  t.weights.precision = parse_precision(weights);
  t.compute = is_quantized(t.weights.precision) ? precisions::bf16 : t.weights.precision;
  return t;
}

const TrainingPhase& phase(const TrainingEstimate& t, const std::string& name) {
  for (const TrainingPhase& p : t.phases) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no phase " + name);
}

std::uint64_t bytes_of(const TrainingPhase& p, const std::string& component) {
  for (const Item& c : p.components) {
    if (c.name == component) return c.bytes.count();
  }
  return 0;
}

TrainingEstimate checked(const ModelSpec& s, const TrainingShape& shape, const TrainingOptions& o) {
  const TrainingEstimate t = estimate_training_phases(s, shape, o);
  for (const TrainingPhase& p : t.phases) {
    SCOPED_TRACE("phase " + p.name);
    testing::expect_consistent(Breakdown{p.components});
  }
  testing::expect_consistent(estimate_training(s, shape, o));
  return t;
}

// Megatron-LM, whose fused GeLU keeps only its input (Korthikanti et al.'s setting).
TrainingShape megatron(std::uint64_t batch, std::uint64_t seq) {
  TrainingShape t = shape(batch, seq, "fp16");
  t.hf_unfused_ops = false;
  return t;
}

TEST(Training, KorthikantiGpt3LayerMatchesTheClosedForm) {
  // Korthikanti et al. 2022, eq. (1): s*b*h*(34 + 5*a*s/h) bytes per layer in 16-bit with
  // dropout and no recomputation. s = 2048, b = 1, h = 12288, a = 96:
  // 2048 * 12288 * (34 + 5 * 96 * 2048 / 12288) = 25,165,824 * (34 + 80) = 2,868,903,936.
  TrainingShape t = megatron(1, 2048);
  t.flash_attention = false;
  t.dropout = true;
  const Item layer = layer_activations(gpt3(), t);
  testing::expect_item_consistent(layer);
  EXPECT_EQ(layer.bytes.count(), 2868903936ULL);
  // The 5as^2b part: softmax 2as^2b, its dropout mask as^2b, dropout output 2as^2b =
  // 5 * 96 * 2048^2 = 2,013,265,920; the rest is 34sbh = 855,638,016.
  std::uint64_t attention_core = 0;
  for (const Item& d : layer.detail) {
    if (d.name == "softmax_output" || d.name == "attention_dropout_mask" || d.name == "attention_dropout_output") {
      attention_core += d.bytes.count();
    }
  }
  EXPECT_EQ(attention_core, 2013265920ULL);
}

TEST(Training, FlashAttentionDropsTheQuadraticTerm) {
  // Fused attention keeps the output and an fp32 log-sum-exp (b*a*s*4 = 786,432) instead
  // of the 5as^2b tensors: 34sbh + 786,432.
  TrainingShape t = megatron(1, 2048);
  t.flash_attention = true;
  t.dropout = true;
  EXPECT_EQ(layer_activations(gpt3(), t).bytes.count(), 855638016ULL + 786432ULL);
}

TEST(Training, RecomputationKeepsLessAcrossTheForwardPass) {
  TrainingShape t = megatron(1, 2048);
  t.flash_attention = false;
  t.dropout = true;
  TrainingOptions o;
  o.optimizer = Optimizer::none;
  // Outside the layers: embedding dropout mask sbh (1 B) + final LayerNorm input 2sbh +
  // LM head input 2sbh = 5sbh = 125,829,120.
  const std::uint64_t tail = 125829120ULL;
  o.recompute = Recompute::selective;  // 34sbh per layer (Korthikanti et al., selective recomputation)
  EXPECT_EQ(bytes_of(phase(checked(gpt3(), t, o), "forward"), "activations"), 96ULL * 855638016ULL + tail);
  o.recompute = Recompute::full;  // each layer keeps its input: 2sbh = 50,331,648
  const TrainingEstimate full = checked(gpt3(), t, o);
  EXPECT_EQ(bytes_of(phase(full, "forward"), "activations"), 96ULL * 50331648ULL + tail);
  // In backward the top layer is recomputed on top of its checkpoint: 95 inputs below, and
  // the layer's input plus its 2,868,903,936 bytes.
  EXPECT_EQ(bytes_of(phase(full, "backward_top"), "activations"), 95ULL * 50331648ULL + 50331648ULL + 2868903936ULL);
  o.recompute = Recompute::none;
  EXPECT_EQ(bytes_of(phase(checked(gpt3(), t, o), "forward"), "activations"), 96ULL * 2868903936ULL + tail);
}

TEST(Training, TheLossIsComputedInFp32) {
  // Forward, at the loss: logits s*b*V*2 + their fp32 copy *4 + the log-softmax *4:
  // 2048 * 50257 * 10 = 1,029,263,360. Backward start: the log-softmax, its gradient and
  // the logits' fp32 gradient, 3 * 4 = 12 bytes per element: 1,235,116,032 (the logits
  // themselves are freed; measured on an H100, docs/accuracy.md).
  TrainingOptions o;
  o.optimizer = Optimizer::none;
  const TrainingEstimate t = checked(gpt3(), shape(1, 2048, "fp16"), o);
  EXPECT_EQ(bytes_of(phase(t, "forward"), "loss"), 1029263360ULL);
  EXPECT_EQ(bytes_of(phase(t, "backward_start"), "loss"), 1235116032ULL);
}

TEST(Training, HuggingFaceGeluNewKeepsThreeMoreTensors) {
  // gpt2 (gelu_new), fp32, 1 x 1024: NewGELUActivation in PyTorch ops keeps tanh's output,
  // 0.5x and 1 + tanh besides its input: 3 x 1024 x 3072 x 4 = 37,748,736 per layer more
  // than Megatron's fused GeLU. Measured: docs/accuracy.md.
  TrainingShape t = shape(1, 1024, "fp32");
  const std::uint64_t hf = layer_activations(testing::gpt2(), t).bytes.count();
  t.hf_unfused_ops = false;
  EXPECT_EQ(hf - layer_activations(testing::gpt2(), t).bytes.count(), 37748736ULL);
}

TEST(Training, HuggingFaceRmsNormKeepsAnFp32Copy) {
  // LlamaRMSNorm upcasts its input and keeps x * rsqrt(mean x^2) in fp32: 4 bytes per
  // element per norm, 2 norms per Llama layer: 2 x 512 x 4096 x 4 = 16,777,216 at bf16.
  TrainingShape t = shape(1, 512, "bf16");
  const std::uint64_t hf = layer_activations(llama2_7b(), t).bytes.count();
  t.hf_unfused_ops = false;
  EXPECT_EQ(hf - layer_activations(llama2_7b(), t).bytes.count(), 16777216ULL);
}

std::uint64_t model_states(const TrainingPhase& p) {
  return bytes_of(p, "weights") + bytes_of(p, "master_weights") + bytes_of(p, "optimizer_states") +
         bytes_of(p, "gradients");
}

TEST(Training, MixedPrecisionAdamIs16Or18BytesPerParameter) {
  // bf16 weights 2 + bf16 gradients 2 + fp32 master 4 + Adam m and v 4 + 4 = 16 bytes per
  // parameter (ZeRO, Rajbhandari et al. 2020); fp32 gradients make it 18 (Megatron-LM, the
  // Hugging Face "model memory anatomy" guide).
  TrainingOptions o;
  o.optimizer = Optimizer::adamw;
  const TrainingEstimate sixteen = checked(llama2_7b(), shape(1, 512), o);
  EXPECT_EQ(model_states(phase(sixteen, "optimizer_step")), 16 * kLlamaParams);
  // The step upcasts the 16-bit gradients for the fp32 master update: + 4 bytes per parameter.
  EXPECT_EQ(phase(sixteen, "optimizer_step").total().count(), 20 * kLlamaParams);
  EXPECT_EQ(sixteen.phases[sixteen.peak].name, "optimizer_step");

  o.grad_precision = precisions::fp32;
  const TrainingEstimate eighteen = checked(llama2_7b(), shape(1, 512), o);
  EXPECT_EQ(model_states(phase(eighteen, "optimizer_step")), 18 * kLlamaParams);
  EXPECT_EQ(phase(eighteen, "optimizer_step").total().count(), 18 * kLlamaParams);

  // fp32 training needs no master copy: 4 + 4 + 8 = 16. Pure bf16 without master weights:
  // weights 2, gradients 2, states at the parameters' dtype 2 + 2 = 8.
  o.grad_precision.reset();
  EXPECT_EQ(model_states(phase(checked(llama2_7b(), shape(1, 512, "fp32"), o), "optimizer_step")), 16 * kLlamaParams);
  o.master_weights = false;
  EXPECT_EQ(model_states(phase(checked(llama2_7b(), shape(1, 512), o), "optimizer_step")), 8 * kLlamaParams);
}

// torch.optim's AdamW step on Llama-2-7b in fp32 (no master copy), by implementation: foreach
// holds one tensor list the size of every parameter from PyTorch 2.1 (pytorch/pytorch#104898),
// two in 2.0 (#97712); fused none; the per-parameter loop sqrt(exp_avg_sq) and its quotient for
// the largest tensor, the 32,000 x 4096 token table.
TEST(Training, OptimizerStepTemporariesByImplementation) {
  const auto workspace = [](OptimizerImpl impl, TorchVersion v) {
    TrainingOptions o;
    o.optimizer_impl = impl;
    o.torch_version = v;
    const TrainingEstimate t = checked(llama2_7b(), shape(1, 512, "fp32"), o);
    for (const Item& c : phase(t, "optimizer_step").components) {
      if (c.name == "optimizer_workspace") return c.bytes.count();
    }
    return std::uint64_t{0};
  };
  EXPECT_EQ(workspace(OptimizerImpl::foreach, {2, 1}), kLlamaParams * 4);
  EXPECT_EQ(workspace(OptimizerImpl::foreach, {2, 0}), 2 * kLlamaParams * 4);
  EXPECT_EQ(workspace(OptimizerImpl::fused, {2, 5}), 0U);
  EXPECT_EQ(workspace(OptimizerImpl::loop, {2, 5}), 2ULL * 32000 * 4096 * 4);
  // auto: the loop before 2.0, foreach from 2.0.
  EXPECT_EQ(workspace(OptimizerImpl::automatic, {1, 13}), 2ULL * 32000 * 4096 * 4);
  EXPECT_EQ(workspace(OptimizerImpl::automatic, {2, 0}), 2 * kLlamaParams * 4);
  EXPECT_EQ(workspace(OptimizerImpl::automatic, {2, 5}), kLlamaParams * 4);
  EXPECT_EQ(parse_torch_version("2.1.2"), (TorchVersion{2, 1}));
  EXPECT_EQ(parse_torch_version("1.13"), (TorchVersion{1, 13}));
  for (const char* bad : {"", "2", "2.", "v2.1", "2.1.2.3", "0.4", "2.x"}) {
    EXPECT_THROW(parse_torch_version(bad), Error) << bad;
  }
  EXPECT_THROW(parse_optimizer_impl("fusedd"), Error);
}

TEST(Training, OptimizerStatesPerOptimizer) {
  TrainingOptions o;
  const auto states = [&](Optimizer opt) {
    o.optimizer = opt;
    return bytes_of(phase(checked(tiny(), shape(1, 16), o), "optimizer_step"), "optimizer_states");
  };
  // Master weights in fp32, so every 32-bit state is 4 B per element.
  EXPECT_EQ(states(Optimizer::adamw), 8 * kTinyParams);
  EXPECT_EQ(states(Optimizer::adam), 8 * kTinyParams);
  EXPECT_EQ(states(Optimizer::sgd_momentum), 4 * kTinyParams);
  EXPECT_EQ(states(Optimizer::sgd), 0U);
  // bitsandbytes 8-bit: 2 x (n + 4 * ceil(n / 256)) per tensor of n >= 4096 elements, 2 x 4n below:
  // token and lm_head 64,000: 2 x (64,000 + 1,000) = 130,000 each; q/k/v/o 4,096: 2 x 4,160 =
  // 8,320 each; gate/up/down 16,384: 2 x 16,640 = 33,280 each; three norms of 64: 512 each.
  EXPECT_EQ(states(Optimizer::adam_8bit), 2 * 130000U + 4 * 8320U + 3 * 33280U + 3 * 512U);
  // Adafactor: rows + cols per matrix, all elements of a vector, 4 B each:
  // (1064 + 4 x 128 + 3 x 320 + 1064 + 3 x 64) x 4 = 3,792 x 4 = 15,168.
  EXPECT_EQ(states(Optimizer::adafactor), 15168U);
}

TEST(Training, LoraTrainsAdaptersOnly) {
  // PEFT's Llama-2-7b default, r = 8 on q_proj and v_proj: per layer 2 x (8 x 4096 + 4096 x 8)
  // = 131,072; x 32 layers = 4,194,304 trainable parameters (PEFT prints this figure).
  LoraOptions lora;
  lora.rank = 8;
  EXPECT_EQ(trainable_parameters(llama2_7b(), lora), 4194304ULL);
  TrainingOptions o;
  o.lora = lora;
  const TrainingEstimate lora_step = checked(llama2_7b(), shape(1, 512), o);
  const TrainingPhase& step = phase(lora_step, "optimizer_step");
  // Adapters in fp32 (4 B): 16,777,216 on top of the frozen bf16 base; fp32 gradients
  // 16,777,216; Adam 8 x 4,194,304 = 33,554,432; no master copy (already fp32).
  EXPECT_EQ(bytes_of(step, "weights"), 2 * kLlamaParams + 16777216ULL);
  EXPECT_EQ(bytes_of(step, "gradients"), 16777216ULL);
  EXPECT_EQ(bytes_of(step, "optimizer_states"), 33554432ULL);
  EXPECT_EQ(bytes_of(step, "master_weights"), 0U);

  // QLoRA: the same adapters on an nf4 base.
  const TrainingEstimate qlora = checked(llama2_7b(), shape(1, 512, "nf4"), o);
  WeightsOptions nf4;
  nf4.precision = parse_precision("nf4");
  EXPECT_EQ(bytes_of(phase(qlora, "optimizer_step"), "weights"),
            estimate_weights(llama2_7b(), nf4).total().count() + 16777216ULL);
}

TEST(Training, BitsandbytesLayersDequantiseAndKeepInputsAsTheirReleaseDoes) {
  // QLoRA on Llama-2-7b (r = 8 on q and v), 1 x 512 tokens, bf16 activations.
  TrainingOptions o;
  o.lora.rank = 8;
  const TrainingEstimate bf16 = checked(llama2_7b(), shape(1, 512), o);
  const TrainingEstimate nf4 = checked(llama2_7b(), shape(1, 512, "nf4"), o);
  // The backward computes each input gradient against the weight dequantised to bf16
  // (MatMul4Bit.backward): the largest, 11008 x 4096 x 2 = 90,177,536 B, in the layer's workspace.
  EXPECT_EQ(bytes_of(phase(nf4, "backward_top"), "backward_workspace"),
            bytes_of(phase(bf16, "backward_top"), "backward_workspace") + 90177536ULL);
  // From 0.43.2 a frozen 4-bit layer keeps no input (bitsandbytes#1270): the activations are
  // 16-bit LoRA's, without the down projection's input.
  EXPECT_EQ(bytes_of(phase(nf4, "backward_start"), "activations"),
            bytes_of(phase(bf16, "backward_start"), "activations"));
  // Before, and with LLM.int8 in every release, the down projection's input is kept too:
  // 32 layers x 512 x 11008 x 2 = 360,710,144 B.
  TrainingShape old_bnb = shape(1, 512, "nf4");
  old_bnb.weights.bitsandbytes = parse_bitsandbytes_version("0.43.1");
  const TrainingEstimate int8 = checked(llama2_7b(), shape(1, 512, "int8"), o);
  const TrainingEstimate nf4_before = checked(llama2_7b(), old_bnb, o);
  for (const TrainingEstimate* t : {&int8, &nf4_before}) {
    EXPECT_EQ(bytes_of(phase(*t, "backward_start"), "activations"),
              bytes_of(phase(bf16, "backward_start"), "activations") + 360710144ULL);
  }
  // 8-bit dequantises too (MatMul8bitLt.backward's CB.to(dtype)); GPTQ's int4 is not bitsandbytes.
  EXPECT_EQ(bytes_of(phase(int8, "backward_top"), "backward_workspace"),
            bytes_of(phase(bf16, "backward_top"), "backward_workspace") + 90177536ULL);
  EXPECT_EQ(bytes_of(phase(checked(llama2_7b(), shape(1, 512, "int4"), o), "backward_top"), "backward_workspace"),
            bytes_of(phase(bf16, "backward_top"), "backward_workspace"));
  EXPECT_THROW(parse_bitsandbytes_version("0.43.x"), Error);
}

TEST(Training, AutocastKeepsFp32StreamsAndA16BitCopyOfEachWeightAndInput) {
  // Llama-2-7b, 1 x 512 tokens: torch.autocast over fp32 weights against pure bf16 training.
  TrainingOptions o;
  o.optimizer = Optimizer::sgd;
  const TrainingEstimate pure = checked(llama2_7b(), shape(1, 512), o);
  TrainingShape amp = shape(1, 512, "fp32");
  amp.compute = precisions::bf16;
  amp.autocast = true;
  const TrainingEstimate autocast = checked(llama2_7b(), amp, o);
  // Per layer: both norms' normalised outputs in fp32, 2 x 512 x 4096 x (4 - 2) = 8,388,608;
  // q, k and v each cast the normed input, 2 more copies x 512 x 4096 x 2 = 8,388,608; gate
  // and up, 1 more = 4,194,304: 20,971,520 x 32 layers = 671,088,640. The final norm's fp32
  // input, 512 x 4096 x 2 more = 4,194,304. The cast weights: 32 x (4 x 4096^2 + 3 x 4096 x
  // 11008) + 32000 x 4096 (the head) = 6,607,077,376 elements x 2 B = 13,214,154,752.
  EXPECT_EQ(bytes_of(phase(autocast, "forward"), "activations"),
            bytes_of(phase(pure, "forward"), "activations") + 671088640ULL + 4194304ULL + 13214154752ULL);
  // In the first layer's backward only its own copies are left, 202,375,168 x 2 = 404,750,336,
  // and the gradients flowing down are fp32: 2 x 512 x 4096 x 2 more = 8,388,608.
  EXPECT_EQ(bytes_of(phase(autocast, "backward_bottom"), "activations"),
            bytes_of(phase(pure, "backward_bottom"), "activations") + 20971520ULL + 404750336ULL);
  EXPECT_EQ(bytes_of(phase(autocast, "backward_bottom"), "backward_workspace"),
            bytes_of(phase(pure, "backward_bottom"), "backward_workspace") + 8388608ULL);
  // fp32 weights and gradients: 4 B each per parameter where pure bf16 has 2.
  EXPECT_EQ(bytes_of(phase(autocast, "optimizer_step"), "gradients"), 4 * kLlamaParams);
}

TEST(Training, PagedOptimizersPageTheStatesOfLargeTensorsOnly) {
  // bitsandbytes pages the two state buffers of tensors of 100,000 elements or more
  // (get_state_buffer); the 8-bit absmax blocks and smaller tensors' states stay on the GPU.
  // QLoRA r = 64 on every projection of Llama-2-7b: per layer 4 x (64 x 4096 + 4096 x 64) +
  // 2 x (64 x 4096 + 11008 x 64) + (64 x 11008 + 4096 x 64) = 4,997,120 adapter parameters, all
  // in tensors of 262,144 or 704,512 elements; x 32 = 159,907,840.
  TrainingOptions o;
  o.optimizer = Optimizer::paged_adamw_8bit;
  o.lora.rank = 64;
  o.lora.targets = {"all"};
  const TrainingEstimate all = checked(llama2_7b(), shape(1, 512, "nf4"), o);
  ASSERT_EQ(all.host.size(), 1U);
  EXPECT_EQ(all.host.front().bytes.count(), 2 * 159907840ULL);  // two uint8 buffers
  // On the GPU: 2 x 4 B absmax per 256 elements (every tensor a multiple of 256).
  EXPECT_EQ(bytes_of(phase(all, "optimizer_step"), "optimizer_states"), 159907840ULL / 256 * 8);
  // r = 8 on q and v: 32 layers x 4 tensors (A and B of q and v) of 32,768 elements, none
  // paged; 2 x (32,768 + 128 x 4) each.
  o.lora.rank = 8;
  o.lora.targets = {"q", "v"};
  const TrainingEstimate small = checked(llama2_7b(), shape(1, 512, "nf4"), o);
  EXPECT_TRUE(small.host.empty());
  EXPECT_EQ(bytes_of(phase(small, "optimizer_step"), "optimizer_states"), 128ULL * 2 * (32768 + 512));
  // 32-bit paged AdamW: 2 x 4 B per element, all paged for the large tensors.
  o.optimizer = Optimizer::paged_adamw;
  o.lora.rank = 64;
  o.lora.targets = {"all"};
  EXPECT_EQ(checked(llama2_7b(), shape(1, 512, "nf4"), o).host.front().bytes.count(), 8 * 159907840ULL);
}

TEST(Training, RejectsWhatCannotBeTrained) {
  TrainingOptions o;
  try {
    estimate_training_phases(llama2_7b(), shape(1, 512, "int4"), o);
    FAIL() << "full fine-tuning of int4 weights must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "lora_rank");
  }
  o.lora.rank = 8;
  o.lora.targets = {"q_proj"};
  try {
    estimate_training_phases(llama2_7b(), shape(1, 512), o);
    FAIL() << "an unknown target must be refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.key(), "lora_targets");
    EXPECT_NE(std::string(e.what()).find("'q'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_optimizer("adamm"), Error);
  EXPECT_THROW(parse_recompute("partial"), Error);
  TrainingOptions zero;
  zero.grad_accumulation = 0;
  EXPECT_THROW(estimate_training_phases(tiny(), shape(1, 16), zero), Error);
}

TEST(Training, AccumulatedGradientsLiveThroughTheForwardPass) {
  TrainingOptions o;
  const TrainingEstimate one = checked(llama2_7b(), shape(1, 512), o);
  o.grad_accumulation = 4;
  const TrainingEstimate four = checked(llama2_7b(), shape(1, 512), o);
  EXPECT_EQ(bytes_of(phase(one, "forward"), "gradients"), 0U);
  EXPECT_EQ(bytes_of(phase(four, "forward"), "gradients"), 2 * kLlamaParams);
}

TEST(Training, DoubleBackwardKeepsTheFirstBackwardsGraph) {
  TrainingOptions o;
  o.optimizer = Optimizer::none;
  o.double_backward = true;
  const TrainingEstimate t = checked(llama2_7b(), shape(1, 512), o);
  const TrainingPhase& hvp = phase(t, "hessian_vector_product");
  EXPECT_EQ(bytes_of(hvp, "first_backward_graph"), bytes_of(hvp, "activations"));
  // Six logits-shaped tensors and two in the compute dtype: 512 x 32000 x (2 + 4 + 4 + 4 + 2 + 8).
  EXPECT_EQ(bytes_of(hvp, "loss"), 512ULL * 32000 * 24);
  EXPECT_EQ(t.phases[t.peak].name, "hessian_vector_product");
}

TEST(Training, MoreWorkNeverCostsLessAndLowerPrecisionNeverMore) {
  // A vocabulary of twice the hidden size, as in real models: where the vocabulary dwarfs
  // the hidden state (tiny()), 16-bit training's extra fp32 copy of the logits can make it
  // cost more than fp32 training, which needs no copy.
  ModelSpec small = tiny();
  small.d_model = 512;
  small.n_heads = small.n_kv_heads = 8;
  small.d_head = 64;
  small.d_mlp = 1408;
  small.n_layers = 2;
  TrainingOptions o;
  const auto peak = [&](const ModelSpec& s, std::uint64_t b, std::uint64_t seq, const char* p) {
    const TrainingEstimate t = estimate_training_phases(s, shape(b, seq, p), o);
    return t.phases[t.peak].total().count();
  };
  for (const Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
    o.recompute = r;
    for (std::uint64_t b = 1; b <= 8; b *= 2) {
      for (std::uint64_t seq = 64; seq <= 512; seq *= 2) {
        const std::uint64_t now = peak(small, b, seq, "bf16");
        EXPECT_LE(now, peak(small, 2 * b, seq, "bf16"));
        EXPECT_LE(now, peak(small, b, 2 * seq, "bf16"));
        EXPECT_LE(now, peak(small, b, seq, "fp32"));
      }
    }
    ModelSpec deeper = small;
    std::uint64_t layers_before = 0;
    for (std::uint64_t l = 1; l <= 8; ++l) {
      deeper.n_layers = l;
      const std::uint64_t now = peak(deeper, 2, 128, "bf16");
      EXPECT_GE(now, layers_before);
      layers_before = now;
    }
  }
}

}  // namespace training_test
}  // namespace memplan
