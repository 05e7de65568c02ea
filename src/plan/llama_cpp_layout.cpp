#include "llama_cpp_layout.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "memplan/core/bytes.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/gpu_spec.hpp"
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

// The draft's own context: the main one's -c, -np, unified cache and -ub (its options were
// bound from the same settings), the weights at the main model's precision when not a .gguf.
// Its errors name the draft.
LlamaCppEstimate draft_estimate(const ModelSpec& spec, const LlamaCppDraft& draft, const LlamaCppOptions& main) {
  // common/speculative.cpp: a draft whose vocabulary differs by more than 128 tokens is refused.
  const std::uint64_t v = spec.vocab_size, dv = draft.spec.vocab_size;
  if ((v > dv ? v - dv : dv - v) > 128) {
    throw Error(ErrorKind::invalid_input,
                "`draft` " + draft.spec.name + " has " + group_digits(dv) + " tokens, " + spec.name + " " +
                    group_digits(v) + ": llama-server refuses a draft whose vocabulary is more than 128 tokens apart",
                "draft");
  }
  LlamaCppOptions options = draft.options;
  options.n_ctx = main.n_ctx;
  options.weights = main.weights;
  try {
    return estimate_llama_cpp(draft.spec, options);
  } catch (const Error& e) {
    throw Error(e.kind(), "the draft model " + draft.spec.name + ": " + e.what(),
                e.key().empty() || e.key() == "engine" ? "draft" : e.key());
  }
}

// "264 MiB", "32.9 GiB": a size for a note, rounded up.
std::string rounded_size(std::uint64_t bytes) {
  if (bytes < GiB) return group_digits(ceil_div(bytes, MiB)) + " MiB";
  const std::uint64_t tenths = ceil_div(bytes, GiB / 10);
  return group_digits(tenths / 10) + "." + std::to_string(tenths % 10) + " GiB";
}

void append(std::vector<Item>& rows, const std::vector<Item>& more) {
  rows.insert(rows.end(), more.begin(), more.end());
}

// The draft's buffers as rows of their own beside the main model's.
void append_draft(std::vector<Item>& rows, const Breakdown& draft) {
  for (Item item : draft.components) {
    item.name = "draft_" + item.name;
    rows.push_back(std::move(item));
  }
}

// A vision tower's buffers (--mmproj) as rows: its weights and its warm-up image's graph where
// it runs, and with the tower on the GPU the image itself in the host's compute buffer.
struct TowerRows {
  std::vector<Item> device, host;
};

TowerRows tower_rows(const LlamaCppProjector& p, const LlamaCppProjectorEstimate& e, bool on_gpu, bool flash_attn) {
  const std::uint64_t side = p.image_size / p.patch_size;
  TowerRows out;
  out.device.push_back({.name = "mmproj_weights",
                        .bytes = Bytes(e.weights),
                        .formula = group_digits(p.tensors.size()) + " tensors of " + p.name + " (" +
                                   group_digits(p.n_layers) + " layers of width " + group_digits(p.d_model) +
                                   "), each padded to " + (on_gpu ? "128" : "32") + " bytes",
                        .params = std::nullopt,
                        .note = "the vision tower (--mmproj)",
                        .detail = {}});
  const bool qwen = p.max_tokens > 0;  // a dynamic-resolution tower: its largest image binds
  const std::uint64_t tokens = std::max(p.max_tokens, p.warmup_tokens);
  const std::string image = qwen
                                ? "the largest image: " + group_digits(tokens) + " tokens (--image-max-tokens), " +
                                      group_digits(tokens * p.n_merge * p.n_merge) + " patches"
                                : "the warm-up image: " + group_digits(p.image_size) + " x " +
                                      group_digits(p.image_size) + " pixels, " + group_digits(side * side) + " patches";
  out.device.push_back({.name = "mmproj_compute",
                        .bytes = Bytes(e.compute),
                        .formula = image + " through " + group_digits(p.n_layers) + " layers" +
                                   (flash_attn ? " (flash attention)" : ", every head's scores") +
                                   "; ggml's allocator replayed over llama.cpp's " + p.type + " graph",
                        .params = std::nullopt,
                        .note = "the vision tower's compute buffer",
                        .detail = {}});
  if (e.image > 0) {
    out.host.push_back({.name = "mmproj_compute",
                        .bytes = Bytes(e.image),
                        .formula = qwen ? "the largest image's f32 pixels and M-RoPE's positions, the graph's "
                                          "inputs on the host"
                                        : "the warm-up image's 3 x " + group_digits(p.image_size) + " x " +
                                              group_digits(p.image_size) + " f32 pixels, the graph's input on the host",
                        .params = std::nullopt,
                        .note = "the vision tower's host compute buffer",
                        .detail = {}});
  }
  return out;
}

// The CUDA context's row of the runtime overhead, when the plan counts overhead.
std::optional<Item> cuda_context_row(const Workload& w) {
  if (!w.include_overhead) return std::nullopt;
  const Breakdown runtime = estimate_overhead(w.overhead, {}, {});
  for (const Item& r : runtime.components.front().detail) {
    if (r.name == "cuda_context") return r;
  }
  return std::nullopt;
}

// What the plan's device holds at `options` (the draft's buffers too): the GPU's buffers, or
// the host's for a plan on the CPU.
std::uint64_t device_bytes(const ModelSpec& spec, const LayoutOptions& o, const LlamaCppOptions& options) {
  const LlamaCppEstimate e = estimate_llama_cpp(spec, options);
  std::uint64_t sum = (o.cpu ? e.host : e.gpu).total().count();
  if (o.llama_cpp_draft) {
    const LlamaCppEstimate d = draft_estimate(spec, *o.llama_cpp_draft, options);
    sum = checked_add(sum, (o.cpu ? d.host : d.gpu).total().count(), "device memory");
  }
  return sum;
}

// llama-server with -c unset (common/fit.cpp, common_params_fit_impl, steps 1 and 2): the
// context is the trained one for each of the -np slots; when the device would keep less than
// --fit-target (1 GiB) free, the context is interpolated linearly between that and --fit-ctx
// (4,096 per cache stream) on the memory measured at both, rounded down to 256 per stream.
// Sets options.n_ctx; returns what happened, for a note.
// A vision tower on the GPU (`tower`: llama.cpp's own estimate of it, the tensors and the
// compute buffer) is set aside from the free memory first, as llama-server does
// (tools/server/server-context.cpp, mtmd_get_memory_usage).
std::string fit_server_context(const ModelSpec& spec, const LayoutOptions& o, Bytes cuda_context, std::uint64_t tower,
                               LlamaCppOptions& options) {
  constexpr std::int64_t kMargin = 1024LL * 1024 * 1024;  // --fit-target 1024 (MiB)
  constexpr std::uint64_t kMinCtx = 4096;                 // --fit-ctx
  const std::uint64_t streams = options.kv_unified ? 1 : options.n_seq;
  const std::uint64_t n_max = checked_mul(spec.max_seq_len, options.n_seq, "context");
  const std::uint64_t n_min = checked_mul(kMinCtx, streams, "context");
  options.n_ctx = n_max;
  std::optional<Bytes> free;
  if (!o.cpu && !o.gpus.empty()) free = Bytes(usable_memory(o.gpus.front()).count() - cuda_context.count());
  if (o.cpu) free = o.host_memory;
  const std::string trained = "-c unset: the trained context " + group_digits(spec.max_seq_len) +
                              (options.n_seq > 1 ? " x " + group_digits(options.n_seq) + " slots" : std::string());
  if (!free) return "llama-server: " + trained + " (no device size to fit it to)";
  const auto to_i = [](std::uint64_t v) {
    return static_cast<std::int64_t>(std::min<std::uint64_t>(v, std::numeric_limits<std::int64_t>::max()));
  };
  const std::int64_t target = to_i(free->count()) - kMargin - to_i(tower);
  const std::int64_t used_max = to_i(device_bytes(spec, o, options));
  if (used_max <= target || n_max <= n_min) return "llama-server: " + trained;
  options.n_ctx = n_min;
  const std::int64_t used_min = to_i(device_bytes(spec, o, options));
  if (target <= used_min) {
    return "llama-server --fit: " + trained + " does not fit with 1 GiB free, nor does its --fit-ctx minimum " +
           group_digits(n_min) + "; llama-server would next move layers to the host (memplan fit --vary ngl)";
  }
  // fit.cpp's arithmetic: int64, truncating.
  const std::int64_t span = to_i(n_max - n_min);
  std::uint64_t n = n_min + static_cast<std::uint64_t>(span * (target - used_min) / (used_max - used_min));
  const std::uint64_t align = 256 * streams;
  n = std::max(n - n % align, n_min);
  options.n_ctx = n;
  return "llama-server --fit: " + trained + " would leave less than 1 GiB free; reduced to " + group_digits(n) +
         " (interpolated between the memory at " + group_digits(n_min) + " and at " + group_digits(n_max) +
         ", rounded down to " + group_digits(align) + ")";
}

}  // namespace

LayoutEstimate llama_cpp_layout(const ModelSpec& spec, const Workload& w, const LayoutOptions& o) {
  if (w.batch != 1) {
    throw Error(ErrorKind::invalid_input,
                "llama.cpp keeps one context of -c tokens for all its sequences: plan `batch_size` 1 with `seq_len` "
                "the whole context",
                "batch_size");
  }
  if (o.llama_cpp->n_cpu_moe > 0 && spec.experts == 0) {
    throw Error(ErrorKind::invalid_input, "`n_cpu_moe` keeps routed experts in host memory; " + spec.name + " has none",
                "n_cpu_moe");
  }
  LlamaCppOptions options = *o.llama_cpp;
  options.n_ctx = checked_add(w.seq_len, w.kind == WorkloadKind::generation ? w.new_tokens : 0, "context");
  options.weights = w.weights.precision;
  const std::optional<Item> cuda_context = o.cpu ? std::nullopt : cuda_context_row(w);
  // The vision tower runs on the GPU unless --no-mmproj-offload (or no GPU), with flash
  // attention as the text model has it (llama-server passes its -fa on).
  const bool tower_on_gpu = o.llama_cpp_mmproj && o.llama_cpp_mmproj->offload && !o.cpu;
  std::optional<TowerRows> tower_items;
  std::uint64_t tower_fit = 0, tower_warmup = 0;
  if (o.llama_cpp_mmproj) {
    const LlamaCppProjectorEstimate t = estimate_llama_cpp_projector(*o.llama_cpp_mmproj, spec, options.flash_attn,
                                                                     tower_on_gpu);
    tower_items = tower_rows(*o.llama_cpp_mmproj, t, tower_on_gpu, options.flash_attn);
    tower_warmup = t.warmup;
    if (tower_on_gpu) tower_fit = t.fit_bytes;
  }
  std::string fit_note;
  if (options.fit_context) {
    fit_note = fit_server_context(spec, o, cuda_context ? cuda_context->bytes : Bytes(0), tower_fit, options);
  }
  const LlamaCppEstimate e = estimate_llama_cpp(spec, options);
  const std::optional<LlamaCppEstimate> draft = o.llama_cpp_draft
                                                    ? std::optional(draft_estimate(spec, *o.llama_cpp_draft, options))
                                                    : std::nullopt;

  LayoutEstimate out;
  out.engine = "llama.cpp";
  const GgmlType& tk = *find_ggml_type(options.type_k);
  const GgmlType& tv = *find_ggml_type(options.type_v);
  const std::string ngl = o.cpu
                              ? "no GPU"
                              : "-ngl " + group_digits(std::min<std::uint64_t>(options.gpu_layers, spec.n_layers + 1));
  // A state-space model has no KV cells and no attention: its recurrent state has a slot a
  // sequence. A hybrid has both.
  const bool recurrent = e.state_cells > 0, state_only = recurrent && e.cells == 0;
  const std::string slots = options.n_seq == 1 ? "1 state slot"
                                               : "-np " + group_digits(options.n_seq) + ": a state slot each";
  const std::string cells = state_only           ? slots
                            : options.n_seq == 1 ? group_digits(e.cells) + " cells"
                            : options.kv_unified
                                ? "-np " + group_digits(options.n_seq) + " sharing " + group_digits(e.cells) + " cells"
                                : "-np " + group_digits(options.n_seq) + ": " + group_digits(e.cells) + " cells each";
  out.description = std::string(options.server ? "llama-server" : "llama.cpp") + ", " + ngl + ", -c " +
                    group_digits(options.n_ctx) + " (" + cells + "), -ub " + group_digits(options.n_ubatch) +
                    (state_only ? ", recurrent state f32"
                                : ", cache K " + lowered(tk.name) + " V " + lowered(tv.name) + ", flash attention " +
                                      (options.flash_attn ? "on" : "off") +
                                      (recurrent ? ", recurrent state f32 (" + slots + ")" : "")) +
                    (draft ? ", draft " + o.llama_cpp_draft->spec.name + " (--draft-max " +
                                 group_digits(o.llama_cpp_draft->draft_max) + ")"
                           : std::string());
  out.llama_cpp = LlamaCppLayout{options.n_ctx,
                                 e.cells,
                                 e.window_cells,
                                 e.state_cells,
                                 options.n_seq,
                                 options.n_ubatch,
                                 e.gpu_layers,
                                 spec.n_layers,
                                 e.output_on_gpu,
                                 !o.cpu,
                                 lowered(tk.name),
                                 lowered(tv.name),
                                 options.flash_attn,
                                 options.kv_unified,
                                 options.server,
                                 e.outputs,
                                 draft ? o.llama_cpp_draft->spec.name : std::string(),
                                 options.n_cpu_moe};
  if (!o.cpu) {
    DeviceMemory gpu;
    gpu.role = "gpu";
    gpu.holds = layers_text(e, spec.n_layers);
    gpu.breakdown.components = e.gpu.components;
    if (draft) append_draft(gpu.breakdown.components, draft->gpu);
    if (tower_items && tower_on_gpu) append(gpu.breakdown.components, tower_items->device);
    if (cuda_context) gpu.breakdown.components.push_back(*cuda_context);
    gpu.breakdown.host = e.host.components;
    if (draft) append_draft(gpu.breakdown.host, draft->host);
    if (tower_items) append(gpu.breakdown.host, tower_on_gpu ? tower_items->host : tower_items->device);
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
    if (draft) append_draft(host.breakdown.components, draft->host);
    if (tower_items) append(host.breakdown.components, tower_items->device);
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
  if (!o.cpu && options.n_cpu_moe > 0) {
    out.notes.push_back(
        "--n-cpu-moe: the experts of " + group_digits(std::min(options.n_cpu_moe, spec.n_layers)) +
        " layers are host rows; for micro-batches of 32 tokens or more llama.cpp copies a layer's experts to the "
        "GPU to multiply there (op offload), which the GPU's compute buffer holds and memplan does not count");
  }
  if (options.server && e.state_cells > 0) {
    // tools/server: a model whose memory cannot drop a sequence's tail (a recurrent state)
    // is restored from checkpoints, copies of a slot's state kept in host RAM as it runs.
    std::uint64_t state = 0;
    for (const Breakdown* b : {&e.gpu, &e.host}) {
      if (const Item* i = b->find("recurrent_state")) state = checked_add(state, i->bytes.count(), "state");
    }
    const std::uint64_t slot = state / e.state_cells;
    out.notes.push_back(
        "llama-server keeps up to 32 context checkpoints per slot (--ctx-checkpoints) in host RAM, "
        "each a copy of the slot's recurrent state (" +
        rounded_size(slot) + "): up to " + rounded_size(checked_mul(slot, checked_mul(32, options.n_seq, "c"), "c")) +
        " as it runs, not counted here");
  }
  if (!fit_note.empty()) out.notes.insert(out.notes.begin(), fit_note);
  out.notes.push_back("the input layer (token embeddings) stays in host memory, as llama.cpp keeps it");
  if (spec.vision.d_model != 0 && !o.llama_cpp_mmproj) {
    out.notes.push_back("the text model alone: llama.cpp reads " + spec.name +
                        "'s vision tower from a file of its own; give that file (mmproj-*.gguf) as `mmproj` to "
                        "count its weights and compute buffer");
  }
  if (o.llama_cpp_mmproj) {
    const LlamaCppProjector& p = *o.llama_cpp_mmproj;
    const std::string where = "the vision tower " + p.name + (tower_on_gpu ? " on the GPU" : " in host memory");
    if (p.max_tokens > 0) {
      out.notes.push_back(where + ": llama.cpp reserves " + rounded_size(tower_warmup) +
                          " of compute buffer for its warm-up image (" + group_digits(p.warmup_tokens) +
                          " tokens) and grows it when a larger image arrives; counted at the largest image, " +
                          group_digits(p.max_tokens) + " tokens (--image-max-tokens), each a cell of the context");
    } else {
      const std::uint64_t pooled = p.image_size / p.patch_size / std::max<std::uint64_t>(p.n_merge, 1);
      out.notes.push_back(where + ": its compute buffer is the warm-up image's (" + group_digits(p.image_size) + " x " +
                          group_digits(p.image_size) + ", the only size " + p.type +
                          " encodes); each image "
                          "adds " +
                          group_digits(pooled * pooled) + " tokens to the context");
    }
  }
  if (!spec.stored_layers) {
    out.notes.push_back("weights from the architecture at " + to_string(w.weights.precision) +
                        "; a .gguf gives each tensor's own type");
  }
  return out;
}

}  // namespace memplan::detail
