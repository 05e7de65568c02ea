// The option table: every knob a plan has, defined once as data. The CLI's flags, the plan
// files' keys, recommend's suggested commands, shell completion and docs/options.md are all
// made from it; the core speaks only in plan keys (messages name an option as `key`, in
// backticks, and each front-end writes it its own way: --flag on the command line).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "memplan/estimators/llama_cpp.hpp"
#include "memplan/plan/workload.hpp"

namespace memplan {

// The multi-GPU layout knobs as given (plan/plan.hpp turns them into LayoutOptions once the
// GPUs are known).
struct LayoutRequest {
  std::uint64_t tp = 1;              // tensor-parallel degree
  std::uint64_t pp = 1;              // pipeline stages
  std::uint64_t dp = 1;              // data-parallel replicas
  std::uint64_t ep = 1;              // expert parallelism within dp
  std::string zero;                  // DeepSpeed ZeRO stage "0".."3"; empty = not given
  std::string fsdp;                  // full, grad_op, hybrid; empty = not given
  std::uint64_t shard_group = 0;     // fsdp hybrid: GPUs per shard group
  std::vector<std::string> offload;  // optimizer and/or params
  bool sequence_parallel = false;
  std::uint64_t micro_batches = 1;
  std::string schedule = "1f1b";            // 1f1b or gpipe
  std::vector<std::uint64_t> stage_layers;  // layers per pipeline stage; empty = even
  std::string engine = "pytorch";           // pytorch, vllm or llama.cpp
  double gpu_memory_utilization = 0.9;
  std::uint64_t max_model_len = 0;               // 0 = the model's context
  std::string vllm_entrypoint = "serve";         // serve (the OpenAI server) or llm (the LLM class)
  std::string vllm_version;                      // vLLM's release (0.19, 0.20.1); empty = the newest memplan follows
  std::string mamba_ssm_cache_dtype = "auto";    // vLLM: a Mamba layer's SSM state dtype (auto, float32, float16)
  bool enable_prefix_caching = false;            // vLLM --enable-prefix-caching (its Mamba layers' blocks)
  bool disable_hybrid_kv_cache_manager = false;  // vLLM: sliding-window layers keep max_model_len tokens too
  std::string mamba_cache_mode;                  // vLLM --mamba-cache-mode: none, align, all; empty = vLLM's default
  std::string speculative_method;             // vLLM speculative_config's method: mtp, a *_mtp name, ngram; empty = off
  std::uint64_t num_speculative_tokens = 0;   // vLLM's num_speculative_tokens; 0 = the method's default
  std::optional<std::uint64_t> max_num_seqs;  // unset: vLLM's default for the GPU and entrypoint
  std::optional<std::uint64_t> max_num_batched_tokens;  // unset: the same
  std::uint64_t block_size = 16;
  std::uint64_t max_loras = 0;                 // vLLM enable_lora's max_loras; 0 = LoRA off
  std::uint64_t max_lora_rank = 16;            // vLLM's max_lora_rank
  std::optional<Bytes> kv_cache_memory_bytes;  // vLLM's kv_cache_memory_bytes; unset = what the profile leaves
  bool language_model_only = false;            // vLLM's --language-model-only: no vision tower
  std::optional<std::uint64_t> ngl;            // llama.cpp -ngl; unset = everything on the GPU (0 with cpu)
  std::uint64_t n_cpu_moe = 0;                 // llama.cpp --n-cpu-moe: the first N layers' experts in host memory
  std::uint64_t ubatch = 512;
  std::uint64_t parallel = 1;              // llama.cpp -np: sequences sharing -c, each its own cache stream
  bool kv_unified = false;                 // llama.cpp --kv-unified: one cache stream of -c cells for all sequences
  bool llama_server = false;               // llama-server's rules (its -np default, outputs, draft context)
  std::string draft;                       // llama.cpp -md: the draft model as named; empty = none
  std::uint64_t draft_max = 3;             // llama.cpp --draft-max: tokens drafted per step
  std::optional<std::uint64_t> ngl_draft;  // llama.cpp -ngld; unset = as `ngl` defaults
  std::string cache_type_k_draft = "f16";  // llama.cpp -ctkd
  std::string cache_type_v_draft = "f16";  // llama.cpp -ctvd
  std::string mmproj;                      // llama.cpp --mmproj: a vision tower's .gguf; empty = none
  bool mmproj_offload = true;              // llama.cpp --no-mmproj-offload clears it: the tower on the host
  std::optional<std::uint64_t> image_max_tokens;  // llama.cpp --image-max-tokens; unset = the tower's own
  std::string cache_type_k = "f16";
  std::string cache_type_v = "f16";
  std::string flash_attn = "auto";  // on, off, auto
  std::string device_map;           // auto, balanced, balanced_low_0, sequential; empty = none
  std::vector<std::string> gpus;    // device_map: GPU names in order ("3xa100-80gb" is three)
  std::vector<Bytes> max_memory;    // device_map: one size for all GPUs, or one per GPU
  std::optional<Bytes> cpu_memory;  // device_map: host RAM for what does not fit
};

// Everything the options set, before the plan is bound to a device (plan/plan.hpp).
struct PlanSettings {
  Workload workload;                        // the knobs; weights.precision is resolved by bind
  std::string precision = "auto";           // the weight precision asked for: auto or a precision name
  std::string policy = "pytorch";           // whose precision rules resolve it: pytorch or vllm
  double threshold = 0.85;                  // the share of the budget a plan may use before its verdict warns
  LayoutRequest layout;                     // multi-GPU layouts
  std::uint64_t pos_index_from_end = 0;     // pos_slice given as -k (TransformerLens: one position, k-th from the end)
  std::uint64_t max_pixels = 0;             // Qwen2-VL's processor max_pixels; 0: the model's
  std::vector<std::string> given;           // the keys set, in the order given (defaults, applicability, commands)
  std::optional<ModelSpec> draft_model;     // layout.draft as the front-end found it (the core reads no files)
  std::optional<LlamaCppProjector> mmproj;  // layout.mmproj as the front-end read it

  bool was_given(std::string_view key) const;
};

enum class OptionKind {
  flag,    // true when present; in a plan file true or false
  count,   // a whole number in [min, max]
  number,  // a finite decimal in [low, high]
  text,    // a word the setter parses (a precision, a name, a size)
  list,    // comma-separated words (repeatable); a YAML list in a plan file
};

// One option set to one value: how recommend says what a change is ({"precision",
// "int4-g128"}; a flag has an empty value; a valued option with an empty value is left out,
// the given one dropped), for a front-end to write as it writes options.
struct OptionSetting {
  std::string key;
  std::string value;
  bool operator==(const OptionSetting&) const = default;
};

// Sets of workloads, as bits of 1 << WorkloadKind.
using WorkloadMask = std::uint32_t;
constexpr WorkloadMask workload_bit(WorkloadKind kind) { return WorkloadMask{1} << static_cast<unsigned>(kind); }
inline constexpr WorkloadMask all_workloads = ~WorkloadMask{0};

struct OptionValue {
  std::string text;               // as given (text, and the raw word of count and number)
  std::uint64_t count = 0;        // count
  double number = 0;              // number
  bool flag = false;              // flag
  std::vector<std::string> list;  // list
};

struct OptionDef {
  std::string_view key;   // the plan-file key and the name messages use: "batch_size"
  std::string_view flag;  // the command-line name in snake_case ("batch"); the CLI writes --batch
  char short_flag = 0;    // a one-letter alias on the command line ('b'), or 0
  OptionKind kind = OptionKind::text;
  std::string_view group;                      // the help section: "Workload", "Precision", "Training", ...
  std::string_view help;                       // one or two lines for --help, plan-file docs and Python docstrings
  std::string_view default_text{};             // the default as people read it; empty when it depends on the plan
  WorkloadMask applies = all_workloads;        // the workloads the option means something for
  bool common = false;                         // shown in `memplan estimate --help` (the rest: `memplan help options`)
  bool negated = false;                        // flag kind: presence sets the key false (--no-kv-cache sets kv_cache)
  std::uint64_t min = 0;                       // count kind: the smallest value with a meaning
  std::uint64_t max = std::uint64_t{1} << 40;  // count kind: the largest
  double low = 0;                              // number kind: bounds, inclusive
  double high = 1;
  void (*set)(PlanSettings&, const OptionValue&) = nullptr;  // applies the parsed value
};

// Returns the table, in the order help shows it.
std::span<const OptionDef> plan_options();

// Returns the option whose key or flag name is `name` (dashes read as underscores), or nullptr.
const OptionDef* find_option(std::string_view name);

// Returns the names of the workloads `option` applies to ("every workload" when it applies to all).
std::string applies_text(const OptionDef& option);

// Parses `values` (one word, or several for a list; a flag takes none or "true"/"false")
// as `option` and applies it to `settings`, recording its key as given. Throws
// Error(invalid_input, key = option.key) naming `key` for a value out of range, negative,
// not a number, or rejected by its parser.
void set_option(PlanSettings& settings, const OptionDef& option, const std::vector<std::string>& values);

// Checks that every option given applies to the workload kinds `kinds` (the plan's, or the
// union a sweep runs). Throws Error(invalid_input, key) naming the option, the workloads it
// applies to and the plan's.
void check_options_apply(const PlanSettings& settings, WorkloadMask kinds);

// Returns "`key`" rendered for a front-end: every backticked key in `text` that names an
// option is replaced by `name(option)`; other backticked words stay as they are.
template <typename Namer>
std::string render_option_refs(std::string_view text, Namer name) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('`', i);
    if (open == std::string_view::npos) break;
    const std::size_t close = text.find('`', open + 1);
    if (close == std::string_view::npos) break;
    out.append(text.substr(i, open - i));
    const std::string_view key = text.substr(open + 1, close - open - 1);
    const std::optional<std::string> named = name(key);
    if (named) {
      out += *named;
    } else {
      out.append(text.substr(open, close - open + 1));
    }
    i = close + 1;
  }
  out.append(text.substr(i));
  return out;
}

}  // namespace memplan
