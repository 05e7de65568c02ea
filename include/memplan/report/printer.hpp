// Turning results into text for people (table) and programs (json). Every output format
// implements Printer; commands build a report value and hand it to whichever printer the
// user chose, so adding a format touches no command.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memplan/core/breakdown.hpp"
#include "memplan/core/gpu_spec.hpp"
#include "memplan/estimators/compute_time.hpp"
#include "memplan/estimators/parallelism.hpp"
#include "memplan/plan/verdict.hpp"
#include "memplan/report/print.hpp"
#include "memplan/resolve/resolver.hpp"

namespace memplan {

struct EstimateReport {
  std::string model;                   // model name
  std::string family;
  std::string model_origin;            // "built-in" or a file path
  std::uint64_t params = 0;
  std::string workload_kind;           // "weights", "inference", ...
  std::uint64_t batch = 0;             // 0 for weights-only estimates
  std::uint64_t seq_len = 0;
  std::uint64_t new_tokens = 0;
  std::string precision_requested;
  std::string precision_resolved;
  std::string precision_description;   // "bf16, 2 B/param"
  std::vector<std::string> warnings;
  Breakdown breakdown;
  std::optional<GpuSpec> device;       // set when the user named a GPU
  std::optional<Verdict> verdict;      // against the device's memory and `threshold`
  double threshold = 0.85;             // the share of the device a plan may use
  std::optional<TimeEstimate> time;    // with a device: how long the workload takes (an estimate, its assumption stated)
};

struct ModelRow {
  std::string name;
  std::string family;
  std::uint64_t params = 0;            // counted by memplan
  std::optional<std::uint64_t> published_params;
  std::uint64_t n_layers = 0;
  std::uint64_t d_model = 0;
  std::uint64_t n_heads = 0;
  std::uint64_t n_kv_heads = 0;
  std::uint64_t vocab_size = 0;
  std::uint64_t max_seq_len = 0;
  std::string source;
};

// memplan resolve: the precision a job runs in on a device.
struct ResolveReport {
  Resolution resolution;
  DeviceCapability device;             // what it was resolved for
  std::string device_source;           // how the device was given: "--gpu", "--cc", "--cpu", "probe"
};

// memplan probe, as plain values (the report layer does not load drivers).
struct ProbeProcessRow {
  std::uint32_t pid = 0;
  std::string name;                    // "" when unknown (another PID namespace)
  std::string type;                    // "compute" or "graphics"
  std::optional<Bytes> used_memory;    // unset when NVML cannot say
};

struct ProbeDeviceRow {
  std::uint32_t index = 0;             // CUDA ordinal
  std::string name;                    // the driver's name
  std::string uuid;
  Bytes total_memory;
  std::optional<Bytes> free_memory;    // unset without NVML
  std::optional<Bytes> used_memory;
  std::string compute_capability;      // "8.0"
  std::uint32_t multiprocessors = 0;
  std::uint32_t memory_bus_width_bits = 0;
  std::uint32_t memory_clock_khz = 0;
  double bandwidth_gbs = 0;            // 10^9 bytes per second; 0 when unknown
  std::vector<ProbeProcessRow> processes;
  bool processes_known = false;        // NVML listed the processes
  std::vector<std::string> notes;
};

struct ProbeReport {
  std::string status;                  // "ok", "no_driver", "no_device", "driver_error", "driver_too_old"
  std::string reason;                  // one line when status is not ok
  std::string driver_version;          // "550.54.15", or ""
  std::string cuda_version;            // "12.4", or ""
  std::vector<ProbeDeviceRow> devices;
  std::string cpu_model;
  std::uint32_t logical_cores = 0;
  std::uint32_t physical_cores = 0;    // 0 when /proc does not say
  std::uint32_t usable_cores = 0;      // CPU affinity; 0 when unknown
  std::optional<Bytes> ram_total;
  std::optional<Bytes> ram_available;
  std::optional<Bytes> memory_limit;   // a cgroup limit below the RAM
  std::string environment;             // "local", "colab", "ssh_remote", ...
  std::string environment_evidence;    // "SSH_CONNECTION is set"
  std::vector<std::string> environment_also;
  std::string environment_detail;      // a task, pod or job id
  std::vector<std::string> warnings;   // devices above the memory warning threshold
  std::vector<std::string> notes;
};

// memplan measure: one row per measured point, the estimate beside the measured peak.
struct MeasureRow {
  std::string variant;                 // attention variant, "reorth"/"plain" (lanczos), or "" (block_eig)
  std::uint64_t size = 0;              // the swept size: seq (attention), dimension (lanczos), block size (block_eig)
  std::string shape;                   // every size of the point: "B=4 H=8 N=512 D=64"
  Bytes estimate;                      // memplan's estimate of the same quantity
  std::optional<Bytes> measured;       // peak bytes above the baseline; empty when not measured
  double seconds_best = 0;             // fastest run (wall clock on the CPU, CUDA events on a GPU)
  double seconds_median = 0;
  std::string note;                    // why `measured` is empty, or what differs for this row
};

struct MeasureReport {
  std::string kernel;                  // "attention", "lanczos", "block_eig"
  std::string device;                  // "cpu" or "cuda (NVIDIA H100 80GB HBM3)"
  std::string dtype;                   // "fp32"
  std::string parameters;              // the fixed sizes: "B=4 H=8 D=64 chunk=512"
  std::string size_label;              // heading of the swept size: "seq", "n", "b"
  std::string method;                  // how the peak was measured and what the estimate counts
  std::uint32_t repeats = 0;
  std::vector<std::string> notes;      // fallbacks ("no CUDA device: ...; measured on the CPU")
  std::vector<MeasureRow> rows;
};

// memplan calibrate: measured per-GPU figures, or why there are none.
struct CalibrationRow {
  std::string name;                    // cuda_context, cublas_workspace, allocator_granularity, pool_granularity
  Bytes bytes;
  bool measured = false;               // false: the documented default
  std::string source;
};

struct CalibrationReport {
  bool calibrated = false;             // figures were measured on a GPU
  std::string status;                  // the CUDA status: "ok", "not_built", "no_driver", "no_device", "error"
  std::string reason;                  // when not calibrated: why ("no CUDA device: ...")
  std::string gpu;                     // device name, when calibrated
  std::string driver;                  // CUDA version the driver supports, when calibrated
  std::string cache_path;              // where the figures were stored ("" when not stored)
  std::vector<CalibrationRow> figures; // measured figures, or the defaults estimates use
};

// memplan hooks: the hook points of a model with shapes and bytes.
struct HookRow {
  std::string name;                    // a hook, or a kind ("blocks.*.hook_resid_post") when grouped
  std::uint64_t count = 1;             // hooks in the row
  std::string shape;                   // "[batch=1, pos=2048, d_model=4096]"
  Bytes bytes_each;
  Bytes bytes;                         // all hooks of the row
};

struct HooksReport {
  std::string model;
  std::uint64_t batch = 0;
  std::uint64_t seq_len = 0;
  std::string dtype;
  std::vector<HookRow> rows;           // the selected hooks
  std::uint64_t selected_hooks = 0;
  std::uint64_t all_hooks = 0;
  Bytes selected_bytes;
  Bytes all_bytes;                     // the full cache, for comparison
};

// memplan attention: what each attention variant holds, over sequence lengths.
struct AttentionTableRow {
  std::string variant;                 // "eager", or "003 theory: standard"
  std::vector<Bytes> bytes;            // one per sequence length
};

struct AttentionTableReport {
  std::uint64_t batch = 0, heads = 0, head_dim = 0, chunk = 0;
  std::string dtype;
  bool include_inputs = true;
  std::vector<std::uint64_t> seq_lens;
  std::vector<AttentionTableRow> rows;
};

// memplan import CONFIG.json: the model file a Hugging Face config maps to.
struct ImportReport {
  std::string input;                   // the config.json read
  std::string output;                  // the model file written; "" when the YAML goes to stdout
  std::string model_type;              // config.json's model_type
  std::string model;                   // the model's name
  std::string family;
  std::uint64_t params = 0;            // counted by memplan from the imported spec
  std::vector<std::string> notes;      // what the importer decided: defaults taken, keys without parameters
  std::string yaml;                    // the model file's text
};

// memplan import FILE.safetensors|INDEX.json: a checkpoint's tensors, from its headers only.
struct CheckpointDtypeRow {
  std::string dtype;                   // as the header spells it: "BF16", "F32", ...
  std::uint64_t tensors = 0;
  std::uint64_t elements = 0;
  Bytes bytes;
};

struct CheckpointTensorRow {
  std::string name;
  std::string dtype;
  std::vector<std::uint64_t> shape;
  std::uint64_t elements = 0;
  Bytes bytes;
  std::string file;                    // the shard holding it
};

struct CheckpointExtraRow {
  std::string kind;                    // "buffer", "tied copy", "task head"
  std::string pattern;                 // tensor names, layer numbers as '*'
  std::string why;
  std::uint64_t tensors = 0;
  std::uint64_t elements = 0;
};

// The checkpoint against an architecture (a config.json beside it, or --model).
struct CheckpointComparisonReport {
  std::string model;                   // the architecture's name
  std::string model_origin;            // where it came from: a config.json path, a model file, "built-in"
  std::uint64_t architecture_params = 0;
  std::uint64_t checkpoint_elements = 0;
  std::vector<CheckpointExtraRow> extra;  // checkpoint tensors that are not parameters
  std::uint64_t compared_elements = 0;    // checkpoint_elements minus the extras; equal to architecture_params when they match
};

struct CheckpointReport {
  std::string input;                   // the .safetensors file or index read
  std::vector<std::string> files;      // the .safetensors files whose headers were read
  std::uint64_t tensors = 0;
  std::uint64_t elements = 0;          // exact: every element of every tensor
  Bytes bytes;                         // tensor data
  Bytes file_bytes;                    // the files on disk, headers included
  std::vector<CheckpointDtypeRow> dtypes;
  std::vector<CheckpointTensorRow> tensor_rows;  // every tensor, when asked for (--tensors)
  std::vector<std::pair<std::string, std::string>> metadata;  // __metadata__ of the first file
  std::optional<CheckpointComparisonReport> comparison;
  std::vector<std::string> notes;
};

// memplan check: each plan against its budget x memory_warning_threshold.
struct PlanCheckRow {
  std::string plan;                    // the plan file as named
  std::string model;
  std::string workload_kind;
  std::string precision;               // precision_mode resolved
  std::string budget;                  // as the plan names it: a GPU, a size, "probe"
  std::string device;                  // the GPU the budget is, when it is one
  Bytes total;
  Bytes budget_bytes;
  Bytes limit;                         // floor(budget_bytes x threshold)
  double threshold = 0.85;
  bool fits = false;                   // verdict == fits
  Verdict verdict = Verdict::does_not_fit;
  std::vector<std::string> notes;      // settings that do not apply, resolver warnings
  std::string error;                   // non-empty: the plan could not be read or estimated
};

struct CheckReport {
  std::vector<PlanCheckRow> plans;
};

// memplan fit: the largest batch or sequence that fits on a GPU, and what binds.
struct FitReport {
  std::string model;
  std::string workload_kind;
  std::string gpu;
  std::string precision;               // resolved for the GPU
  std::string vary;                    // the knob: "batch", "seq", "attention_chunk" or "streaming_chunk"
  std::string option;                  // the `memplan estimate` option it sets: "--batch", "--streaming-chunk", ...
  std::string fixed;                   // the knobs held: "seq_len 2048", "batch 1", "batch 1, seq_len 4096"
  std::uint64_t value = 0;             // the largest value that fits; 0 when none does
  std::uint64_t cap = 0;               // the search's upper end (seq: the model's context)
  double threshold = 0.85;
  Bytes budget_bytes;
  Bytes limit;                         // floor(budget_bytes x threshold)
  Bytes total;                         // at value
  std::optional<Bytes> next_total;     // at value + 1 (at 1 when none fits); unset at the cap or on overflow
  bool next_overflows = false;         // the total at value + 1 (or 1) does not fit in 64 bits
  std::string binding;                 // the component that grows the most from value to value + 1
  Bytes binding_bytes;                 // its bytes at value + 1
  std::uint64_t given_value = 0;       // the value the plan as given has
  std::optional<Verdict> given_verdict;  // the verdict of the plan as given
};

// memplan budget-table: 000's memory budget tables, regenerated from memplan's formulas.
struct BudgetRow {
  std::string metric;                  // 000's name: "Fisher Spectrum", "Lanczos (k=20)", ...
  std::string workload;                // the memplan workload and knobs that plan it
  std::string batch;                   // "32", or "any"
  std::string seq;
  std::optional<Bytes> analysis;       // the metric's own state (what 000's Memory column sizes)
  std::optional<Bytes> total;          // everything the GPU holds at the peak (model, passes, overhead)
  std::string needed;                  // when no 64-bit byte count can hold it: "181.6 EB"
  std::optional<double> seconds;       // estimated time (FLOPs / (peak x efficiency))
  bool fits = false;
  std::string seed_memory;             // 000's figures, "" where 000 has no such row
  std::string seed_time;
  std::string seed_status;             // "ok", "warn", "no"
  std::string note;                    // why memplan differs, or what would make it fit
};

struct BudgetTableReport {
  std::string model;
  std::uint64_t params = 0;
  std::string gpu;                     // device name
  Bytes gpu_memory;                    // as the driver reports it
  std::string seed_table;              // "7B" or "70B": the table of 000 the rows are set beside
  std::string time_assumption;
  std::vector<BudgetRow> rows;
  std::vector<std::string> notes;
};

// memplan sweep: a grid of plans (plan/sweep.hpp), one row per point.
struct SweepReportRow {
  std::string model;
  std::string workload;                // "inference", "training", ...
  std::string precision;               // the weights' precision, resolved: "bf16", "int4-g128"
  std::uint64_t batch = 0;
  std::uint64_t seq_len = 0;
  std::optional<Bytes> total;          // unset when the point cannot be estimated (`error`)
  Bytes allocated;                     // the tensors: total less CUDA context, workspaces and allocator overhead
  std::string largest;                 // the largest component
  Bytes largest_bytes;
  std::optional<bool> fits;            // verdict == fits, with a GPU
  std::optional<Verdict> verdict;
  std::optional<GpuSpec> smallest_gpu; // with --smallest-gpu: the GPU of the table with the least memory that holds it
  std::string smallest_gpu_precision;  // the precision it runs in there, when the GPU changes it ("fp16" for bf16 on a V100)
  std::vector<std::string> notes;
  std::string error;
};

struct SweepReport {
  std::size_t models = 0, workloads = 0, precisions = 0, batches = 0, seqs = 0;  // the axes' sizes
  std::optional<GpuSpec> device;       // with --gpu
  double threshold = 0.85;
  std::optional<Bytes> limit;          // floor(device memory x threshold), with --gpu
  bool smallest_gpu = false;           // rows carry the smallest GPU that fits (--smallest-gpu)
  std::vector<SweepReportRow> rows;
  std::vector<std::string> notes;      // precision resolutions
};

// memplan recommend: one change to the plan, estimated again (plan/recommend.hpp).
struct MitigationRow {
  std::string kind;                    // stable snake_case: precision, selective_cache, recompute, smaller_batch, combined, ...
  std::string change;                  // in words
  std::vector<std::string> options;    // the `memplan estimate` options that make the change
  std::vector<std::string> command;    // the whole `memplan estimate` command line of the changed plan
  std::string tradeoff;
  Bytes total;
  Bytes saved;
  Bytes host;                          // host RAM the changed plan needs (0: none)
  bool fits = false;
};

// The plan as given on one GPU of the table.
struct GpuFitRow {
  std::string name;
  Bytes memory;
  std::string precision;               // resolved for this GPU
  std::optional<Bytes> total;          // unset when it overflows 64 bits
  Bytes limit;                         // floor(memory x threshold)
  bool fits = false;
  std::vector<std::string> warnings;
};

struct RecommendReport {
  std::string model;
  std::string workload_kind;
  std::uint64_t batch = 0;             // 0 for the weights alone
  std::uint64_t seq_len = 0;
  std::uint64_t new_tokens = 0;
  std::string precision;               // resolved for the GPU
  std::string gpu;
  Bytes gpu_memory;
  double threshold = 0.85;
  Bytes total;                         // the plan as given
  Bytes limit;                         // floor(gpu_memory x threshold)
  bool fits = false;                   // verdict == fits
  Verdict verdict = Verdict::does_not_fit;
  std::vector<MitigationRow> mitigations;  // most saved first
  std::optional<MitigationRow> combined;   // when no single change fits
  std::uint64_t min_devices = 1;       // ceil(total / limit)
  std::vector<GpuFitRow> gpus;         // every GPU of the table, smallest first
  std::vector<std::string> notes;      // what memplan does not estimate here (more GPUs, weight offload)
};

// memplan estimate with a multi-GPU layout (--tp, --pp, --dp, --zero, --fsdp, --serving vllm,
// --device-map): the memory of every device role.
struct LayoutReport {
  EstimateReport header;               // model, workload, precision, warnings (breakdown, device, fits unused)
  LayoutEstimate layout;               // one Breakdown per device role, checked against its GPU when one is named
  std::optional<Verdict> verdict;      // the most loaded device against its GPU and the threshold
};

class Printer {
 public:
  virtual ~Printer() = default;
  virtual void estimate(const EstimateReport& report, std::ostream& out) const = 0;
  virtual void models(const std::vector<ModelRow>& rows, std::ostream& out) const = 0;
  virtual void gpus(const std::vector<GpuSpec>& gpus, std::ostream& out) const = 0;
  virtual void resolve(const ResolveReport& report, std::ostream& out) const = 0;
  virtual void probe(const ProbeReport& report, std::ostream& out) const = 0;
  virtual void measurement(const MeasureReport& report, std::ostream& out) const = 0;
  virtual void calibration(const CalibrationReport& report, std::ostream& out) const = 0;
  virtual void hooks(const HooksReport& report, std::ostream& out) const = 0;
  virtual void attention_table(const AttentionTableReport& report, std::ostream& out) const = 0;
  virtual void imported_model(const ImportReport& report, std::ostream& out) const = 0;
  virtual void checkpoint(const CheckpointReport& report, std::ostream& out) const = 0;
  virtual void check(const CheckReport& report, std::ostream& out) const = 0;
  virtual void fit(const FitReport& report, std::ostream& out) const = 0;
  virtual void budget_table(const BudgetTableReport& report, std::ostream& out) const = 0;
  virtual void sweep(const SweepReport& report, std::ostream& out) const = 0;
  virtual void recommend(const RecommendReport& report, std::ostream& out) const = 0;
  virtual void layout(const LayoutReport& report, std::ostream& out) const = 0;  // layout_printers.cpp
};

std::unique_ptr<Printer> make_printer(OutputFormat format, const PrintOptions& options);

// Returns a self-contained SVG chart of a sweep: total memory (log scale) against sequence
// length (or batch, when one sequence length is swept), one line per model x workload x
// precision x batch (or sequence), and the limit and the GPU's memory as horizontal lines.
// Points without an estimate are left out. Throws Error(invalid_input) when no point has one.
std::string sweep_svg(const SweepReport& report, Units units);

// Returns a log-log SVG chart of a measurement: per variant, the estimate as a dashed line
// over the swept size and the measured peaks as dots (what seed 003 plots with matplotlib).
// Throws Error(invalid_input) when no row has a size and a byte count to plot.
std::string measure_svg(const MeasureReport& report, Units units);

}  // namespace memplan
