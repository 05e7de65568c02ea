// Build tool: writes the shipped configs/ tables (model files and configs/gpus.yaml) as C++
// values, so that the library holds them parsed and validated and the CLI's start-up pays
// no YAML parse (docs/performance.md). A file that does not parse or validate fails the
// build with its file:line:column.
//
// Usage: memplan_builtin_tables OUTPUT.cpp GPU_TABLE.yaml MODEL.yaml...
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "memplan/core/error.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/io/model_file.hpp"

namespace memplan::builtin_tables {
namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A C++ string literal holding `text` exactly; octal escapes (always three digits) for
// every byte outside printable ASCII, so a following digit is never read into one.
std::string literal(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte >= 0x7f) {
      char octal[5];
      std::snprintf(octal, sizeof octal, "\\%03o", byte);
      out += octal;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string u64(std::uint64_t v) { return std::to_string(v) + "ULL"; }
std::string boolean(bool v) { return v ? "true" : "false"; }

// The shortest text that reads back as the same double.
std::string real(double v) {
  char buffer[64];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v);
  std::string out(buffer, end);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

template <typename Enum>
std::string enumerator(const char* type, Enum value) {
  return "static_cast<" + std::string(type) + ">(" + std::to_string(static_cast<int>(value)) + ")";
}

std::string strings(const std::vector<std::string>& list) {
  std::string out = "{";
  for (std::size_t i = 0; i < list.size(); ++i) out += (i == 0 ? "" : ", ") + literal(list[i]);
  return out + "}";
}

// Every field of ModelEntry and ModelSpec: tests/unit/io/builtin_tables_test.cpp checks
// each built-in against parsing its file, so a field added to the spec and not here fails.
void write_model(std::ostream& out, const ModelEntry& e, std::size_t index) {
  const ModelSpec& s = e.spec;
  out << "ModelEntry model_" << index << "() {  // " << s.name << "\n"
      << "  ModelEntry e;\n"
      << "  e.origin = \"built-in\";\n"
      << "  e.source = " << literal(e.source) << ";\n";
  if (e.published_params) out << "  e.published_params = " << u64(*e.published_params) << ";\n";
  out << "  e.published_params_source = " << literal(e.published_params_source) << ";\n"
      << "  ModelSpec& s = e.spec;\n"
      << "  s.name = " << literal(s.name) << ";\n"
      << "  s.family = " << enumerator("Family", s.family) << ";\n"
      << "  s.d_model = " << u64(s.d_model) << ";\n"
      << "  s.n_layers = " << u64(s.n_layers) << ";\n"
      << "  s.n_heads = " << u64(s.n_heads) << ";\n"
      << "  s.n_kv_heads = " << u64(s.n_kv_heads) << ";\n"
      << "  s.d_head = " << u64(s.d_head) << ";\n"
      << "  s.d_mlp = " << u64(s.d_mlp) << ";\n"
      << "  s.mlp = " << enumerator("MlpKind", s.mlp) << ";\n"
      << "  s.activation = " << literal(s.activation) << ";\n"
      << "  s.vocab_size = " << u64(s.vocab_size) << ";\n"
      << "  s.max_seq_len = " << u64(s.max_seq_len) << ";\n"
      << "  s.positional = " << enumerator("Positional", s.positional) << ";\n"
      << "  s.n_positions = " << u64(s.n_positions) << ";\n"
      << "  s.relative_buckets = " << u64(s.relative_buckets) << ";\n"
      << "  s.rotary_dim = " << u64(s.rotary_dim) << ";\n"
      << "  s.norm = " << enumerator("NormKind", s.norm) << ";\n"
      << "  s.norms_per_layer = " << u64(s.norms_per_layer) << ";\n"
      << "  s.parallel_block = " << boolean(s.parallel_block) << ";\n"
      << "  s.final_norm = " << boolean(s.final_norm) << ";\n"
      << "  s.embedding_norm = " << boolean(s.embedding_norm) << ";\n"
      << "  s.type_vocab_size = " << u64(s.type_vocab_size) << ";\n"
      << "  s.pooler = " << boolean(s.pooler) << ";\n"
      << "  s.attn_qkv_bias = " << boolean(s.attn_qkv_bias) << ";\n"
      << "  s.attn_k_bias = " << boolean(s.attn_k_bias) << ";\n"
      << "  s.attn_out_bias = " << boolean(s.attn_out_bias) << ";\n"
      << "  s.mlp_bias = " << boolean(s.mlp_bias) << ";\n"
      << "  s.lm_head = " << enumerator("LmHead", s.lm_head) << ";\n"
      << "  s.lm_head_bias = " << boolean(s.lm_head_bias) << ";\n"
      << "  s.qk_norm = " << enumerator("QkNorm", s.qk_norm) << ";\n"
      << "  s.attn_output_gate = " << boolean(s.attn_output_gate) << ";\n"
      << "  s.experts = " << u64(s.experts) << ";\n"
      << "  s.experts_per_token = " << u64(s.experts_per_token) << ";\n"
      << "  s.d_expert = " << u64(s.d_expert) << ";\n"
      << "  s.d_shared_expert = " << u64(s.d_shared_expert) << ";\n"
      << "  s.first_dense_layers = " << u64(s.first_dense_layers) << ";\n"
      << "  s.moe_every = " << u64(s.moe_every) << ";\n"
      << "  s.router_bias = " << boolean(s.router_bias) << ";\n"
      << "  s.shared_expert_gate = " << boolean(s.shared_expert_gate) << ";\n"
      << "  s.sliding_window = " << u64(s.sliding_window) << ";\n"
      << "  s.attention_chunk = " << u64(s.attention_chunk) << ";\n"
      << "  s.global_every = " << u64(s.global_every) << ";\n"
      << "  s.global_attention = " << enumerator("AttentionKind", s.global_attention) << ";\n";
  if (!s.layer_types.empty()) {
    out << "  s.layer_types = {";
    for (std::size_t i = 0; i < s.layer_types.size(); ++i) {
      out << (i == 0 ? "" : ", ") << enumerator("AttentionKind", s.layer_types[i]);
    }
    out << "};\n";
  }
  out << "  s.global_kv_heads = " << u64(s.global_kv_heads) << ";\n"
      << "  s.global_d_head = " << u64(s.global_d_head) << ";\n"
      << "  s.global_k_eq_v = " << boolean(s.global_k_eq_v) << ";\n"
      << "  s.layer_scalar = " << boolean(s.layer_scalar) << ";\n"
      << "  s.router_scales = " << boolean(s.router_scales) << ";\n"
      << "  s.moe_norms = " << u64(s.moe_norms) << ";\n"
      << "  s.kv_shared_layers = " << u64(s.kv_shared_layers) << ";\n"
      << "  s.double_wide_mlp = " << boolean(s.double_wide_mlp) << ";\n"
      << "  s.per_layer_input = " << u64(s.per_layer_input) << ";\n";
  out << "  s.mla = {" << u64(s.mla.q_lora_rank) << ", " << u64(s.mla.kv_lora_rank) << ", "
      << u64(s.mla.qk_nope_head_dim) << ", " << u64(s.mla.qk_rope_head_dim) << ", " << u64(s.mla.v_head_dim) << "};\n"
      << "  s.attention_sinks = " << boolean(s.attention_sinks) << ";\n"
      << "  s.final_logit_softcapping = " << boolean(s.final_logit_softcapping) << ";\n"
      << "  s.mtp_layers = " << u64(s.mtp_layers) << ";\n"
      << "  s.mrope = " << boolean(s.mrope) << ";\n"
      << "  s.deepstack_layers = " << u64(s.deepstack_layers) << ";\n"
      << "  s.ssm = {" << u64(s.ssm.version) << ", " << u64(s.ssm.d_inner) << ", " << u64(s.ssm.d_state) << ", "
      << u64(s.ssm.d_conv) << ", " << u64(s.ssm.dt_rank) << ", " << u64(s.ssm.heads) << ", " << u64(s.ssm.groups)
      << ", " << u64(s.ssm.chunk) << ", " << boolean(s.ssm.conv_bias) << ", " << boolean(s.ssm.proj_bias) << ", "
      << boolean(s.ssm.out_proj_bias) << ", " << boolean(s.ssm.gated_norm) << ", " << boolean(s.ssm.dt_bc_norms)
      << "};\n"
      << "  s.parallel_ssm = " << boolean(s.parallel_ssm) << ";\n"
      << "  s.shared = {" << u64(s.shared.blocks) << ", " << u64(s.shared.adapter_rank) << ", "
      << boolean(s.shared.mlp_adapters) << ", " << boolean(s.shared.attention_adapters) << "};\n"
      << "  s.vision = {" << u64(s.vision.d_model) << ", " << u64(s.vision.n_layers) << ", " << u64(s.vision.n_heads)
      << ", " << u64(s.vision.d_mlp) << ", " << u64(s.vision.patch) << ", " << u64(s.vision.image_size) << ", "
      << enumerator("VisionKind", s.vision.kind) << ", " << u64(s.vision.merge) << ", " << u64(s.vision.temporal_patch)
      << ", " << u64(s.vision.min_pixels) << ", " << u64(s.vision.max_pixels) << ", " << u64(s.vision.longest_edge)
      << ", " << u64(s.vision.positions) << ", " << u64(s.vision.deepstack) << ", " << u64(s.vision.soft_tokens)
      << "};\n"
      << "  s.encoder = {" << u64(s.encoder.n_layers) << ", " << u64(s.encoder.n_positions) << ", "
      << u64(s.encoder.mel_bins) << "};\n";
  // A model file describes an architecture: stored weights and import warnings come only
  // from checkpoints, and a file cannot set them.
  if (!s.stored_weights.empty() || s.stored_layers || !s.stored_weights_source.empty() || !s.import_warnings.empty()) {
    throw std::runtime_error(s.name + ": a built-in model holds stored weights or import warnings");
  }
  out << "  return e;\n}\n\n";
}

// Every field of GpuSpec, checked the same way as the models.
void write_gpu(std::ostream& out, const GpuSpec& g) {
  out << "  {\n"
      << "    GpuSpec& g = gpus.emplace_back();\n"
      << "    g.name = " << literal(g.name) << ";\n"
      << "    g.aliases = " << strings(g.aliases) << ";\n"
      << "    g.display = " << literal(g.display) << ";\n"
      << "    g.memory = Bytes(" << u64(g.memory.count()) << ");\n"
      << "    g.compute_capability = {" << g.compute_capability.major << ", " << g.compute_capability.minor << "};\n"
      << "    g.tensor_paths = {";
  for (std::size_t i = 0; i < g.tensor_paths.size(); ++i) {
    out << (i == 0 ? "" : ", ") << enumerator("Format", g.tensor_paths[i]);
  }
  out << "};\n"
      << "    g.bandwidth_gbs = " << real(g.bandwidth_gbs) << ";\n"
      << "    g.dense_tflops = {";
  for (std::size_t i = 0; i < g.dense_tflops.size(); ++i) {
    out << (i == 0 ? "" : ", ") << "{" << enumerator("Format", g.dense_tflops[i].first) << ", "
        << real(g.dense_tflops[i].second) << "}";
  }
  out << "};\n"
      << "    g.source = " << literal(g.source) << ";\n"
      << "    g.memory_source = " << literal(g.memory_source) << ";\n"
      << "    g.cuda_memory = Bytes(" << u64(g.cuda_memory.count()) << ");\n"
      << "    g.cuda_memory_source = " << literal(g.cuda_memory_source) << ";\n"
      << "    g.cuda_context = Bytes(" << u64(g.cuda_context.count()) << ");\n"
      << "    g.cuda_context_source = " << literal(g.cuda_context_source) << ";\n"
      << "  }\n";
}

std::string tables(const std::filesystem::path& gpu_table, const std::vector<std::filesystem::path>& model_files) {
  std::ostringstream out;
  out << "// Generated by tools/builtin_tables from configs/; do not edit.\n"
      << "#include \"builtin_tables.hpp\"\n\n"
      << "namespace memplan::detail {\n\nnamespace {\n\n";
  // Sorted by name as std::string compares, which load_builtin_model's binary search assumes.
  std::vector<std::pair<std::string, std::filesystem::path>> models;
  for (const std::filesystem::path& path : model_files) {
    std::string name = path.filename().string();
    if (name.ends_with(".yaml")) name.resize(name.size() - 5);  // stem() would cut qwen2.5-0.5b at its dot
    models.emplace_back(name, path);
  }
  std::sort(models.begin(), models.end());
  for (std::size_t i = 0; i < models.size(); ++i) {
    const std::string file = "configs/models/" + models[i].second.filename().string();
    write_model(out, parse_model_yaml(read_file(models[i].second), file, models[i].first), i);
  }
  out << "}  // namespace\n\n"
      << "std::span<const BuiltinModel> builtin_model_table() {\n"
      << "  static constexpr BuiltinModel table[] = {\n";
  for (std::size_t i = 0; i < models.size(); ++i) {
    out << "      {" << literal(models[i].first) << ", &model_" << i << "},\n";
  }
  out << "  };\n  return table;\n}\n\n"
      << "std::vector<GpuSpec> builtin_gpu_table() {\n"
      << "  std::vector<GpuSpec> gpus;\n";
  const std::vector<GpuSpec> gpus = parse_gpu_table(read_file(gpu_table), "configs/gpus.yaml");
  out << "  gpus.reserve(" << gpus.size() << ");\n";
  for (const GpuSpec& g : gpus) write_gpu(out, g);
  out << "  return gpus;\n}\n\n}  // namespace memplan::detail\n";
  return out.str();
}

int run(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: memplan_builtin_tables OUTPUT.cpp GPU_TABLE.yaml MODEL.yaml...\n");
    return 2;
  }
  const std::filesystem::path output = argv[1];
  const std::string text = tables(argv[2], std::vector<std::filesystem::path>(argv + 3, argv + argc));
  // Rewritten only when it changes, so an unrelated reconfigure recompiles nothing.
  std::error_code ec;
  if (std::filesystem::exists(output, ec) && read_file(output) == text) return 0;
  const std::filesystem::path partial = output.string() + ".partial";
  {
    std::ofstream file(partial, std::ios::binary | std::ios::trunc);
    file << text;
    if (!file.flush()) throw std::runtime_error("cannot write " + partial.string());
  }
  std::filesystem::rename(partial, output);
  return 0;
}

}  // namespace
}  // namespace memplan::builtin_tables

int main(int argc, char** argv) {
  try {
    return memplan::builtin_tables::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memplan_builtin_tables: %s\n", e.what());
    return 1;
  }
}
