// Encoder-decoder models (T5, Flan-T5, BART, Whisper): parameter counts of real configs
// (tests/data/hf), the two caches of a generation step (the cross-attention's fixed, the
// self-attention's growing), a training step's two stacks, LoRA's targets, the source and
// target lengths, and what memplan does not price.
// Each expected figure is written out from the config's sizes; the published counts of the
// built-ins are checked in hf_config_test through their model files.
#include <gtest/gtest.h>

#include "hf_fixtures.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/estimators/kv_cache.hpp"
#include "memplan/io/hf_config.hpp"
#include "memplan/io/model_file.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {
namespace encoder_decoder_test {

using testing::find_row;
using testing::hf_fixture;
using testing::row_bytes;

std::uint64_t component(const ModelSpec& s, const std::string& name) {
  for (const ComponentParams& c : parameters_by_component(s)) {
    if (c.component == name) return c.params;
  }
  ADD_FAILURE() << "no component " << name;
  return 0;
}

// google-t5/t5-small: d 512, 6 + 6 layers, 8 heads of d_kv 64, d_ff 2048 (ReLU), 32 buckets,
// vocab 32128, head tied to the shared embedding. Published: 60,506,624 (keras-hub's
// t5_presets.py, "t5_small_multi").
TEST(EncoderDecoder, T5SmallCountsBothStacks) {
  const ModelSpec s = hf_fixture("t5-small");
  EXPECT_EQ(s.family, Family::t5);
  EXPECT_EQ(s.encoder.n_layers, 6U);
  EXPECT_EQ(s.n_layers, 6U);
  EXPECT_EQ(s.mlp, MlpKind::plain);
  const std::uint64_t encoder_layer = 4ULL * 512 * 512                         // q, k, v, o
                                      + 2ULL * 512 * 2048                      // wi, wo
                                      + 2ULL * 512;                            // two RMS norms
  const std::uint64_t decoder_layer = encoder_layer + 4ULL * 512 * 512 + 512;  // + cross-attention and its norm
  const std::uint64_t bias_table = 32ULL * 8, final_norm = 512;
  EXPECT_EQ(component(s, "encoder"), 6 * encoder_layer + bias_table + final_norm);
  EXPECT_EQ(component(s, "encoder"), 18'881'280U);
  EXPECT_EQ(component(s, "cross_attention"), 6 * (4ULL * 512 * 512 + 512));
  EXPECT_EQ(count_parameters(s),
            32128ULL * 512 + 6 * encoder_layer + 6 * decoder_layer + 2 * (bias_table + final_norm));
  EXPECT_EQ(count_parameters(s), 60'506'624U);
}

// google/flan-t5-base: T5 v1.1's layout: d 768, 12 + 12 layers, 12 heads of 64, a gated-GELU
// MLP of 2048 (wi_0, wi_1, wo) whose "gated-gelu" T5Config runs as gelu_new
// (configuration_t5.py: "for backwards compatibility"), an untied head. Published: 247,577,856
// (keras-hub, "flan_base_multi").
TEST(EncoderDecoder, FlanT5HasAGatedMlpAndItsOwnHead) {
  const ModelSpec s = hf_fixture("flan-t5-base");
  EXPECT_EQ(s.mlp, MlpKind::gated);
  EXPECT_EQ(s.activation, "gelu_new");
  EXPECT_EQ(s.lm_head, LmHead::untied);
  const std::uint64_t encoder_layer = 4ULL * 768 * 768 + 3ULL * 768 * 2048 + 2ULL * 768;
  const std::uint64_t decoder_layer = encoder_layer + 4ULL * 768 * 768 + 768;
  const std::uint64_t tables_and_norms = 2 * (32ULL * 12 + 768);
  EXPECT_EQ(count_parameters(s), 2 * 32128ULL * 768 + 12 * (encoder_layer + decoder_layer) + tables_and_norms);
  EXPECT_EQ(count_parameters(s), 247'577'856U);
}

// facebook/bart-large: d 1024, 12 + 12 post-LN layers, 16 heads, FFN 4096, biases everywhere,
// a position table of 1024 + 2 rows and an embedding LayerNorm per stack, no final norm,
// tied head. AutoModel's num_parameters() is printed as 406,291,456 in a public script.
TEST(EncoderDecoder, BartCountsItsOffsetPositionTables) {
  const ModelSpec s = hf_fixture("bart-large");
  EXPECT_EQ(s.family, Family::bart);
  EXPECT_EQ(s.n_positions, 1026U);
  EXPECT_EQ(s.encoder.n_positions, 1026U);
  const std::uint64_t attention = 4 * (1024ULL * 1024 + 1024), layer_norm = 2 * 1024ULL;
  const std::uint64_t mlp = 1024ULL * 4096 + 4096 + 4096ULL * 1024 + 1024;
  const std::uint64_t encoder_layer = attention + mlp + 2 * layer_norm;
  const std::uint64_t decoder_layer = encoder_layer + attention + layer_norm;
  const std::uint64_t per_stack = 1026ULL * 1024 + layer_norm;  // positions, embedding norm
  EXPECT_EQ(count_parameters(s), 50265ULL * 1024 + 2 * per_stack + 12 * (encoder_layer + decoder_layer));
  EXPECT_EQ(count_parameters(s), 406'291'456U);
}

// facebook/bart-base as a model file: d 768, 6 + 6 layers, 12 heads, FFN 3072.
// sdpython/onnx-diagnostic _unittests/ut_tasks/test_tasks.py builds it from its config and
// reads 139,420,416 weights.
TEST(EncoderDecoder, BartBaseMatchesItsPublishedCount) {
  const ModelEntry e = parse_model_yaml(
      "family: bart\nd_model: 768\nn_layers: 6\nencoder_layers: 6\nn_heads: 12\nd_mlp: 3072\nvocab_size: 50265\n"
      "max_seq_len: 1024\nn_positions: 1026\nencoder_positions: 1026\n",
      "bart-base.yaml", "bart-base");
  EXPECT_EQ(count_parameters(e.spec), 139'420'416U);
}

// openai/whisper-tiny: d 384, 4 + 4 pre-LN layers, 6 heads, FFN 1536, 80 mel bins, 1500
// source and 448 target positions, vocab 51865; q, v and o have biases, k has none.
// Published: 37,760,640 (keras-hub's whisper_presets.py, "whisper_tiny_multi").
TEST(EncoderDecoder, WhisperCountsItsAudioFrontEnd) {
  const ModelSpec s = hf_fixture("whisper-tiny");
  EXPECT_EQ(s.family, Family::whisper);
  EXPECT_FALSE(s.attn_k_bias);
  EXPECT_EQ(s.encoder.mel_bins, 80U);
  const std::uint64_t attention = 4ULL * 384 * 384 + 3 * 384;  // no bias on k
  const std::uint64_t mlp = 384ULL * 1536 + 1536 + 1536ULL * 384 + 384, layer_norm = 2 * 384ULL;
  const std::uint64_t encoder_layer = attention + mlp + 2 * layer_norm;
  const std::uint64_t convs = 80ULL * 384 * 3 + 384 + 384ULL * 384 * 3 + 384;
  const std::uint64_t encoder = convs + 1500ULL * 384 + 4 * encoder_layer + layer_norm;
  EXPECT_EQ(component(s, "encoder"), encoder);
  EXPECT_EQ(encoder, 8'208'384U);
  const std::uint64_t decoder_layer = encoder_layer + attention + layer_norm;
  EXPECT_EQ(count_parameters(s), encoder + 51865ULL * 384 + 448ULL * 384 + 4 * decoder_layer + layer_norm);
  EXPECT_EQ(count_parameters(s), 37'760'640U);
}

Workload t5_generation(std::uint64_t source, std::uint64_t generated) {
  Workload w;
  w.kind = WorkloadKind::generation;
  w.seq_len = source;
  w.new_tokens = generated;
  w.weights.precision = precisions::bf16;
  w.include_overhead = false;
  return w;
}

// One pass of both stacks (or a training step): `source` encoder positions, `target` decoder
// tokens, without the overhead rows.
Workload stacks(WorkloadKind kind, std::uint64_t batch, std::uint64_t source, std::uint64_t target,
                const Precision& precision) {
  Workload w;
  w.kind = kind;
  w.batch = batch;
  w.seq_len = source;
  w.target_len = target;
  w.weights.precision = precision;
  w.include_overhead = false;
  return w;
}

// A T5 generation step: the cross-attention's keys and values of the 128 source positions are
// the same after 64 and after 128 generated tokens; the self-attention's grow with them.
// t5-small in bf16: 6 layers x 2 (keys, values) x 8 heads x 64 x tokens x 2 B.
TEST(EncoderDecoder, T5GenerationKeepsAFixedCrossCacheAndAGrowingSelfCache) {
  const ModelSpec s = hf_fixture("t5-small");
  const std::uint64_t per_token = 6ULL * 2 * 8 * 64 * 2;  // 12,288 B
  for (const std::uint64_t generated : {64ULL, 128ULL}) {
    const Breakdown b = estimate_workload(s, t5_generation(128, generated));
    const Item* kv = find_row(b.components, "kv_cache");
    ASSERT_NE(kv, nullptr) << "at " << generated << " tokens the decoder's phase is the peak";
    EXPECT_EQ(row_bytes(kv->detail, "cross_layers"), 128 * per_token) << generated;
    EXPECT_EQ(row_bytes(kv->detail, "full_layers"), generated * per_token) << generated;
    EXPECT_EQ(kv->bytes.count(), (128 + generated) * per_token);
    // The encoder's output, batch x source x d_model, stays for the whole generation.
    EXPECT_EQ(row_bytes(find_row(b.components, "forward_workspace")->detail, "encoder_output"), 128ULL * 512 * 2);
  }
}

// The estimator alone: cross_tokens only on an encoder-decoder, paged like the rest.
TEST(EncoderDecoder, CrossCacheFollowsTheSourceAndItsPages) {
  const ModelSpec s = hf_fixture("whisper-tiny");
  KvCacheOptions o;
  o.batch = 16;
  o.tokens = 256;
  o.cross_tokens = 1500;
  o.precision = precisions::bf16;
  const Breakdown kv = estimate_kv_cache(s, o);
  EXPECT_EQ(row_bytes(kv.components.front().detail, "cross_layers"), 4ULL * 2 * 16 * 1500 * 384 * 2);  // 147,456,000
  EXPECT_EQ(row_bytes(kv.components.front().detail, "full_layers"), 4ULL * 2 * 16 * 256 * 384 * 2);
  o.page_tokens = 16;  // 1500 source positions fill 94 pages: 1504 slots
  EXPECT_EQ(row_bytes(estimate_kv_cache(s, o).components.front().detail, "cross_layers"),
            4ULL * 2 * 16 * 1504 * 384 * 2);
}

// T5's attention materialises its scores, the relative-position bias beside them, and an fp32
// copy for the softmax: at 1024 source positions the encoder's attention is the peak.
// flan-t5-base, batch 8, bf16: bias 8 x 12 x 1024^2 x 2 B; scores the same; the fp32 copy and
// the fp32 softmax output 4 B each.
TEST(EncoderDecoder, T5EncoderPricesItsPositionBiasAndFp32Scores) {
  const Breakdown b = estimate_workload(hf_fixture("flan-t5-base"),
                                        stacks(WorkloadKind::inference, 8, 1024, 128, precisions::bf16));
  EXPECT_EQ(b.peak_phase, "encoder");
  const std::vector<Item>& rows = find_row(b.components, "forward_workspace")->detail;
  const std::uint64_t square = 8ULL * 12 * 1024 * 1024;
  EXPECT_EQ(row_bytes(rows, "position_bias"), square * 2);
  EXPECT_EQ(row_bytes(rows, "attn_scores"), square * 2);
  EXPECT_EQ(row_bytes(rows, "attn_scores_fp32"), square * 4);
  EXPECT_EQ(row_bytes(rows, "attn_probabilities"), square * 4);
  EXPECT_EQ(find_row(b.components, "kv_cache"), nullptr);  // the caches come later, in the decoder
}

// A training step keeps both stacks' activations: the encoder's over the 512 source
// positions, the decoder's over the 128 target tokens, and each decoder layer's
// cross-attention over the source. t5-small, batch 8, bf16, T5's eager attention (fp32
// softmax output kept): 6 layers each.
TEST(EncoderDecoder, TrainingKeepsBothStacksAndTheCrossAttention) {
  const Breakdown b = estimate_workload(hf_fixture("t5-small"),
                                        stacks(WorkloadKind::training, 8, 512, 128, precisions::bf16));
  const Item* activations = find_row(b.components, "activations");
  ASSERT_NE(activations, nullptr);
  const std::vector<Item>& rows = activations->detail;
  EXPECT_EQ(row_bytes(rows, "encoder_softmax_output"), 6ULL * 8 * 8 * 512 * 512 * 4);  // b a s s, fp32
  EXPECT_EQ(row_bytes(rows, "encoder_probabilities_16bit"), 6ULL * 8 * 8 * 512 * 512 * 2);
  EXPECT_EQ(row_bytes(rows, "softmax_output"), 6ULL * 8 * 8 * 128 * 128 * 4);  // the decoder's self-attention
  EXPECT_EQ(row_bytes(rows, "cross_kv"), 6ULL * 2 * 512 * 8 * 512 * 2);        // keys and values of the source
  EXPECT_EQ(row_bytes(rows, "cross_softmax_output"), 6ULL * 8 * 8 * 128 * 512 * 4);
  EXPECT_EQ(row_bytes(rows, "encoder_output"), 512ULL * 8 * 512 * 2);
  // The loss is over the target: 8 x 128 x 32128 fp32 log-probabilities.
  EXPECT_EQ(row_bytes(find_row(b.components, "loss")->detail, "log_probs"), 8ULL * 128 * 32128 * 4);
}

// Flan-T5's gate runs gelu_new, written in PyTorch ops (tanh's output, 0.5x and 1 + tanh kept
// besides the input): three more s x b x f tensors per layer in both stacks. Measured on an
// H200 (docs/accuracy.md), the step's peak was 1.12 GiB above the estimate without them.
TEST(EncoderDecoder, FlanT5TrainingKeepsGeluNewsIntermediates) {
  const Breakdown b = estimate_workload(hf_fixture("flan-t5-base"),
                                        stacks(WorkloadKind::training, 8, 512, 128, precisions::fp32));
  const std::vector<Item>& rows = find_row(b.components, "activations")->detail;
  EXPECT_EQ(row_bytes(rows, "encoder_gelu_new_intermediates"), 12ULL * 3 * 512 * 8 * 2048 * 4);
  EXPECT_EQ(row_bytes(rows, "gelu_new_intermediates"), 12ULL * 3 * 128 * 8 * 2048 * 4);  // the decoder
}

// LoRA's default targets q and v are, as PEFT matches module names, every q and v of
// flan-t5-base: both stacks' self-attention and the decoder's cross-attention, 72 modules x
// 8 x (768 + 768). PEFT prints for LoraConfig(r=8, task_type=SEQ_2_SEQ_LM) on
// google/flan-t5-base "trainable params: 884,736 || all params: 248,462,592" (as public
// notebooks and tutorials quote it).
TEST(EncoderDecoder, LoraTargetsEveryStacksProjections) {
  const ModelSpec s = hf_fixture("flan-t5-base");
  Workload w;
  w.kind = WorkloadKind::training;
  w.seq_len = 512;
  w.target_len = 128;
  w.weights.precision = precisions::bf16;
  w.analysis.training.lora.rank = 8;
  const Breakdown b = estimate_workload(s, w);
  const Item* weights = find_row(b.components, "weights");
  ASSERT_NE(weights, nullptr);
  const Item* adapters = find_row(weights->detail, "lora_adapters");
  ASSERT_NE(adapters, nullptr);
  EXPECT_EQ(adapters->params, 72ULL * 8 * (768 + 768));
  EXPECT_EQ(adapters->params, 884'736U);
  EXPECT_EQ(weights->params, 248'462'592U);
}

// Whisper's convolutions: a training step keeps their inputs over the 3000 mel frames
// (whisper-tiny, batch 4, bf16: 80 bins; conv1's output and its GELU, 384 wide; conv2's
// output over the 1500 positions).
TEST(EncoderDecoder, WhisperTrainingKeepsTheConvolutionsInputs) {
  Workload w;
  w.kind = WorkloadKind::training;
  w.batch = 4;
  w.seq_len = 1500;
  w.target_len = 448;
  w.weights.precision = precisions::bf16;
  const Breakdown b = estimate_workload(hf_fixture("whisper-tiny"), w);
  const std::vector<Item>& rows = find_row(b.components, "activations")->detail;
  EXPECT_EQ(row_bytes(rows, "encoder_mel_input"), 4ULL * 80 * 3000 * 2);
  EXPECT_EQ(row_bytes(rows, "encoder_conv_outputs"), 2ULL * 4 * 384 * 3000 * 2);
  EXPECT_EQ(row_bytes(rows, "encoder_conv2_output"), 4ULL * 384 * 1500 * 2);
}

// A narrow audio encoder over many mel bins peaks in its front end, before any layer: the
// 128 bins and conv1's 64-wide output and GELU over 3000 frames, batch 2, bf16.
TEST(EncoderDecoder, ANarrowAudioEncoderPeaksInItsFrontEnd) {
  const ModelEntry e = parse_model_yaml(
      "family: whisper\nd_model: 64\nn_layers: 1\nencoder_layers: 1\nn_heads: 2\nd_mlp: 64\nvocab_size: 100\n"
      "max_seq_len: 448\nn_positions: 448\nencoder_positions: 1500\nencoder_mel_bins: 128\n",
      "narrow.yaml", "narrow");
  Workload w = t5_generation(1500, 4);
  w.batch = 2;
  const Breakdown b = estimate_workload(e.spec, w);
  EXPECT_EQ(b.peak_phase, "audio_front_end");
  EXPECT_EQ(find_row(b.components, "forward_workspace")->bytes.count(), 2ULL * (128 + 2 * 64) * 3000 * 2);
}

Error error_of(const ModelSpec& s, const Workload& w) {
  try {
    (void)estimate_workload(s, w);
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "accepted";
  return Error(ErrorKind::internal, "");
}

// What memplan does not price for an encoder-decoder is refused, naming why; Whisper's
// encoder reads exactly 1500 positions; the decoder's table bounds the target.
TEST(EncoderDecoder, RefusesWhatItDoesNotPrice) {
  const ModelSpec whisper = hf_fixture("whisper-tiny");
  Workload w = t5_generation(1500, 64);
  w.kind = WorkloadKind::sae;
  w.new_tokens = 0;
  Error e = error_of(whisper, w);
  EXPECT_EQ(e.key(), "workload");
  EXPECT_NE(std::string(e.what()).find("4 encoder layers besides its 4 decoder layers"), std::string::npos) << e.what();

  e = error_of(whisper, t5_generation(3000, 64));
  EXPECT_EQ(e.key(), "seq_len");
  EXPECT_NE(std::string(e.what()).find("reads exactly 1500 positions"), std::string::npos) << e.what();

  e = error_of(whisper, t5_generation(1500, 449));  // 448 target positions
  EXPECT_EQ(e.key(), "new_tokens");

  Workload decoder_only = t5_generation(128, 0);
  decoder_only.kind = WorkloadKind::inference;
  decoder_only.target_len = 16;
  ModelSpec gpt = hf_fixture("gpt2");
  EXPECT_EQ(error_of(gpt, decoder_only).key(), "target_len");
}

// A config whose stacks differ in width is refused at its key, not priced as the decoder's.
TEST(EncoderDecoder, StacksOfDifferentWidthsAreRefused) {
  try {
    parse_hf_config(R"({"model_type": "bart", "d_model": 64, "decoder_layers": 2, "encoder_layers": 2,
  "decoder_attention_heads": 4, "encoder_attention_heads": 8, "decoder_ffn_dim": 128, "encoder_ffn_dim": 128,
  "vocab_size": 100, "max_position_embeddings": 32})",
                    "config.json", "test");
    ADD_FAILURE() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "encoder_attention_heads");
    EXPECT_EQ(e.line(), 2U);
    EXPECT_NE(e.message().find("same heads and MLP width"), std::string::npos) << e.what();
  }
}

}  // namespace encoder_decoder_test
}  // namespace memplan
