// Turning results into text for people (table) and programs (json). Every output format
// implements Printer; commands build a report value and hand it to whichever printer the
// user chose. The planning reports (estimate, fit, sweep, recommend, check) have moved to a
// header each, beside print.hpp.
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
#include "memplan/report/print.hpp"
#include "memplan/resolve/resolver.hpp"

namespace memplan {

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

class Printer {
 public:
  virtual ~Printer() = default;
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
  virtual void budget_table(const BudgetTableReport& report, std::ostream& out) const = 0;
};

std::unique_ptr<Printer> make_printer(OutputFormat format, const PrintOptions& options);

// Returns a log-log SVG chart of a measurement: per variant, the estimate as a dashed line
// over the swept size and the measured peaks as dots (what seed 003 plots with matplotlib).
// Throws Error(invalid_input) when no row has a size and a byte count to plot.
std::string measure_svg(const MeasureReport& report, Units units);

}  // namespace memplan
