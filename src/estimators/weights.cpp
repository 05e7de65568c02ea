#include "memplan/estimators/weights.hpp"

#include <algorithm>
#include <iterator>

#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

bool stays_unquantized(const TensorGroup& g, const WeightsOptions& o) {
  if (!is_quantized(o.precision)) return false;
  if (g.role == TensorRole::linear) return false;
  if (g.role == TensorRole::lm_head) return !o.quantize_lm_head;
  return true;
}

std::string shape(const TensorGroup& g) {
  std::string s = (g.copies > 1 ? std::to_string(g.copies) + " x " : "") + std::string(g.name) + " " +
                  std::to_string(g.rows);
  if (g.cols > 1) s += "x" + std::to_string(g.cols);
  return s;
}

// Builds "(32 x q 4096x4096 + 32 x k 1024x4096) @int4-g128 + (32 x q.bias 4096) @fp16",
// one parenthesised run per precision.
class FormulaBuilder {
 public:
  void add(const TensorGroup& g, const Precision& p) {
    const std::string name = to_string(p);
    if (name != open_precision_) {
      close();
      text_ += (text_.empty() ? "(" : " + (");
      open_precision_ = name;
    } else {
      text_ += " + ";
    }
    text_ += shape(g);
  }
  std::string finish() {
    close();
    return text_;
  }

 private:
  void close() {
    if (!open_precision_.empty()) text_ += ") @" + open_precision_;
    open_precision_.clear();
  }
  std::string text_;
  std::string open_precision_;
};

std::uint64_t tensor_bytes(const TensorGroup& g, const WeightsOptions& o) {
  const Precision& p = stays_unquantized(g, o) ? o.unquantized : o.precision;
  return ceil_div(matrix_bits(p, g.rows, g.cols), 8);  // rounded up once per tensor: one allocation
}

// The rows of stored weights, in this order; a component not listed comes after, in the
// order the checkpoint gives it.
constexpr std::string_view kStoredOrder[] = {"embeddings", "attention", "mlp",    "experts", "router",
                                             "norms",      "lm_head",   "pooler", "other"};

std::size_t stored_rank(std::string_view component) {
  for (std::size_t i = 0; i < std::size(kStoredOrder); ++i) {
    if (kStoredOrder[i] == component) return i;
  }
  return std::size(kStoredOrder);
}

// Weights as a checkpoint stores them (ModelSpec::stored_weights): each row sums its
// component's tensors, bytes as stored; the requested precision does not apply.
Breakdown estimate_stored_weights(const ModelSpec& spec) {
  std::vector<const StoredTensors*> groups;
  for (const StoredTensors& t : spec.stored_weights) groups.push_back(&t);
  std::stable_sort(groups.begin(), groups.end(), [](const StoredTensors* a, const StoredTensors* b) {
    return stored_rank(a->component) < stored_rank(b->component);
  });

  Item weights{"weights", Bytes(0), "", 0, "", {}};
  std::vector<std::string> formats;
  std::uint64_t tensors = 0;
  for (const StoredTensors* t : groups) {
    auto row = std::find_if(weights.detail.begin(), weights.detail.end(),
                            [&](const Item& r) { return r.name == t->component; });
    if (row == weights.detail.end()) {
      weights.detail.push_back(Item{t->component, Bytes(0), "", 0, "", {}});
      row = std::prev(weights.detail.end());
    }
    row->bytes = row->bytes.plus(Bytes(t->bytes).times(t->copies, "stored bytes of", t->component), "stored bytes of",
                                 t->component);
    row->params = checked_add(*row->params, checked_mul(t->elements, t->copies, "stored elements of", t->component),
                              "stored elements of", t->component);
    row->formula += (row->formula.empty() ? "" : " + ") + group_digits(t->copies) + " x " + t->format + " " +
                    group_digits(t->bytes) + " B (" + group_digits(t->elements) + " elements)";
    tensors = checked_add(tensors, t->copies, "stored tensors");
    if (std::find(formats.begin(), formats.end(), t->format) == formats.end()) formats.push_back(t->format);
  }
  for (const Item& row : weights.detail) {
    weights.bytes = weights.bytes.plus(row.bytes, "weights bytes");
    weights.params = checked_add(*weights.params, *row.params, "stored elements");
  }
  const bool has_head = std::any_of(groups.begin(), groups.end(),
                                    [](const StoredTensors* t) { return t->component == "lm_head"; });
  if (spec.lm_head == LmHead::tied && !has_head) {
    weights.detail.push_back(
        {"lm_head", Bytes(0), "shares token_embedding", 0, "tied to the token embedding: no extra memory", {}});
  }
  std::sort(formats.begin(), formats.end());
  std::string format_list;
  for (const std::string& f : formats) format_list += (format_list.empty() ? "" : ", ") + f;
  if (spec.stored_weights_source.empty()) {
    weights.formula = group_digits(tensors) + " tensors as stored (" + format_list +
                      "): each elements / block size x bytes per block";
    weights.note = "priced from the checkpoint's stored types; the weights precision does not apply to them";
  } else {
    weights.formula = group_digits(tensors) + " tensors as stored (" + format_list +
                      "): quantised layers with their scales, zero-points and indices";
    weights.note = "priced as the checkpoint stores them: " + spec.stored_weights_source +
                   "; a `precision` given explicitly prices the architecture instead";
  }
  return Breakdown{{weights}};
}

}  // namespace

std::uint64_t weight_tensor_bytes(const TensorGroup& group, const WeightsOptions& options) {
  return tensor_bytes(group, options);
}

namespace {

// The width each head rotates: rotary_dim, MLA's rotary part, or the whole head.
std::uint64_t rotary_width(const ModelSpec& s) {
  if (s.rotary_dim != 0) return s.rotary_dim;
  if (s.mla.qk_rope_head_dim != 0) return s.mla.qk_rope_head_dim;
  return s.d_head;
}

std::uint64_t buffer_bytes(const ModelBuffer& b) {
  return checked_mul(b.elements, b.element_bytes, "bytes of buffer", b.name);
}

}  // namespace

std::vector<ModelBuffer> model_buffers(const ModelSpec& spec, const WeightsOptions& options) {
  std::vector<ModelBuffer> out;
  // Buffers are made in the model's dtype: a quantised model's is the unquantised one.
  const Precision& dtype = is_quantized(options.precision) ? options.unquantized : options.precision;
  const std::uint64_t dtype_bytes = element_bits(dtype.format) / 8;
  const bool rotary = spec.positional == Positional::rotary && attention_layers(spec) > 0;
  // Gemma 3 rotates its sliding and its full layers with different bases: two tables.
  const std::uint64_t settings = spec.family == Family::gemma3 ? 2 : 1;
  switch (options.buffers) {
    case BufferRuntime::transformers: {
      // inv_freq = 1 / base^(arange(0, dim, 2) / dim), kept with a copy for dynamic rope
      // types (original_inv_freq), in fp32, once per model.
      if (rotary) {
        const std::uint64_t half = ceil_div(rotary_width(spec), 2);
        out.push_back({"rotary_emb.inv_freq", half, 4, settings});
        out.push_back({"rotary_emb.original_inv_freq", half, 4, settings});
      }
      if (keeps_image_size(spec.vision) && spec.vision.n_heads != 0) {
        // Qwen2-VL's tower: VisionRotaryEmbedding(head_dim / 2), the same pair.
        const std::uint64_t half = ceil_div(spec.vision.d_model / spec.vision.n_heads / 2, 2);
        out.push_back({"visual.rotary_pos_emb.inv_freq", half, 4, 1});
        out.push_back({"visual.rotary_pos_emb.original_inv_freq", half, 4, 1});
      }
      // Falcon-H1 scales in_proj's output by its ssm_multipliers: one mup_vector over in_proj's
      // width, registered in every mixer but a single tensor.
      if (spec.family == Family::falcon_h1 && spec.ssm.version == 2) {
        const std::uint64_t width = checked_add(checked_add(spec.ssm.d_inner, ssm_conv_channels(spec.ssm),
                                                            "in_proj width"),
                                                spec.ssm.heads, "in_proj width");
        out.push_back({"mamba.mup_vector", width, dtype_bytes, 1});
      }
      // Gemma 2 and 3 scale the embeddings by sqrt(d_model), a scalar buffer in the model dtype.
      if (spec.family == Family::gemma2 || spec.family == Family::gemma3) {
        out.push_back({"embed_tokens.embed_scale", 1, dtype_bytes, 1});
      }
      break;
    }
    case BufferRuntime::vllm:
      // RotaryEmbedding's cos_sin_cache: cos and sin for every position up to
      // max_position_embeddings, rotary width wide, cast to the model dtype; get_rope shares
      // one per setting across layers.
      if (rotary) {
        out.push_back({"rotary_emb.cos_sin_cache",
                       checked_mul(spec.max_seq_len, rotary_width(spec), "cos_sin_cache elements"), dtype_bytes,
                       settings});
      }
      break;
    case BufferRuntime::none: break;
  }
  return out;
}

std::vector<TensorRun> weight_allocations(const ModelSpec& spec, const WeightsOptions& options) {
  std::vector<TensorRun> out;
  if (!spec.stored_weights.empty()) {
    for (const StoredTensors& t : spec.stored_weights) out.push_back({t.bytes, t.copies});
  } else {
    for (const TensorGroup& g : model_tensors(spec)) out.push_back({tensor_bytes(g, options), g.copies});
  }
  for (const ModelBuffer& b : model_buffers(spec, options)) out.push_back({buffer_bytes(b), b.copies});
  return out;
}

namespace {

// The model's buffers as a weights row of their own, without parameters.
void add_buffers(const ModelSpec& spec, const WeightsOptions& options, Item& weights) {
  const std::vector<ModelBuffer> buffers = model_buffers(spec, options);
  if (buffers.empty()) return;
  Item row{"buffers", Bytes(0), "", std::nullopt, "", {}};  // no parameters
  for (const ModelBuffer& b : buffers) {
    row.bytes = row.bytes.plus(Bytes(buffer_bytes(b)).times(b.copies, "bytes of buffer", b.name), "buffers");
    row.formula += (row.formula.empty() ? "" : " + ") + (b.copies == 1 ? "" : group_digits(b.copies) + " x ") + b.name +
                   " " + group_digits(b.elements) + " x " + std::to_string(b.element_bytes) + " B";
  }
  weights.bytes = weights.bytes.plus(row.bytes, "weights bytes");
  weights.detail.push_back(std::move(row));
}

// The multi-token-prediction layers, counted apart and said so.
void note_mtp(const ModelSpec& spec, Item& weights) {
  if (spec.mtp_layers == 0) return;
  const MtpParameters mtp = mtp_parameters(spec);
  const bool qwen = spec.family == Family::qwen3_next;  // its MTP layer shares the embedding and head
  const std::string line = "not counted: the checkpoint's " + std::to_string(spec.mtp_layers) +
                           " multi-token-prediction layer" + (spec.mtp_layers == 1 ? "" : "s") + ", " +
                           group_digits(mtp.own) + " params of its own (a block, " + (qwen ? "fc" : "eh_proj") +
                           " and three norms" +
                           (qwen ? ", sharing the embedding and head)"
                                 : ") and " + group_digits(mtp.stored - mtp.own) +
                                       " in its copies of the embedding and head") +
                           "; transformers skips it, vLLM loads it only for speculative decoding (method " +
                           (qwen ? "mtp" : "deepseek_mtp") + ")";
  weights.note = weights.note.empty() ? line : weights.note + "; " + line;
}

}  // namespace

Breakdown estimate_weights(const ModelSpec& spec, const WeightsOptions& options) {
  if (!spec.stored_weights.empty()) {
    Breakdown stored = estimate_stored_weights(spec);
    add_buffers(spec, options, stored.components.front());
    note_mtp(spec, stored.components.front());
    return stored;
  }
  Item weights{"weights", Bytes(0), "", 0, "", {}};
  std::vector<FormulaBuilder> formulas;
  std::vector<std::string> kept_components;

  for (const TensorGroup& g : model_tensors(spec)) {
    if (weights.detail.empty() || weights.detail.back().name != g.component) {
      weights.detail.push_back({std::string(g.component), Bytes(0), "", 0, "", {}});
      formulas.emplace_back();
    }
    Item& row = weights.detail.back();
    const bool kept = stays_unquantized(g, options);
    const Precision& p = kept ? options.unquantized : options.precision;
    row.bytes = row.bytes.plus(Bytes(tensor_bytes(g, options)).times(g.copies, "bytes of", g.name), "bytes of",
                               g.component);
    row.params = checked_add(*row.params, group_parameters(g), "parameters of", g.component);
    formulas.back().add(g, p);
    if (kept && g.role != TensorRole::bias && (kept_components.empty() || kept_components.back() != g.component)) {
      kept_components.emplace_back(g.component);
    }
  }

  const bool quantized = is_quantized(options.precision);
  for (std::size_t i = 0; i < weights.detail.size(); ++i) {
    Item& row = weights.detail[i];
    row.formula = formulas[i].finish() + (quantized ? ", each tensor ceil(bits / 8) bytes" : "");
    weights.bytes = weights.bytes.plus(row.bytes, "weights bytes");
    weights.params = checked_add(*weights.params, *row.params, "total parameters");
  }
  if (spec.lm_head == LmHead::tied) {
    weights.detail.push_back(
        {"lm_head", Bytes(0), "shares token_embedding", 0, "tied to the token embedding: no extra memory", {}});
  }

  if (quantized) {
    weights.formula = "linear layers at " + describe(options.precision) + "; other tensors at " +
                      describe(options.unquantized);
    if (!kept_components.empty()) {
      weights.note = "quantisers (bitsandbytes, GPTQ, AWQ) leave " + quoted_list(kept_components, "and") +
                     " unquantised: kept in " + to_string(options.unquantized);
    }
  } else {
    weights.formula = group_digits(*weights.params) + " params at " + describe(options.precision);
  }
  add_buffers(spec, options, weights);
  note_mtp(spec, weights);
  return Breakdown{{weights}};
}

BitsandbytesVersion parse_bitsandbytes_version(std::string_view text) {
  const std::optional<ReleaseNumbers> r = release_numbers(text);
  if (!r) {
    throw Error(ErrorKind::invalid_input,
                "`bitsandbytes_version` is a bitsandbytes release such as 0.43.1 or 0.45, not '" + printable(text) +
                    "'",
                "bitsandbytes_version");
  }
  return {r->parts[0], r->parts[1], r->parts[2]};
}

std::string to_string(const BitsandbytesVersion& v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

BitsandbytesLinears bitsandbytes_linears(const ModelSpec& spec, const WeightsOptions& options) {
  if (!spec.stored_weights.empty()) {  // a checkpoint's layout: bnb-nf4[-dq], bnb-fp4[-dq], bnb-int8
    for (const StoredTensors& t : spec.stored_weights) {
      if (t.format == "bnb-int8") return BitsandbytesLinears::eight_bit;
      if (t.format.starts_with("bnb-")) return BitsandbytesLinears::four_bit;
    }
    return BitsandbytesLinears::none;
  }
  const Precision& p = options.precision;
  if ((p.format == Format::nf4 || p.format == Format::fp4) && p.layout == ScaleLayout::flat_blocks)
    return BitsandbytesLinears::four_bit;
  if (p.format == Format::int8 && p.layout == ScaleLayout::per_row) return BitsandbytesLinears::eight_bit;
  return BitsandbytesLinears::none;
}

std::uint64_t largest_quantized_linear(const ModelSpec& spec, const WeightsOptions& options,
                                       std::initializer_list<std::string_view> components) {
  const auto wanted = [&](std::string_view c) {
    return std::find(components.begin(), components.end(), c) != components.end();
  };
  std::uint64_t largest = 0;
  if (!spec.stored_weights.empty()) {
    for (const StoredTensors& t : spec.stored_weights) {
      if (t.format.starts_with("bnb-") && wanted(t.component)) largest = std::max(largest, t.elements);
    }
    return largest;
  }
  if (!is_quantized(options.precision)) return 0;
  for (const TensorGroup& g : model_tensors(spec)) {
    if (g.role == TensorRole::linear && wanted(g.component))
      largest = std::max(largest, checked_mul(g.rows, g.cols, "elements of", std::string(g.name)));
  }
  return largest;
}

bool bitsandbytes_dequantizes(const WeightsOptions& options, std::uint64_t rows) {
  return options.bitsandbytes < BitsandbytesVersion{0, 50, 0} ? rows > 1 : rows > 4;
}

}  // namespace memplan
