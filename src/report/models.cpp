// memplan models: table and JSON.
#include "memplan/report/models.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common.hpp"
#include "memplan/core/parameters.hpp"
#include "memplan/core/text.hpp"

namespace memplan {

namespace {

using detail::ordered_json;

// What a model reads: text, or images (--images) or audio beside it.
std::string inputs(const ModelSpec& m) {
  if (m.vision.d_model != 0) return "text+image";
  if (m.encoder.mel_bins != 0) return "audio";
  return "text";
}

void table(const ModelsReport& r, std::ostream& out) {
  std::size_t name_width = 4, family_width = 6;
  for (const ModelEntry& e : r.models) {
    name_width = std::max(name_width, e.spec.name.size());
    family_width = std::max(family_width, to_string(e.spec.family).size());
  }
  out << fmt::format("{:<{}}  {:<{}}  {:>17}  {:>6}  {:>7}  {:>9}  {:>7}  {:>7}  {}\n", "name", name_width, "family",
                     family_width, "parameters", "layers", "d_model", "heads/kv", "vocab", "context", "inputs");
  for (const ModelEntry& e : r.models) {
    const ModelSpec& m = e.spec;
    out << fmt::format("{:<{}}  {:<{}}  {:>17}  {:>6}  {:>7}  {:>9}  {:>7}  {:>7}  {}\n", m.name, name_width,
                       to_string(m.family), family_width, group_digits(count_parameters(m)), m.n_layers, m.d_model,
                       attention_layers(m) == 0 ? std::string("ssm") : fmt::format("{}/{}", m.n_heads, m.n_kv_heads),
                       m.vocab_size, m.max_seq_len, inputs(m));
  }
  out << fmt::format("\n{} built-in models; memplan estimate NAME for one, or pass a path to your own .yaml\n",
                     r.models.size());
}

void json(const ModelsReport& r, std::ostream& out) {
  ordered_json list = ordered_json::array();
  for (const ModelEntry& e : r.models) {
    const ModelSpec& m = e.spec;
    ordered_json j{{"name", m.name},
                   {"family", to_string(m.family)},
                   {"params", count_parameters(m)},
                   {"n_layers", m.n_layers},
                   {"d_model", m.d_model},
                   {"n_heads", m.n_heads},
                   {"n_kv_heads", m.n_kv_heads},
                   {"vocab_size", m.vocab_size},
                   {"max_seq_len", m.max_seq_len},
                   {"inputs", inputs(m)}};
    if (m.vision.d_model != 0) j["vision_kind"] = to_string(m.vision.kind);
    if (e.published_params) j["published_params"] = *e.published_params;
    j["source"] = e.source;
    list.push_back(j);
  }
  detail::emit({{"schema_version", json_schema_version}, {"models", list}}, out);
}

}  // namespace

void print(const ModelsReport& report, const PrintOptions& options, std::ostream& out) {
  require_format<ModelsReport>(options.format);
  if (options.format == OutputFormat::json) return json(report, out);
  table(report, out);
}

}  // namespace memplan
