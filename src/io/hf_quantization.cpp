// quantization_config -> the checkpoint's stored weights. Each method's layout is
// quantized_linear_bytes's (core/quantized_checkpoint.hpp); this file reads the keys, decides
// which tensors each library leaves unquantised, and names the modules as transformers does
// for the llama-style families. docs/quantization.md has the table and the sources.
#include "hf_quantization.hpp"

#include <algorithm>
#include <cctype>
#include <optional>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/quantized_checkpoint.hpp"
#include "memplan/core/text.hpp"

namespace memplan::detail {

namespace {

// Families whose modules carry the names module_name gives (LlamaForCausalLM and its kin,
// the MoE families with separate expert modules, DeepSeek's latent attention).
constexpr std::string_view kNamedFamilies[] = {"cohere",  "cohere2",     "deepseek_v2", "deepseek_v3", "gemma",
                                               "gemma2",  "gemma3_text", "gpt_oss",     "granite",     "llama",
                                               "mistral", "mixtral",     "olmo2",       "olmoe",       "phimoe",
                                               "qwen2",   "qwen3",       "qwen3_moe",   "stablelm"};

// Sizes in a quantization_config beyond this are typos, not layouts.
constexpr std::uint64_t kMaxQuantSize = 1ULL << 20;

// The most (tensor copy, pattern) pairs matched against module names: a hostile list on a
// hostile layer count must not turn into a long loop.
constexpr std::uint64_t kMaxMatches = 1ULL << 22;

// How a library decides that a module name is in its list of modules to leave alone.
enum class Match {
  substring,       // AWQ, GPTQ, fp8, MXFP4 (transformers: `key in name`; '*' as a wildcard)
  bnb,             // bitsandbytes: `key + "." in name or key == name`
  exact_or_regex,  // compressed-tensors `ignore`: the name, or "re:" and a regex matched at the start (regex_as_glob)
};

struct Method {
  CheckpointQuantization q;
  std::string description;    // "AWQ 4-bit, groups of 128"
  bool router = false;        // the MoE router (an nn.Linear) is quantised too
  bool head = false;          // lm_head is quantised unless listed (compressed-tensors' `targets: Linear`)
  bool experts_only = false;  // MXFP4: gpt-oss's experts and nothing else
  Match match = Match::substring;
  std::string list_key;  // the config key of the modules left unquantised
  std::vector<std::string> keep;
  std::optional<JsonMap> args;  // compressed-tensors' weights arguments, where their keys' errors point
};

struct Dtype {
  std::string name;  // bf16, fp16, fp32
  std::uint64_t bytes = 2;
};

// '*' matches any run of characters, '?' (when `any_char`) any one; everything else itself.
// Greedy with one backtrack point: linear in practice, never exponential.
bool glob(std::string_view text, std::string_view pattern, bool any_char = false) {
  std::size_t t = 0, p = 0, star = std::string_view::npos, mark = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = t;
    } else if (p < pattern.size() && (pattern[p] == text[t] || (any_char && pattern[p] == '?'))) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

// compressed-tensors' "re:" entries as a glob: Python's re.match anchors at the start only,
// so an open end becomes '*'. Only the regex forms ignore lists use are read ('.', '.*',
// '\.', a final '$', names): a general regex engine would let a hostile pattern backtrack
// for ever. Returns nullopt for anything else.
std::optional<std::string> regex_as_glob(std::string_view re) {
  std::string out;
  bool anchored = false;
  for (std::size_t i = 0; i < re.size(); ++i) {
    const char c = re[i];
    if (c == '.' && i + 1 < re.size() && re[i + 1] == '*') {
      out += '*';
      ++i;
    } else if (c == '.') {
      out += '?';
    } else if (c == '\\' && i + 1 < re.size() && re[i + 1] == '.') {
      out += '.';
      ++i;
    } else if (c == '$' && i + 1 == re.size()) {
      anchored = true;
    } else if (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-') {
      out += c;
    } else {
      return std::nullopt;
    }
  }
  if (!anchored) out += '*';
  return out;
}

class Matcher {
 public:
  Matcher(const Method& m, const JsonMap& q) : match_(m.match) {
    for (const std::string& key : m.keep) {
      Pattern p{key, false};
      if (match_ == Match::exact_or_regex && key.starts_with("re:")) {
        const std::optional<std::string> pattern = regex_as_glob(std::string_view(key).substr(3));
        if (!pattern) {
          q.fail(m.list_key, "'" + m.list_key + "' entry '" + printable(key) +
                                 "' is a regular expression memplan does not read: it reads names, '.', '.*', "
                                 "'\\.' and a final '$'");
        }
        p = Pattern{*pattern, true};
      }
      patterns_.push_back(std::move(p));
    }
  }

  bool empty() const { return patterns_.empty(); }
  std::size_t size() const { return patterns_.size(); }

  bool kept(const std::string& name) const {
    for (const Pattern& p : patterns_) {
      switch (match_) {
        case Match::substring:
          if (p.key.find('*') != std::string::npos ? glob(name, "*" + p.key + "*")
                                                   : name.find(p.key) != std::string::npos) {
            return true;
          }
          break;
        case Match::bnb:
          if (name == p.key || name.find(p.key + ".") != std::string::npos) return true;
          break;
        case Match::exact_or_regex:
          if (p.regex ? glob(name, p.key, true) : name == p.key) return true;
          break;
      }
    }
    return false;
  }

 private:
  struct Pattern {
    std::string key;  // the name, or the regex as a glob
    bool regex = false;
  };
  Match match_;
  std::vector<Pattern> patterns_;
};

// transformers' module name of one copy of a tensor group (layer `layer`, expert `expert`).
std::string module_name(const TensorGroup& g, Family family, std::uint64_t layer, std::uint64_t expert) {
  const std::string block = "model.layers." + std::to_string(layer) + ".";
  const std::string n(g.name);
  if (g.component == "embeddings") return "model.embed_tokens";
  if (g.component == "lm_head") return "lm_head";
  const bool gpt_oss = family == Family::gpt_oss;
  // Mixtral and Phi-MoE keep their experts in block_sparse_moe; the others in mlp.
  const bool sparse_block = family == Family::mixtral || family == Family::phimoe;
  if (g.component == "router")
    return block + (gpt_oss ? "mlp.router" : sparse_block ? "block_sparse_moe.gate" : "mlp.gate");
  if (g.component == "attention") {
    if (n == "kv_a") return block + "self_attn.kv_a_proj_with_mqa";  // DeepSeek's latent and rotary key
    return block + "self_attn." + n + "_proj";
  }
  if (g.component == "experts" && gpt_oss) {  // one fused tensor per projection for all experts
    return block + "mlp.experts." + (n == "down" ? "down_proj" : "gate_up_proj");
  }
  if (g.component == "experts" && sparse_block) {
    // Mixtral's experts: w1 the gate, w3 the up projection, w2 the down projection.
    const std::string w = n == "gate" ? "w1" : n == "up" ? "w3" : "w2";
    return block + "block_sparse_moe.experts." + std::to_string(expert) + "." + w;
  }
  if (g.component == "experts") return block + "mlp.experts." + std::to_string(expert) + "." + n + "_proj";
  if (n.starts_with("shared_")) return block + "mlp.shared_experts." + n.substr(7) + "_proj";  // DeepSeek
  return block + "mlp." + n + "_proj";
}

std::vector<std::string> string_list(const JsonMap& q, const std::string& key) {
  std::vector<std::string> out;
  if (!q.has(key)) return out;
  const nlohmann::json& v = q.value(key);
  if (!v.is_array()) q.fail(key, "'" + key + "' must be a list of module names, got " + json_type_name(v));
  for (const nlohmann::json& e : v) {
    if (!e.is_string()) q.fail(key, "'" + key + "' must list module names as strings, got " + json_type_name(e));
    const std::string s = e.get<std::string>();
    if (s.empty() || s.size() > 1000)
      q.fail(key, "'" + key + "' lists a module name of " + std::to_string(s.size()) + " characters");
    out.push_back(s);
  }
  return out;
}

// A group size: a positive count, or -1 for one group per row (returned as 0).
std::uint64_t group_size(const JsonMap& q, const std::string& key, std::uint64_t fallback) {
  if (!q.has(key)) return fallback;
  const nlohmann::json& v = q.value(key);
  if (v.is_number_integer() && !v.is_number_unsigned() && v.get<std::int64_t>() == -1) return 0;
  if (v.is_number_integer() && !v.is_number_unsigned()) {
    q.fail(key, "'" + key + "' must be a positive group size or -1 (a whole row), got " + v.dump());
  }
  return q.integer(key, 1, kMaxQuantSize);
}

std::string choice(const JsonMap& q, const std::string& key, const std::vector<std::string>& accepted,
                   const std::string& fallback) {
  std::string v = q.optional_string(key).value_or(fallback);
  if (std::find(accepted.begin(), accepted.end(), v) == accepted.end()) {
    q.fail(key, "'" + key + "' is '" + printable(v) + "'" + did_you_mean(v, accepted) + "; memplan reads " +
                    quoted_list(accepted, "or"));
  }
  return v;
}

std::string groups_text(std::uint64_t group) {
  return group == 0 ? "one group per row" : "groups of " + std::to_string(group);
}

Method read_awq(const JsonMap& q, std::vector<std::string>& notes) {
  Method m;
  m.q.layout = QuantLayout::awq;
  m.q.bits = q.has("w_bit") && !q.has("bits") ? q.integer("w_bit", 1, 64) : q.integer("bits", 1, 64);
  if (m.q.bits != 4)
    q.fail(q.has("bits") ? "bits" : "w_bit",
           "AWQ stores 4-bit weights only (AutoAWQ's WQLinear_GEMM), not " + std::to_string(m.q.bits));
  m.q.group_size = group_size(q, q.has("q_group_size") && !q.has("group_size") ? "q_group_size" : "group_size", 128);
  if (!q.boolean_or("zero_point", true))
    notes.push_back("quantization_config: zero_point false: AutoAWQ's GEMM layer stores qzeros all the same");
  const std::string version = q.optional_string("version").value_or("gemm");
  const std::string lower = lowered(version);
  if (lower != "gemm" && lower != "exllama" && lower != "ipex") {
    notes.push_back("quantization_config: AWQ version '" + printable(version) +
                    "': priced in the GEMM layout (qweight, qzeros, scales), which GEMV's and Marlin's repacking keeps "
                    "within a few percent");
  }
  m.description = "AWQ 4-bit, " + groups_text(m.q.group_size) + ", int32 qweight and qzeros, fp16 scales";
  m.list_key = "modules_to_not_convert";
  return m;
}

Method read_gptq(const JsonMap& q, std::vector<std::string>& notes) {
  Method m;
  m.q.layout = QuantLayout::gptq;
  m.q.bits = q.integer("bits", 1, 64);
  if (m.q.bits != 2 && m.q.bits != 3 && m.q.bits != 4 && m.q.bits != 8) {
    q.fail("bits", "GPTQ stores 2, 3, 4 or 8-bit weights, not " + std::to_string(m.q.bits));
  }
  m.q.group_size = group_size(q, "group_size", 128);
  const bool desc_act = q.boolean_or("desc_act", false);
  q.boolean_or("sym", true);
  notes.push_back(std::string("quantization_config: desc_act ") + (desc_act ? "true" : "false") +
                  ", sym: auto-gptq stores g_idx (int32 per input) and qzeros either way");
  const std::string format = q.optional_string("checkpoint_format").value_or("gptq");
  if (format != "gptq" && format != "gptq_v2") {
    notes.push_back("quantization_config: checkpoint_format '" + printable(format) + "': priced in auto-gptq's layout");
  }
  m.description = "GPTQ " + std::to_string(m.q.bits) + "-bit, " + groups_text(m.q.group_size) +
                  ", int32 qweight, qzeros and g_idx, fp16 scales";
  m.list_key = "modules_to_not_convert";
  return m;
}

Method read_bnb(const JsonMap& q, std::vector<std::string>& notes) {
  Method m;
  const bool four = q.boolean_or("load_in_4bit", false), eight = q.boolean_or("load_in_8bit", false);
  if (four == eight) {
    q.fail("load_in_4bit",
           four ? "load_in_4bit and load_in_8bit are both true: a bitsandbytes checkpoint is one or the other"
                : "a bitsandbytes quantization_config sets load_in_4bit or load_in_8bit");
  }
  m.router = true;  // transformers replaces every nn.Linear but the output embedding
  m.match = Match::bnb;
  m.list_key = "llm_int8_skip_modules";
  if (four) {
    m.q.layout = QuantLayout::bnb_4bit;
    m.q.bnb_type = choice(q, "bnb_4bit_quant_type", {"fp4", "nf4"}, "fp4");
    m.q.double_quant = q.boolean_or("bnb_4bit_use_double_quant", false);
    if (q.has("bnb_4bit_quant_storage")) {
      const std::string storage = q.string("bnb_4bit_quant_storage");
      if (storage != "uint8")
        notes.push_back("quantization_config: bnb_4bit_quant_storage " + printable(storage) +
                        ": the same bytes in wider words");
    }
    if (q.has("bnb_4bit_compute_dtype")) {
      notes.push_back("quantization_config: bnb_4bit_compute_dtype " + printable(q.string("bnb_4bit_compute_dtype")) +
                      " is the matmul dtype; the unquantised tensors keep torch_dtype");
    }
    m.description = "bitsandbytes 4-bit " + m.q.bnb_type + ", fp32 absmax per 64" +
                    (m.q.double_quant ? " quantised to uint8 (double quantisation, fp32 per 256)" : "");
  } else {
    m.q.layout = QuantLayout::bnb_8bit;
    m.description = "bitsandbytes 8-bit (LLM.int8), int8 weights, fp32 SCB per row";
  }
  return m;
}

// Qwen's FP8 releases store weight_scale_inv in the model's 16-bit dtype where DeepSeek's and
// transformers' FP8 layers keep float32 (modular/modular#7142 reads Qwen3-1.7B-FP8's headers:
// every scale BF16); the config does not say, so the model type decides.
bool scales_in_model_dtype(const std::string& model_type) { return model_type == "qwen3" || model_type == "qwen3_moe"; }

Method read_fp8(const JsonMap& q, const std::string& model_type, const Dtype& dtype) {
  Method m;
  m.q.layout = QuantLayout::fp8;
  m.q.scale_bytes = scales_in_model_dtype(model_type) ? dtype.bytes : 4;
  const std::string scale_type = scales_in_model_dtype(model_type) ? dtype.name : "fp32";
  m.router = true;
  choice(q, "fmt", {"e4m3", "e5m2"}, "e4m3");
  const std::string scheme = choice(q, "activation_scheme", {"dynamic", "static"}, "dynamic");
  m.q.input_scale = scheme == "static";
  if (q.has("weight_block_size")) {
    const nlohmann::json& b = q.value("weight_block_size");
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() || !b[1].is_number_unsigned() ||
        b[0].get<std::uint64_t>() == 0 || b[1].get<std::uint64_t>() == 0 || b[0].get<std::uint64_t>() > kMaxQuantSize ||
        b[1].get<std::uint64_t>() > kMaxQuantSize) {
      q.fail("weight_block_size", "'weight_block_size' must be two block sizes from 1 to " +
                                      group_digits(kMaxQuantSize) + " [rows, columns], got " + b.dump());
    }
    m.q.grain = ScaleGrain::block;
    m.q.block_rows = b[0].get<std::uint64_t>();
    m.q.block_cols = b[1].get<std::uint64_t>();
    m.description = "fp8 e4m3, " + scale_type + " weight_scale_inv per " + std::to_string(m.q.block_rows) + "x" +
                    std::to_string(m.q.block_cols) + " block";
  } else {
    m.q.grain = ScaleGrain::tensor;
    m.description = "fp8 e4m3, one " + scale_type + " weight_scale per tensor";
  }
  if (m.q.input_scale) m.description += ", fp32 input_scale";
  m.list_key = q.has("ignored_layers") && !q.has("modules_to_not_convert") ? "ignored_layers"
                                                                           : "modules_to_not_convert";
  return m;
}

Method read_mxfp4() {
  Method m;
  m.q.layout = QuantLayout::mxfp4;
  m.experts_only = true;
  m.description = "MXFP4 experts: e2m1 in blocks of 32 with one e8m0 scale byte (4.25 bits a weight)";
  m.list_key = "modules_to_not_convert";
  return m;
}

Method read_compressed(const JsonMap& q, const Dtype& dtype) {
  Method m;
  m.match = Match::exact_or_regex;
  m.list_key = "ignore";
  m.router = m.head = true;  // `targets: ["Linear"]`: every linear layer that `ignore` does not name
  const std::string format = choice(q, "format",
                                    {"float-quantized", "int-quantized", "naive-quantized", "pack-quantized"},
                                    "naive-quantized");
  const JsonMap groups = q.object("config_groups", "compressed-tensors' config_groups");
  const nlohmann::json& all = q.value("config_groups");
  if (all.size() != 1) {
    q.fail("config_groups", "config_groups has " + std::to_string(all.size()) +
                                " groups; memplan prices one scheme for every linear layer");
  }
  const JsonMap group = groups.object(all.begin().key(), "a config group");
  if (group.has("targets")) {
    const nlohmann::json& t = group.value("targets");
    if (!t.is_array() || t.size() != 1 || t[0] != "Linear") {
      group.fail("targets", "'targets' must be [\"Linear\"]: memplan prices one scheme for every linear layer");
    }
  }
  const JsonMap& w = m.args.emplace(group.object("weights", "the weights' quantisation arguments"));
  m.q.bits = w.integer("num_bits", 1, 64);
  const std::string type = choice(w, "type", {"float", "int"}, "int");
  const std::string strategy = choice(w, "strategy", {"block", "channel", "group", "tensor"}, "tensor");
  m.q.zero_points = !w.boolean_or("symmetric", true);
  if (w.boolean_or("dynamic", false))
    w.fail("dynamic", "weights quantised dynamically store no quantised weights to price");
  m.q.scale_bytes = dtype.bytes;  // compressed-tensors makes a scale the weight's dtype
  if (strategy == "tensor") m.q.grain = ScaleGrain::tensor;
  if (strategy == "channel") m.q.grain = ScaleGrain::channel;
  if (strategy == "group") {
    m.q.grain = ScaleGrain::group;
    m.q.group_size = w.integer("group_size", 1, kMaxQuantSize);
  }
  if (strategy == "block") {
    m.q.grain = ScaleGrain::block;
    const nlohmann::json& b = w.value("block_structure");
    if (!b.is_array() || b.size() != 2 || !b[0].is_number_unsigned() || !b[1].is_number_unsigned() ||
        b[0].get<std::uint64_t>() == 0 || b[1].get<std::uint64_t>() == 0 || b[0].get<std::uint64_t>() > kMaxQuantSize ||
        b[1].get<std::uint64_t>() > kMaxQuantSize) {
      w.fail("block_structure", "'block_structure' must be two block sizes [rows, columns], got " + b.dump());
    }
    m.q.block_rows = b[0].get<std::uint64_t>();
    m.q.block_cols = b[1].get<std::uint64_t>();
  }
  if (format == "pack-quantized") {
    if (type != "int" || (m.q.bits != 4 && m.q.bits != 8)) {
      w.fail("num_bits", "pack-quantized stores 4 or 8-bit integers, not " + std::to_string(m.q.bits) + "-bit " + type);
    }
    m.q.layout = QuantLayout::packed;
  } else {
    if (m.q.bits != 8) {
      w.fail("num_bits",
             "format '" + format + "' stores one byte a weight: num_bits must be 8, not " + std::to_string(m.q.bits));
    }
    if (format == "float-quantized" && type != "float")
      w.fail("type", "float-quantized stores fp8 weights: type must be float");
    if (format == "int-quantized" && type != "int")
      w.fail("type", "int-quantized stores int8 weights: type must be int");
    m.q.layout = type == "float" ? QuantLayout::fp8 : QuantLayout::int8;
  }
  if (group.has("input_activations")) {
    const JsonMap a = group.object("input_activations", "the input activations' quantisation arguments");
    m.q.input_scale = !a.boolean_or("dynamic", false);
  }
  m.description = "compressed-tensors " + format + " " + layout_name(m.q) + ", " + dtype.name + " scales" +
                  (m.q.zero_points ? " and zero-points" : "") + (m.q.input_scale ? ", a static input_scale" : "");
  return m;
}

Dtype model_dtype(const JsonMap& config, std::vector<std::string>& notes) {
  for (const char* key : {"torch_dtype", "dtype"}) {
    if (!config.has(key)) continue;
    const std::string v = config.string(key);
    if (v == "bfloat16") return {"bf16", 2};
    if (v == "float16") return {"fp16", 2};
    if (v == "float32") return {"fp32", 4};
    config.fail(key, "'" + std::string(key) + "' is '" + printable(v) +
                         "'; the tensors a quantised checkpoint leaves unquantised are bfloat16, float16 or float32");
  }
  notes.push_back("torch_dtype is not set: the unquantised tensors are priced as float16");
  return {"fp16", 2};
}

}  // namespace

void import_quantization(const JsonMap& config, const std::string& model_type, ModelSpec& spec,
                         std::vector<std::string>& notes) {
  if (!config.has("quantization_config")) return;
  const JsonMap q = config.object("quantization_config", "a quantization_config");
  std::string method_name;
  if (q.has("quant_method")) {
    method_name = q.string("quant_method");
  } else if (q.has("load_in_4bit") || q.has("load_in_8bit")) {
    method_name = "bitsandbytes";  // written before transformers named the method
  } else {
    q.fail("quant_method", "missing required key 'quant_method' in a quantization_config");
  }

  const auto unpriced = [&](const std::string& why) {
    const std::string line = "quantization_config (" + printable(method_name) + "): " + why +
                             "; the weights are priced at `precision` as if the checkpoint were not quantised";
    spec.import_warnings.push_back(line);
    notes.push_back(line);
  };
  const std::vector<std::string> known = {"awq", "bitsandbytes", "compressed-tensors", "fp8", "gptq", "mxfp4"};
  if (std::find(known.begin(), known.end(), method_name) == known.end()) {
    unpriced("memplan does not know this method's storage layout (it prices " + quoted_list(known, "and") + ")");
    return;
  }
  if (std::find(std::begin(kNamedFamilies), std::end(kNamedFamilies), model_type) == std::end(kNamedFamilies)) {
    const std::vector<std::string> named(std::begin(kNamedFamilies), std::end(kNamedFamilies));
    unpriced("memplan prices quantised layouts for model_type " + quoted_list(named, "and") +
             ", whose projections it can name module by module, not " + printable(model_type));
    return;
  }

  const Dtype dtype = model_dtype(config, notes);
  Method m = [&] {
    if (method_name == "awq") return read_awq(q, notes);
    if (method_name == "gptq") return read_gptq(q, notes);
    if (method_name == "bitsandbytes") return read_bnb(q, notes);
    if (method_name == "fp8") return read_fp8(q, model_type, dtype);
    if (method_name == "mxfp4") return read_mxfp4();
    return read_compressed(q, dtype);
  }();
  m.keep = string_list(q, m.list_key);
  const Matcher matcher(m, q);
  const std::string format = layout_name(m.q);

  std::vector<StoredTensors> out;
  const auto add = [&](const TensorGroup& g, const std::string& fmt, std::uint64_t bytes, std::uint64_t copies) {
    if (copies == 0) return;
    const std::uint64_t elements = checked_mul(g.rows, g.cols, "elements of", g.name);
    for (StoredTensors& t : out) {
      if (t.component == g.component && t.format == fmt && t.elements == elements && t.bytes == bytes) {
        t.copies = checked_add(t.copies, copies, "tensors of", g.component);
        return;
      }
    }
    out.push_back({std::string(g.component), fmt, elements, bytes, copies});
  };

  // DeepSeek's router is a bare weight (DeepseekV3TopkRouter), not an nn.Linear: no method replaces it.
  const bool router_linear = spec.family != Family::deepseek;
  try {
    for (const TensorGroup& g : model_tensors(spec)) {
      const std::uint64_t plain = checked_mul(checked_mul(g.rows, g.cols, "elements of", g.name), dtype.bytes,
                                              "bytes of", g.name);
      bool quantisable = g.role == TensorRole::linear || (g.role == TensorRole::router && m.router && router_linear) ||
                         (g.role == TensorRole::lm_head && m.head);
      if (m.experts_only) quantisable = g.component == "experts" && g.role == TensorRole::linear;
      if (!quantisable) {
        // DeepSeek-V3 stores its routers' e_score_correction_bias in float32 whatever torch_dtype says.
        if (spec.family == Family::deepseek && g.name == "router.bias") {
          add(g, "fp32", checked_mul(g.rows, 4, "bytes of", g.name), g.copies);
        } else {
          add(g, dtype.name, plain, g.copies);
        }
        continue;
      }
      // The copies a listed module name keeps unquantised: every layer (and expert) is named.
      std::uint64_t kept = 0;
      if (!matcher.empty()) {
        const std::uint64_t experts = g.component == "experts" ? spec.experts : 1;
        if (checked_mul(g.copies, matcher.size(), "module names to match") > kMaxMatches) {
          q.fail(m.list_key, "'" + m.list_key + "' has " + std::to_string(matcher.size()) +
                                 " entries to match against " + group_digits(g.copies) +
                                 " modules: more than memplan matches");
        }
        // Module names carry the layer's own number: DeepSeek's MoE layers start at first_k_dense_replace.
        if (g.layers == LayerSet::none) {
          kept += matcher.kept(module_name(g, spec.family, 0, 0)) ? 1 : 0;
        } else {
          for (std::uint64_t layer = 0; layer < spec.n_layers; ++layer) {
            if (!layer_holds(spec, g.layers, layer)) continue;
            for (std::uint64_t e = 0; e < experts; ++e)
              kept += matcher.kept(module_name(g, spec.family, layer, e)) ? 1 : 0;
          }
        }
      }
      std::uint64_t bytes = 0;
      try {
        bytes = quantized_linear_bytes(m.q, g.rows, g.cols);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::overflow) throw;  // located below
        const std::string where = " (" + module_name(g, spec.family, 0, 0) + ")";
        if (m.args && m.args->has(e.key())) m.args->fail(e.key(), e.what() + where);
        q.fail(q.has(e.key()) ? e.key() : "quant_method", e.what() + where);
      }
      add(g, format, bytes, g.copies - kept);
      add(g, dtype.name, plain, kept);
    }
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::overflow) throw;
    const TextPosition p = config.position("quantization_config");
    throw ConfigError(config.file(), p.line, p.column, "quantization_config", e.what(), ErrorKind::overflow);
  }
  const bool any = std::any_of(out.begin(), out.end(), [&](const StoredTensors& t) { return t.format == format; });
  if (!any) {
    unpriced(m.experts_only ? "MXFP4 quantises the MoE experts only and this model has none"
                            : "every quantisable module is listed in '" + m.list_key + "'");
    return;
  }
  spec.stored_weights = std::move(out);
  std::string kept_text = "the embeddings, norms, biases";
  if (!m.head) kept_text += ", lm_head";
  if ((!m.router || !router_linear) && spec.experts > 0) kept_text += ", the router";
  if (m.experts_only) kept_text = "every tensor but the experts";
  if (!m.keep.empty()) kept_text += " and the modules '" + m.list_key + "' names";
  spec.stored_weights_source = m.description + "; " + kept_text + " stay " + dtype.name;
  notes.push_back("quantization_config (" + method_name + "): " + spec.stored_weights_source);
}

}  // namespace memplan::detail
