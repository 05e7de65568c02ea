#include "llama_cpp_layout.hpp"

#include <string>

#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/overhead.hpp"

namespace memplan::detail {

namespace {

std::string layers_text(const LlamaCppEstimate& e, std::uint64_t n_layers) {
  if (e.gpu_layers == 0 && !e.output_on_gpu) return "no layer";
  std::string out = e.gpu_layers == n_layers
                        ? "all " + group_digits(n_layers) + " layers"
                        : "layers " + group_digits(n_layers - e.gpu_layers) + "-" + group_digits(n_layers - 1);
  if (e.gpu_layers == 0) out = "no repeating layer";
  return out + (e.output_on_gpu ? " and the output layer" : "");
}

}  // namespace

LayoutEstimate llama_cpp_layout(const ModelSpec& spec, const Workload& w, const LayoutOptions& o) {
  if (w.batch != 1) {
    throw Error(ErrorKind::invalid_input,
                "llama.cpp keeps one context of -c tokens for all its sequences: plan `batch_size` 1 with `seq_len` "
                "the whole context",
                "batch_size");
  }
  LlamaCppOptions options = *o.llama_cpp;
  options.n_ctx = checked_add(w.seq_len, w.kind == WorkloadKind::generation ? w.new_tokens : 0, "context");
  options.weights = w.weights.precision;
  const LlamaCppEstimate e = estimate_llama_cpp(spec, options);

  LayoutEstimate out;
  out.engine = "llama.cpp";
  const GgmlType& tk = *find_ggml_type(options.type_k);
  const GgmlType& tv = *find_ggml_type(options.type_v);
  const std::string ngl = o.cpu
                              ? "no GPU"
                              : "-ngl " + group_digits(std::min<std::uint64_t>(options.gpu_layers, spec.n_layers + 1));
  const std::string cells = options.n_seq == 1
                                ? group_digits(e.cells) + " cells"
                                : "-np " + group_digits(options.n_seq) + ": " + group_digits(e.cells) + " cells each";
  out.description = "llama.cpp, " + ngl + ", -c " + group_digits(options.n_ctx) + " (" + cells + "), -ub " +
                    group_digits(options.n_ubatch) + ", cache K " + lowered(tk.name) + " V " + lowered(tv.name) +
                    ", flash attention " + (options.flash_attn ? "on" : "off");
  out.llama_cpp = LlamaCppLayout{options.n_ctx,    e.cells,          options.n_seq,     options.n_ubatch,
                                 e.gpu_layers,     spec.n_layers,    e.output_on_gpu,   !o.cpu,
                                 lowered(tk.name), lowered(tv.name), options.flash_attn};
  if (!o.cpu) {
    DeviceMemory gpu;
    gpu.role = "gpu";
    gpu.holds = layers_text(e, spec.n_layers);
    gpu.breakdown.components = e.gpu.components;
    if (w.include_overhead) {
      const Breakdown runtime = estimate_overhead(w.overhead, {}, {});
      for (const Item& r : runtime.components.front().detail) {
        if (r.name == "cuda_context") gpu.breakdown.components.push_back(r);
      }
    }
    gpu.breakdown.host = e.host.components;
    if (!o.gpus.empty()) {
      gpu.gpu = o.gpus.front().name;
      gpu.capacity = o.gpus.front().memory;
    }
    out.devices.push_back(std::move(gpu));
  } else {
    DeviceMemory host;
    host.role = "cpu";
    host.holds = "the whole model";
    host.breakdown.components = e.host.components;
    if (o.host_memory) {
      host.gpu = "cpu";
      host.capacity = *o.host_memory;
    }
    out.devices.push_back(std::move(host));
  }
  if (!o.cpu && e.gpu_layers < spec.n_layers) {
    out.notes.push_back(group_digits(spec.n_layers - e.gpu_layers) + " of " + group_digits(spec.n_layers) +
                        " layers run on the CPU from host memory (far slower); their weights and cache are host rows");
  }
  out.notes.push_back("the input layer (token embeddings) stays in host memory, as llama.cpp keeps it");
  if (!spec.stored_layers) {
    out.notes.push_back("weights from the architecture at " + to_string(w.weights.precision) +
                        "; a .gguf gives each tensor's own type");
  }
  return out;
}

}  // namespace memplan::detail
