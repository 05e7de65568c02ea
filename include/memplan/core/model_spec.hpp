// The architecture of a transformer: what memplan needs to count its parameters and
// size its caches. Describes an architecture, not a checkpoint.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memplan {

enum class Family {
  gpt2,
  gpt_neox,
  llama,
  mistral,
  mixtral,
  qwen2,
  gemma,
  phi,
  phi3,
  opt,
  falcon,
  bert,
  qwen3,
  qwen3_moe,
  gemma2,
  gemma3,
  deepseek,  // DeepSeek-V2 and V3: multi-head latent attention, routed and shared experts
  gpt_oss,
  llama4,
  olmo2,
  olmoe,
  phimoe,
  granite,
  granitemoe,
  cohere,
  starcoder2,
  gpt_bigcode,
  gptj,
  gpt_neo,
  bloom,
  stablelm,
  mamba,       // Mamba: selective state-space layers, no attention, no MLP
  mamba2,      // Mamba-2: state-space duality layers with heads, no attention, no MLP
  bamba,       // Bamba: Mamba-2 layers with a few attention layers, an MLP in every layer
  jamba,       // Jamba: Mamba layers with an attention layer in eight, experts on every second layer
  nemotron_h,  // Nemotron-H: each layer one of a Mamba-2 mixer, attention or an MLP, no rotary
  falcon_h1,   // Falcon-H1: attention and a Mamba-2 mixer side by side in every layer, then an MLP
  qwen3_next,  // Qwen3-Next, Qwen3.5: gated DeltaNet layers with a gated attention layer in four
  zamba2,      // Zamba2: Mamba-2 layers, some also running one of a few shared attention and MLP blocks
  t5,          // T5, T5 v1.1, Flan-T5: an encoder and a decoder, relative-position buckets, RMS norms
  bart,        // BART: an encoder and a decoder, learned positions, post-LN LayerNorms, biases
  whisper,     // Whisper: an audio encoder (two convolutions over mel bins) and a text decoder
};
enum class MlpKind { plain, gated, none };  // plain: up, down; gated: gate, up, down; none: no MLP (Mamba)
// relative: T5's learned bias per relative-position bucket and head, a table in the first
// layer of each stack (relative_buckets x n_heads).
enum class Positional { learned, rotary, alibi, none, relative };
enum class NormKind { layernorm, rmsnorm };  // layernorm has weight and bias; rmsnorm weight only
enum class LmHead { tied, untied, none };    // tied shares the token embedding's matrix

// What one layer's token mixer is: an attention and what it attends to, which sets the keys
// and values it keeps; or a state-space layer, which keeps a fixed-size state instead.
enum class AttentionKind {
  full,     // every earlier token
  sliding,  // the last sliding_window tokens
  chunked,  // the tokens of its own chunk of attention_chunk tokens (Llama 4)
  nope,     // every earlier token, without rotary embeddings (Llama 4's global layers)
  mla,      // multi-head latent attention: keys and values from a compressed latent (DeepSeek-V2/V3)
  mamba,    // no attention: a state-space layer of the model's ssm sizes (Mamba, Mamba-2, gated DeltaNet)
  mlp,      // no mixer: the layer is an MLP alone (Nemotron-H); a model with such layers has its
            // MLPs only there, and its attention and Mamba layers have none
};
// Norms on the queries and keys before attention: none; head, one weight of d_head shared by
// the heads (Qwen3, Gemma 3); width, one weight over all heads' width (OLMo 2, OLMoE).
enum class QkNorm { none, head, width };

// The sizes of multi-head latent attention (DeepSeek-V2's names).
struct MlaSizes {
  std::uint64_t q_lora_rank = 0;       // the query's compressed rank; 0 = a plain q projection
  std::uint64_t kv_lora_rank = 0;      // rank of the key/value latent
  std::uint64_t qk_nope_head_dim = 0;  // per-head query/key width without rotary embeddings
  std::uint64_t qk_rope_head_dim = 0;  // per-head query/key width with them (one key part shared by all heads)
  std::uint64_t v_head_dim = 0;        // per-head value width
  bool operator==(const MlaSizes&) const = default;
};

// The sizes of a state-space layer (the names of transformers' MambaConfig / Mamba2Config).
// Mamba: in_proj d_model -> 2 d_inner, a depthwise conv1d of d_conv taps, x_proj d_inner ->
// dt_rank + 2 d_state, dt_proj dt_rank -> d_inner, A_log d_inner x d_state, D, out_proj.
// Mamba-2: in_proj d_model -> 2 d_inner + 2 groups d_state + heads, a conv1d over d_inner +
// 2 groups d_state channels, dt_bias, A_log and D per head, a gated RMSNorm, out_proj.
// Gated DeltaNet (Qwen3-Next's linear attention), in Mamba-2's terms: `groups` key heads of
// d_state and `heads` value heads of d_inner / heads. in_proj d_model -> 2 d_inner + 2 groups
// d_state + 2 heads (q, k, v, the output gate z, and b and a per value head), an unbiased
// conv1d over q, k and v (Mamba-2's channels), dt_bias and A_log per head, a gated RMSNorm of
// one value head's width shared by the heads, out_proj. Its state per sequence is Mamba-2's:
// the convolution's last d_conv - 1 columns and heads x d_state x (d_inner / heads).
struct SsmSizes {
  std::uint64_t version = 0;   // 1: Mamba, 2: Mamba-2, 3: gated DeltaNet; 0: no state-space layers
  std::uint64_t d_inner = 0;   // the inner width: expand x d_model (Mamba-2: heads x head_dim)
  std::uint64_t d_state = 0;   // the state per channel (N)
  std::uint64_t d_conv = 0;    // the convolution's taps
  std::uint64_t dt_rank = 0;   // Mamba: rank of the step-size projection
  std::uint64_t heads = 0;     // Mamba-2: heads; gated DeltaNet: value heads
  std::uint64_t groups = 0;    // Mamba-2: groups sharing B and C; gated DeltaNet: key heads
  std::uint64_t chunk = 0;     // Mamba-2, gated DeltaNet: the chunked scan's chunk in tokens
  bool conv_bias = true;       // a bias on the convolution (use_conv_bias)
  bool proj_bias = false;      // a bias on in_proj (use_bias; Falcon-H1's mamba_proj_bias)
  bool out_proj_bias = false;  // a bias on out_proj (use_bias; Falcon-H1's projectors_bias)
  bool gated_norm = true;      // Mamba-2: the gated RMSNorm before out_proj (Falcon-H1's mamba_rms_norm)
  bool dt_bc_norms = false;    // Mamba: RMSNorms on the step sizes, B and C (Jamba)
  bool operator==(const SsmSizes&) const = default;
};

// Zamba2's shared transformer blocks: the attention layers' attention and MLP are `blocks`
// blocks whose weights are stored once and used in turn (attention layer j uses block
// j % blocks). A block reads its layer's input beside the token embeddings (2 d_model wide,
// through an RMSNorm of that width), attends with n_heads x d_head = 2 d_model, projects back
// to d_model and runs a pre-norm MLP without residuals; each use adds a d_model x d_model linear
// of its own and rank-adapter_rank adapters (LoRA pairs) on the MLP's gate_up and, with
// attention_adapters, on q, k and v. Only the attention layers have an MLP; every layer has a
// Mamba-2 mixer (parallel_ssm) and one norm of its own.
struct SharedBlocks {
  std::uint64_t blocks = 0;         // num_mem_blocks; 0: each layer has its own weights
  std::uint64_t adapter_rank = 0;   // the adapters' rank; 0: no adapters
  bool mlp_adapters = false;        // an adapter on each use's gate_up (Zamba2: always)
  bool attention_adapters = false;  // adapters on each use's q, k and v (use_shared_attention_adapter)
  bool operator==(const SharedBlocks&) const = default;
};

// Which vision tower a vision-language model has, and so how its images become tokens.
//   clip:     LLaVA's CLIP ViT: a class token, a biased patch convolution, learned positions,
//             LayerNorms before and after; every image is resized to image_size square and
//             becomes (image_size / patch)^2 tokens (576 at 336 / 14); a two-layer projector.
//   qwen2_vl: Qwen2-VL's ViT: 2-frame patches through an unbiased 3-D convolution, rotary
//             positions, no class token; an image keeps its aspect ratio (resized to multiples
//             of patch x merge pixels between min_pixels and max_pixels) and every merge x
//             merge patches become one token through the merger (a LayerNorm and a two-layer MLP).
//   qwen2_5_vl: Qwen2.5-VL's: Qwen2-VL's images and tokens; RMSNorms (the merger's too) and a
//             gated MLP with biases; most layers attend within windows, a few over the whole image
//             (those set the pass's peak, so every layer is priced as one of them).
//   qwen3_5:  Qwen3.5's ViT: Qwen2-VL's images, tokens, blocks and merger at 16-pixel patches,
//             with a biased patch convolution and a learned position table (num_position_embeddings
//             rows, interpolated to each image) beside the rotary positions; Qwen3-VL's is the same
//             with `deepstack` mergers after the layers its config lists, whose outputs the
//             language model's first layers add (ModelSpec::deepstack_layers).
//   gemma3:   Gemma 3's SigLIP ViT: a biased patch convolution, learned positions, no class
//             token, a LayerNorm after; every image resized to image_size square, its patches
//             average-pooled merge x merge into tokens (256 at 896 / 14 / 4), then an RMSNorm
//             and an unbiased projection.
//   paligemma: PaliGemma's SigLIP ViT, every patch a token ((224 / 14)^2 = 256), one biased
//             linear projection.
//   llava_next: LLaVA-NeXT's: LLaVA's CLIP and projector, images cut into image_size tiles
//             ("anyres": the best of LLaVA-1.6's grid pinpoints, 336 x 672 to 672 x 672) beside a
//             resized whole; the tiles' features unpadded to the image's aspect ratio with a
//             learned newline token ending each row.
//   idefics3: Idefics3's and SmolVLM's SigLIP ViT (PaliGemma's tower) over image_size square
//             tiles: the processor resizes an image's longest side to longest_edge, rounds both
//             sides up to whole tiles and adds the whole image resized to one tile; each tile's
//             patches are pixel-shuffled merge x merge into (image_size / patch / merge)^2
//             tokens through one unbiased linear. In the text, each tile adds two tokens (a
//             separator and its <row_r_col_c>), each row a newline, the whole image three.
// Each has per layer biased q, k, v, o and two norms, and all but qwen2_5_vl a plain MLP (fc1,
// fc2) with biases.
enum class VisionKind { clip, qwen2_vl, qwen2_5_vl, qwen3_5, gemma3, paligemma, llava_next, idefics3, gemma4 };

// A vision tower before the language model and its projector into the language model's width.
struct VisionTower {
  std::uint64_t d_model = 0;     // the tower's hidden size; 0: no vision tower
  std::uint64_t n_layers = 0;    // its encoder layers
  std::uint64_t n_heads = 0;     // its attention heads
  std::uint64_t d_mlp = 0;       // its MLP's intermediate size
  std::uint64_t patch = 0;       // pixels per patch side
  std::uint64_t image_size = 0;  // pixels per (square) image side; Qwen's: 0 (any size)
  VisionKind kind = VisionKind::clip;
  std::uint64_t merge = 1;           // patches per token side: Qwen's spatial_merge_size 2, Gemma 3's pooling 4
  std::uint64_t temporal_patch = 1;  // Qwen's: frames per patch (temporal_patch_size 2; an image is repeated)
  std::uint64_t min_pixels = 0;      // Qwen's: the processor's bounds on a resized image's pixels
  std::uint64_t max_pixels = 0;      //   (the checkpoint's preprocessor_config.json)
  std::uint64_t longest_edge = 0;    // idefics3's: the processor's resize of an image's longest side
                                     //   (size.longest_edge); 0: no splitting, every image one tile
  std::uint64_t positions = 0;       // Qwen3.5's: rows of the learned position table; 0: none
  std::uint64_t deepstack = 0;       // Qwen3-VL's: deepstack mergers (deepstack_visual_indexes), each
                                     //   a LayerNorm over merge^2 patches and the merger's two layers
  std::uint64_t soft_tokens = 0;     // Gemma 4's: the tokens an image becomes at most (its processor
                                     //   keeps the aspect ratio within soft_tokens x merge^2 patches)
  bool operator==(const VisionTower&) const = default;
};

// An encoder before the decoder (T5, BART, Whisper). Its layers have the decoder's sizes,
// attention, MLP, biases and norms (ModelSpec's fields), attend without a causal mask and
// have no cross-attention; every decoder layer adds a cross-attention over the encoder's
// output (q, k, v, o of n_heads x d_head) and its norm. A token encoder shares the
// decoder's token embedding (T5, BART) and mirrors its embedding norm and final norm; an
// audio encoder (Whisper) reads mel-spectrogram frames through two convolutions instead.
struct EncoderStack {
  std::uint64_t n_layers = 0;     // encoder layers; 0: no encoder (decoder-only, or an encoder-only BERT)
  std::uint64_t n_positions = 0;  // rows of the encoder's own learned position table (BART, Whisper); 0: none
  std::uint64_t mel_bins = 0;     // an audio encoder's input channels (Whisper: 80, or 128 for large-v3); 0: tokens
  bool operator==(const EncoderStack&) const = default;
};

// Returns `v` as a Qwen2-VL, Qwen2.5-VL or Qwen3.5 tower (`kind`): merge 2, 2 frames per
// patch and the checkpoints' pixel bounds (preprocessor_config.json: min_pixels 3,136,
// max_pixels 12,845,056 = 16,384 tokens; Qwen3.5's size.shortest_edge 65,536 and
// size.longest_edge 16,777,216, 4096 x 4096).
inline VisionTower qwen_vl_tower(VisionTower v, VisionKind kind) {
  v.kind = kind;
  v.merge = 2;
  v.temporal_patch = 2;
  const bool qwen3_5 = kind == VisionKind::qwen3_5;
  v.min_pixels = qwen3_5 ? 65536 : 56ULL * 56;
  v.max_pixels = qwen3_5 ? 16777216 : 16384ULL * 28 * 28;
  return v;
}

// Returns whether the tower takes an image at its own aspect ratio and size (Qwen's), rather
// than resized to image_size square.
inline bool keeps_image_size(const VisionTower& v) {
  return v.kind == VisionKind::qwen2_vl || v.kind == VisionKind::qwen2_5_vl || v.kind == VisionKind::qwen3_5;
}

// One image as the tower sees it: its patches (the tower's sequence) and the tokens they
// become in the language model's sequence.
struct ImageGrid {
  std::uint64_t width = 0;  // pixels after the processor's resize
  std::uint64_t height = 0;
  std::uint64_t patches = 0;  // the tower's positions per crop (clip: the patches and the class token)
  std::uint64_t tokens = 0;   // the language model's positions per image
  std::uint64_t crops = 1;    // the tower's images per image (LLaVA-NeXT, Idefics3: its tiles and the whole)
};

// Returns how an image of width x height pixels reaches the language model (Gemma 4's: at its
// budget of soft_tokens, width and height 0, whatever the image): clip resizes
// it to image_size square; llava_next and idefics3 tile it as transformers' LLaVA-NeXT and
// Idefics3 processors do;
// Qwen's resize it as transformers' smart_resize does (sides
// rounded half-to-even to multiples of patch x merge, scaled into [min_pixels,
// max_pixels]) and merges merge x merge patches per token. Throws Error(invalid_input)
// ("image_size") for an image Qwen's processor refuses (a side 0, an aspect ratio above 200).
ImageGrid image_grid(const VisionTower& v, std::uint64_t width, std::uint64_t height);

// Returns the tokens one image becomes where every image is resized to image_size square:
// (image_size / patch / merge)^2 (LLaVA: the class token dropped, 576 at 336 / 14; Gemma 3:
// 256); Gemma 4's budget (soft_tokens); 0 for a Qwen tower, whose images differ.
inline std::uint64_t image_tokens(const VisionTower& v) {
  if (v.kind == VisionKind::gemma4) return v.soft_tokens;
  if (v.patch == 0 || v.merge == 0 || keeps_image_size(v)) return 0;
  const std::uint64_t side = v.image_size / v.patch / v.merge;
  return side * side;
}

// Returns the channels the convolution runs over: d_inner (Mamba), or d_inner + 2 groups
// d_state (Mamba-2, whose x, B and C go through it; a gated DeltaNet's v, q and k).
std::uint64_t ssm_conv_channels(const SsmSizes& ssm);

// Which layers hold a per-layer tensor: all, those with a dense MLP, those with experts,
// those whose mixer is attention, those with a state-space mixer, those whose only mixer is one.
// global_attention: the full-attention layers of a model with global heads (has_global_heads);
// local_attention: its other attention layers (in any other model, every attention layer).
enum class LayerSet { none, all, dense_mlp, moe_mlp, attention, ssm, ssm_only, global_attention, local_attention };

// Tensors as a checkpoint stores them (a .gguf file): `copies` tensors of one component, each
// holding `elements` elements in `bytes` bytes of storage type `format`. When a spec carries
// them, the weights are priced from these bytes, not from the architecture at a precision.
struct StoredTensors {
  std::string component;       // weights row: embeddings, attention, mlp, experts, router, norms, lm_head, other
  std::string format;          // the storage type as the file names it: "Q4_K", "F32"
  std::uint64_t elements = 0;  // elements of one tensor
  std::uint64_t bytes = 0;     // bytes of one tensor as stored (block scales included)
  std::uint64_t copies = 1;    // tensors of this component, format and size
  bool operator==(const StoredTensors&) const = default;
};

// A .gguf's tensors by the llama.cpp layer that loads them, each rounded up to the 32-byte
// alignment of ggml's CPU buffers: the input layer (token and position embeddings), each
// block (blk.N.*, with tables such as rope_freqs in block 0) and the output layer (output
// norm and LM head).
struct StoredLayers {
  std::uint64_t input = 0;
  std::vector<std::uint64_t> blocks;
  std::vector<std::uint64_t>
      experts;  // of each block's bytes, the routed experts' (what --n-cpu-moe keeps on the host)
  std::uint64_t output = 0;
  std::uint64_t tied_head = 0;  // no output.weight: token_embd's bytes, which llama.cpp loads again as the head
  bool operator==(const StoredLayers&) const = default;
};

struct ModelSpec {
  std::string name;               // e.g. "llama-2-7b"
  Family family = Family::llama;  // sets the defaults below when a file leaves them out
  std::uint64_t d_model = 0;      // hidden size
  std::uint64_t n_layers = 0;     // transformer blocks
  std::uint64_t n_heads = 0;      // query heads
  std::uint64_t n_kv_heads = 0;   // key/value heads (GQA/MQA); equals n_heads for MHA
  std::uint64_t d_head = 0;       // per-head size: its own figure (Gemma: 256), often d_model / n_heads
  std::uint64_t d_mlp = 0;        // a dense MLP's intermediate size
  MlpKind mlp = MlpKind::gated;
  std::string activation = "silu";  // informational: silu, gelu, gelu_new, relu, ...
  std::uint64_t vocab_size = 0;     // rows of the token embedding
  std::uint64_t max_seq_len = 0;    // longest context the model was built for
  Positional positional = Positional::rotary;
  std::uint64_t n_positions = 0;       // rows of a learned position table; 0 = max_seq_len
  std::uint64_t relative_buckets = 0;  // Positional::relative: the buckets of its bias tables (T5: 32)
  std::uint64_t rotary_dim = 0;        // Positional::rotary: the rotated width of each head; 0 = all of it
                                       // (MLA: qk_rope_head_dim). GPT-J's rotary_dim, Pythia's rotary_pct x d_head
  NormKind norm = NormKind::rmsnorm;
  std::uint64_t norms_per_layer = 2;  // 1 for parallel blocks sharing an input norm
  bool parallel_block = false;        // attention and MLP both read the block input (GPT-NeoX, Falcon, Phi)
  bool final_norm = true;             // a norm after the last block
  bool embedding_norm = false;        // a norm right after the embeddings (BERT)
  std::uint64_t type_vocab_size = 0;  // token-type embedding rows (BERT: 2)
  bool pooler = false;                // BERT's pooler dense layer
  bool attn_qkv_bias = false;         // biases on the q, k, v projections
  bool attn_k_bias = true;            // with attn_qkv_bias: the key projection has one too (Whisper's has none)
  bool attn_out_bias = false;         // bias on the attention output projection
  bool mlp_bias = false;              // biases on the MLP matrices
  LmHead lm_head = LmHead::untied;
  bool lm_head_bias = false;
  QkNorm qk_norm = QkNorm::none;
  // A sigmoid gate on the attention's output from a second half of q_proj: q_proj is 2 n_heads
  // x d_head wide (Qwen3-Next's gated attention).
  bool attn_output_gate = false;
  // Mixture of experts. A MoE layer has `experts` routed experts of d_expert each, a shared
  // expert of d_shared_expert that every token goes through (0: none), and a router.
  std::uint64_t experts = 0;             // routed experts of a MoE layer; 0 = dense MLP everywhere
  std::uint64_t experts_per_token = 0;   // routed experts each token goes to
  std::uint64_t d_expert = 0;            // a routed expert's intermediate size; 0 = d_mlp
  std::uint64_t d_shared_expert = 0;     // the shared experts' intermediate size, all of them together
  std::uint64_t first_dense_layers = 0;  // the first k layers have a dense MLP of d_mlp (DeepSeek)
  std::uint64_t moe_every = 1;           // after them, layer i has experts when (i + 1) % moe_every == 0
  bool router_bias = false;              // a bias (or score correction) per routed expert
  bool shared_expert_gate = false;       // a d_model -> 1 sigmoid gate on the shared expert's output (Qwen)
  bool router_scales = false;            // a scale on the router's input (d_model) and one per expert (Gemma 4)
  std::uint64_t moe_norms = 0;           // norms a MoE layer adds to norms_per_layer (Gemma 4: 3)
  // Attention per layer. The compact form: every layer full, or sliding when sliding_window
  // is set. A pattern: every global_every-th layer (i + 1 a multiple) is global_attention,
  // the others sliding (sliding_window) or chunked (attention_chunk). layer_types, one
  // entry per layer, overrides both.
  std::uint64_t sliding_window = 0;                      // sliding layers' window in tokens; 0 = no sliding layers
  std::uint64_t attention_chunk = 0;                     // chunked layers' chunk in tokens; 0 = none
  std::uint64_t global_every = 0;                        // 0 = no pattern
  AttentionKind global_attention = AttentionKind::full;  // the pattern's global layers: full or nope
  std::vector<AttentionKind> layer_types;
  // Gemma 4's full-attention layers have heads of their own beside its sliding layers'
  // (transformers' Gemma4TextAttention): global_kv_heads key/value heads of global_d_head, the
  // queries n_heads of global_d_head (0: as the other layers'). With global_k_eq_v they have no
  // v_proj: the keys' projection is the values too, both still cached.
  std::uint64_t global_kv_heads = 0;
  std::uint64_t global_d_head = 0;
  bool global_k_eq_v = false;
  bool layer_scalar = false;  // a learned scalar on each layer's output (Gemma 4's layer_scalar)
  // Gemma 4 E2B and E4B: the last kv_shared_layers layers keep no keys and values of their own
  // (they attend over the last earlier layer's of their kind; their k and v weights stay in the
  // checkpoint), and with double_wide_mlp their MLP is 2 d_mlp wide. per_layer_input: the width
  // of each layer's own token embedding (a vocab_size x n_layers x per_layer_input table, a
  // d_model -> n_layers x per_layer_input projection and its norm; per layer a d_model ->
  // per_layer_input gate, a per_layer_input -> d_model projection and a norm); 0: none.
  std::uint64_t kv_shared_layers = 0;
  bool double_wide_mlp = false;
  std::uint64_t per_layer_input = 0;
  MlaSizes mla;                  // set when the layers are mla (DeepSeek); d_head is then qk_nope + qk_rope
  bool attention_sinks = false;  // a learned sink logit per head and layer (gpt-oss)
  // tanh soft-capping of the final logits (Gemma 2): no parameters, but transformers writes it as
  // three ops, so a second logits-sized tensor is alive while they run.
  bool final_logit_softcapping = false;
  std::uint64_t mtp_layers = 0;  // multi-token-prediction layers the checkpoint adds; not counted
  // Multimodal rotary positions (Qwen2-VL, Qwen2.5-VL, Qwen3-VL's M-RoPE): each token's position
  // is four ids (time, height, width and one unused), which llama.cpp's graph takes as its input.
  bool mrope = false;
  // Qwen3-VL's text model: its first deepstack_layers layers each add an image's features from
  // one of the tower's deepstack mergers to their output, so llama.cpp's input embeddings are
  // (1 + deepstack_layers) x d_model wide for text too. No parameters of their own.
  std::uint64_t deepstack_layers = 0;
  // State-space layers. With ssm sizes and no layer_types every layer is one (Mamba); a hybrid
  // lists which are "mamba" in layer_types. A model without attention layers leaves n_heads,
  // n_kv_heads and d_head 0.
  SsmSizes ssm;
  // Every attention layer also runs a Mamba-2 mixer of the ssm sizes on the same input, their
  // outputs summed (Falcon-H1; Zamba2, whose "mamba" layers have the mixer alone): each
  // attention layer keeps keys and values and a state.
  bool parallel_ssm = false;
  SharedBlocks shared;  // Zamba2's shared attention and MLP blocks (see SharedBlocks)
  // A vision tower and its projector (LLaVA): weights of their own; the language model's
  // sizes are the fields above.
  VisionTower vision;
  // An encoder before this decoder (T5, BART, Whisper): the fields above describe the
  // decoder, whose layers then each have a cross-attention too.
  EncoderStack encoder;
  // The weights as a checkpoint stores them (a .gguf: ggml types, k-quants and i-quants); empty
  // for an architecture. When set, estimate_weights and weight_allocations price these bytes
  // and the weights precision no longer applies to them; the fields above still size the
  // caches and activations.
  std::vector<StoredTensors> stored_weights;
  std::optional<StoredLayers> stored_layers;  // the same tensors by llama.cpp layer (a .gguf)
  // How a quantised checkpoint stores stored_weights, in one line ("AWQ 4-bit, groups of 128
  // (quantization_config)"); empty when they are the file itself (a .gguf). When set, a
  // `precision` given explicitly prices the architecture at that precision instead, and says so.
  std::string stored_weights_source;
  // What importing the checkpoint assumed that every estimate should show (a quantisation
  // method memplan does not price); bind() makes each a warning of the plan.
  std::vector<std::string> import_warnings;

  bool operator==(const ModelSpec&) const = default;
};

// Returns layer `layer`'s attention kind, from layer_types, the pattern or the compact form
// (see ModelSpec). Assumes a validated spec and layer < n_layers.
AttentionKind attention_kind(const ModelSpec& spec, std::uint64_t layer);

// Returns whether the full-attention layers have heads of their own (global_kv_heads,
// global_d_head or global_k_eq_v set: Gemma 4).
bool has_global_heads(const ModelSpec& spec);

// Returns the spec as a full-attention layer of a model with global heads sees it: n_kv_heads
// and d_head its global ones. Other specs come back unchanged.
ModelSpec global_layer_view(const ModelSpec& spec);

// Returns how many layers keep keys and values of each attention kind: attention_layer_counts
// less the last kv_shared_layers layers (Gemma 4 E2B, E4B), which read an earlier layer's.
std::vector<std::pair<AttentionKind, std::uint64_t>> cache_layer_counts(const ModelSpec& spec);

// Returns how many layers have each attention kind (mamba included, an MLP alone not), kinds
// in the order they first appear, in closed form (n_layers may be far too many to list).
// Assumes a validated spec.
std::vector<std::pair<AttentionKind, std::uint64_t>> attention_layer_counts(const ModelSpec& spec);

// Returns whether layer `layer` has experts: experts > 0, at or after first_dense_layers,
// and (layer + 1) a multiple of moe_every.
bool is_moe_layer(const ModelSpec& spec, std::uint64_t layer);

// Returns how many of layers [first, first + count) hold tensors of `set` (none: 0).
std::uint64_t layers_in(const ModelSpec& spec, LayerSet set, std::uint64_t first, std::uint64_t count);

// Returns how many of Zamba2's shared blocks are stored in layers [first, first + count): block b
// in the attention layer first using it, the b-th (counting from 0).
std::uint64_t shared_blocks_in(const ModelSpec& spec, std::uint64_t first, std::uint64_t count);

// Returns whether layer `layer` holds tensors of `set`.
bool layer_holds(const ModelSpec& spec, LayerSet set, std::uint64_t layer);

// Returns a routed expert's intermediate size: d_expert, or d_mlp when 0.
inline std::uint64_t expert_width(const ModelSpec& s) { return s.d_expert != 0 ? s.d_expert : s.d_mlp; }

// Returns how many layers have a state-space mixer (attention_kind mamba, and every attention
// layer of a model with parallel_ssm).
std::uint64_t ssm_layers(const ModelSpec& spec);
// Returns how many layers have a state-space mixer and no attention (attention_kind mamba).
std::uint64_t ssm_only_layers(const ModelSpec& spec);
// Returns the state-space layers in words for messages: "24 state-space (Mamba) layers", or a
// parallel hybrid's "36 layers that each run a Mamba-2 mixer beside their attention".
std::string ssm_layers_text(const ModelSpec& spec);
// Returns how many layers are an MLP alone (attention_kind mlp).
std::uint64_t mlp_only_layers(const ModelSpec& spec);
// Returns how many layers have attention (every layer that is neither a state-space layer nor
// an MLP alone).
inline std::uint64_t attention_layers(const ModelSpec& s) {
  return s.n_layers - mlp_only_layers(s) - ssm_only_layers(s);
}
// Returns whether the layer kind attends (keeps keys and values).
inline bool attends(AttentionKind k) { return k != AttentionKind::mamba && k != AttentionKind::mlp; }

// Returns whether `spec` has an encoder before its decoder (T5, BART, Whisper).
inline bool is_encoder_decoder(const ModelSpec& s) { return s.encoder.n_layers != 0; }

// Returns an encoder-decoder's encoder as a model of its own, for the estimators that size
// one stack: encoder.n_layers layers of the decoder's sizes, no encoder, no LM head.
ModelSpec encoder_as_model(const ModelSpec& spec);

// Returns a vision-language model's vision tower as a model of its own, for the forward
// pass's working set: its layers, heads and MLP, LayerNorms (Qwen2.5-VL's and Gemma 4's RMS
// norms and gated MLP), no embedding and no LM head.
ModelSpec vision_as_model(const ModelSpec& spec);

// Returns whether every layer has the same attention kind and MLP (a stack of identical blocks).
bool uniform_layers(const ModelSpec& spec);

// Returns a spec holding `family`'s conventions (MLP kind, positions, norm, biases, head
// tying); the sizes are left 0 for the caller to fill.
ModelSpec family_defaults(Family family);

// Checks that a filled spec is consistent. Throws Error(invalid_input) whose key() names
// the offending field: zero sizes, n_kv_heads not dividing n_heads, experts_per_token
// outside 1..experts, a learned position table of 0 rows, and the like; Error(overflow)
// keyed at the largest size when the parameter count does not fit in 64 bits.
void validate(const ModelSpec& spec);

std::string to_string(Family value);
std::string to_string(MlpKind value);
std::string to_string(Positional value);
std::string to_string(NormKind value);
std::string to_string(LmHead value);
std::string to_string(AttentionKind value);
std::string to_string(QkNorm value);
std::string to_string(VisionKind value);

// Each parser accepts exactly the spellings to_string returns and throws
// Error(invalid_input, key = the field name) listing them, with a did-you-mean.
Family parse_family(std::string_view text);
MlpKind parse_mlp_kind(std::string_view text);
Positional parse_positional(std::string_view text);
NormKind parse_norm_kind(std::string_view text);
LmHead parse_lm_head(std::string_view text);
AttentionKind parse_attention_kind(std::string_view text, const char* key = "layer_types");
QkNorm parse_qk_norm(std::string_view text);
VisionKind parse_vision_kind(std::string_view text);

}  // namespace memplan
