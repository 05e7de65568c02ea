// memplan measure attention|lanczos|block-eig: runs memplan's own kernels and prints, for
// each point, the estimate beside the peak memory really taken (counted by the allocator,
// not by the kernel), their ratio and the time.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <random>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/estimators/attention.hpp"
#include "memplan/estimators/block_eig.hpp"
#include "memplan/estimators/lanczos.hpp"
#include "memplan/io/atomic_file.hpp"
#include "memplan/kernels/attention.hpp"
#include "memplan/kernels/block_eig.hpp"
#include "memplan/kernels/counting_heap.hpp"
#include "memplan/kernels/cuda.hpp"
#include "memplan/kernels/lanczos.hpp"
#include "memplan/kernels/measure.hpp"
#include "memplan/probe/host.hpp"
#include "memplan/report/measure.hpp"
#include "progress.hpp"
#include "validators.hpp"

namespace memplan::cli {

namespace {

volatile float g_sink = 0;  // keeps the kernels' results observable

constexpr const char* kCpuMethod =
    "peak heap bytes above the baseline (inputs allocated before), counted by replacing malloc & co.; "
    "the estimate leaves the inputs out likewise";
constexpr const char* kCudaMethod =
    "peak of a private stream-ordered pool (cudaMemPoolAttrUsedMemHigh); inputs are cudaMalloc'd outside it; "
    "the estimate leaves the inputs out likewise; time from CUDA events";

// A progress line on stderr once a sweep has run for more than a second.
std::vector<float> random_values(std::size_t count, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<float> out(count);
  for (float& x : out) x = normal(rng);
  return out;
}

// Refuses a run whose inputs and estimated peak do not fit in this machine's available
// memory, before allocating: `what` says which run, `needed` is inputs + estimate.
void require_host_memory(const std::string& what, Bytes needed) {
  const HostInfo host = read_host();
  std::optional<Bytes> available = host.ram_available;
  if (host.memory_limit && (!available || *host.memory_limit < *available)) available = host.memory_limit;
  if (available && needed > *available) {
    throw Error(ErrorKind::invalid_input, what + " needs " + format_bytes(needed, Units::iec) +
                                              " (its inputs and the estimated peak); this machine has " +
                                              format_bytes(*available, Units::iec) + " available");
  }
}

void require_positive(const std::vector<std::uint64_t>& values, const char* option) {
  if (values.empty()) throw Error(ErrorKind::invalid_input, std::string(option) + " needs at least one value", option);
  for (const std::uint64_t v : values) {
    if (v == 0) throw Error(ErrorKind::invalid_input, std::string(option) + " values must be at least 1", option);
  }
}

// Records a CPU measurement into `row`.
void record(const CpuMeasurement& m, const HeapMeter& meter, MeasureRow& row) {
  if (m.heap_counted) {
    row.measured = Bytes(m.peak_bytes);
  } else {
    row.note = "not measured: " + meter.reason();
  }
  row.seconds_best = m.seconds_best;
  row.seconds_median = m.seconds_median;
}

// ---------------------------------- attention ----------------------------------

struct MeasureAttentionArgs {
  std::vector<std::string> variants{"all"};
  std::uint64_t batch = 4;
  std::uint64_t heads = 8;
  std::uint64_t head_dim = 64;
  std::vector<std::uint64_t> seqs{512, 1024, 2048, 4096};
  std::uint64_t chunk = 512;
  std::string device = "cpu";
  std::string dtype = "fp32";
  std::uint32_t repeats = 3;
  OutputOptions output;
  std::string svg;  // also write a chart here
};

// Prints the report, and writes its chart when --svg names a file (atomically: a failure
// leaves any earlier file as it was).
void emit(const MeasureReport& report, const PrintOptions& options, const std::string& svg) {
  const std::string chart = svg.empty() ? "" : measure_svg(report, options.units);  // fails before printing
  print(report, options, std::cout);
  if (!svg.empty()) write_file_atomically(svg, chart);
}

std::vector<AttentionVariant> parse_variants(const std::vector<std::string>& names) {
  std::vector<AttentionVariant> out;
  for (const std::string& name : names) {
    if (name == "all") return all_attention_variants();
    out.push_back(parse_attention_variant(name));
  }
  if (out.empty()) throw Error(ErrorKind::invalid_input, "--variant needs at least one variant", "variant");
  return out;
}

int measure_attention(const MeasureAttentionArgs& a) {
  const PrintOptions print_options = a.output.print_options<MeasureReport>();
  const std::vector<AttentionVariant> variants = parse_variants(a.variants);
  require_positive(a.seqs, "--seq");
  for (const auto& [value, option] :
       {std::pair{a.batch, "--batch"}, {a.heads, "--heads"}, {a.head_dim, "--head-dim"}, {a.chunk, "--chunk"}}) {
    if (value == 0) throw Error(ErrorKind::invalid_input, std::string(option) + " must be at least 1", option);
  }
  if (a.device != "cpu" && a.device != "cuda") {
    throw Error(ErrorKind::invalid_input, "unknown device '" + printable(a.device) + "'; accepted: 'cpu' or 'cuda'",
                "device");
  }
  if (a.dtype != "fp32" && a.dtype != "fp16") {
    throw Error(ErrorKind::invalid_input, "unknown dtype '" + printable(a.dtype) + "'; accepted: 'fp32' or 'fp16'",
                "dtype");
  }
  if (a.device == "cpu" && a.dtype == "fp16") {
    throw Error(ErrorKind::invalid_input, "--dtype fp16 needs --device cuda: the CPU kernels run in fp32", "dtype");
  }

  MeasureReport report;
  report.kernel = "attention";
  report.size_label = "seq";
  report.repeats = std::max<std::uint32_t>(a.repeats, 1);
  report.parameters = "B=" + std::to_string(a.batch) + " H=" + std::to_string(a.heads) +
                      " D=" + std::to_string(a.head_dim) + " chunk=" + std::to_string(a.chunk);
  bool on_gpu = false;
  std::string dtype = a.dtype;
  if (a.device == "cuda") {
    const CudaDeviceInfo info = cuda_device_info();
    if (info.status == CudaStatus::ok) {
      on_gpu = true;
      report.device = "cuda (" + info.name + ", driver CUDA " + info.driver + ")";
    } else {
      report.notes.push_back(info.reason + "; measured on the CPU instead");
      if (dtype == "fp16") report.notes.push_back("fp16 kernels run on CUDA only; the CPU measured fp32");
      dtype = "fp32";
    }
  }
  if (!on_gpu) report.device = "cpu";
  report.dtype = dtype;
  report.method = on_gpu ? kCudaMethod : kCpuMethod;
  const Precision precision = dtype == "fp16" ? precisions::fp16 : precisions::fp32;

  HeapMeter& meter = counting_heap();
  Progress progress("measuring", variants.size() * a.seqs.size());
  for (const std::uint64_t seq : a.seqs) {  // one set of inputs per length, shared by the variants
    const std::uint64_t elements = checked_mul(checked_mul(checked_mul(a.batch, a.heads, "q, k, v"), seq, "q, k, v"),
                                               a.head_dim, "q, k, v");
    if (!on_gpu)
      require_host_memory("attention at seq " + std::to_string(seq), Bytes(checked_mul(elements, 12, "q, k, v")));
    const std::size_t count = on_gpu ? 0 : elements;
    const std::vector<float> q = random_values(count, 1), k = random_values(count, 2), v = random_values(count, 3);
    for (const AttentionVariant variant : variants) {
      progress.step(to_string(variant) + " at seq " + std::to_string(seq));
      AttentionShape shape;
      shape.batch = a.batch;
      shape.heads = a.heads;
      shape.seq = seq;
      shape.head_dim = a.head_dim;
      shape.dtype = precision;
      shape.chunk = a.chunk;
      shape.include_inputs = false;
      const AttentionDims dims{a.batch, a.heads, seq, a.head_dim, a.chunk};
      MeasureRow row;
      row.variant = to_string(variant);
      row.size = seq;
      row.shape = "B=" + std::to_string(a.batch) + " H=" + std::to_string(a.heads) + " N=" + std::to_string(seq) +
                  " D=" + std::to_string(a.head_dim);
      row.estimate = estimate_attention(variant, shape).total();
      if (on_gpu) {
        if (!attention_cuda_supports(variant)) {
          row.note = "no CUDA kernel for this variant; not measured";
        } else {
          const CudaMeasurement m = measure_attention_cuda(variant, dims, precision.format, report.repeats);
          row.measured = Bytes(m.peak_bytes);
          row.seconds_best = m.seconds_best;
          row.seconds_median = m.seconds_median;
        }
      } else {
        const CpuMeasurement m = measure_cpu(
            [&] {
              const AttentionResult<float> r = attention_cpu<float>(variant, dims, q, k, v);
              g_sink = g_sink + r.output.front() + r.output.back();
            },
            meter, report.repeats);
        record(m, meter, row);
      }
      report.rows.push_back(std::move(row));
    }
  }
  // Rows by variant, then length, as the variants were asked for.
  std::stable_sort(report.rows.begin(), report.rows.end(), [&](const MeasureRow& x, const MeasureRow& y) {
    const auto rank = [&](const MeasureRow& r) {
      return std::find_if(variants.begin(), variants.end(),
                          [&](AttentionVariant v) { return to_string(v) == r.variant; }) -
             variants.begin();
    };
    return rank(x) < rank(y);
  });
  emit(report, print_options, a.svg);
  return 0;
}

// ---------------------------------- lanczos ----------------------------------

struct LanczosArgs {
  std::vector<std::uint64_t> dims{1000, 2000, 4000};
  std::uint64_t iterations = 60;
  std::uint64_t k = 10;
  std::string reorth = "both";
  std::uint32_t repeats = 3;
  OutputOptions output;
  std::string svg;  // also write a chart here
};

int run_lanczos(const LanczosArgs& a) {
  const PrintOptions print_options = a.output.print_options<MeasureReport>();
  require_positive(a.dims, "--dim");
  if (a.iterations == 0 || a.k == 0) throw Error(ErrorKind::invalid_input, "--iterations and --k must be at least 1");
  std::vector<bool> modes;
  if (a.reorth == "both" || a.reorth == "on") modes.push_back(true);
  if (a.reorth == "both" || a.reorth == "off") modes.push_back(false);
  if (modes.empty()) {
    throw Error(ErrorKind::invalid_input,
                "unknown --reorth '" + printable(a.reorth) + "'; accepted: 'both', 'on' or 'off'", "reorth");
  }
  MeasureReport report;
  report.kernel = "lanczos";
  report.device = "cpu";
  report.dtype = "fp32";
  report.size_label = "n";
  report.repeats = std::max<std::uint32_t>(a.repeats, 1);
  report.parameters = "m=" + std::to_string(a.iterations) + " k=" + std::to_string(a.k) + ", dense symmetric operator";
  report.method = std::string(kCpuMethod) + "; the operator's n x n matrix is an input";
  HeapMeter& meter = counting_heap();
  Progress progress("measuring", modes.size() * a.dims.size());
  for (const bool reorth : modes) {
    for (const std::uint64_t n : a.dims) {
      progress.step(std::string("lanczos ") + (reorth ? "reorth" : "plain") + " at n " + std::to_string(n));
      const std::uint64_t m = std::min(a.iterations, n);
      const Bytes operator_bytes(checked_mul(checked_mul(n, n, "the n x n operator"), 4, "the n x n operator"));
      const Bytes estimate = estimate_lanczos({n, m, a.k, reorth, precisions::fp32}).total();
      require_host_memory("lanczos at n " + std::to_string(n), operator_bytes.plus(estimate, "lanczos"));
      std::vector<float> matrix = random_values(n * n, 7);
      for (std::uint64_t i = 0; i < n; ++i) {
        for (std::uint64_t j = 0; j < i; ++j) matrix[i * n + j] = matrix[j * n + i];
      }
      const MatVec<float> apply = [&matrix, n](std::span<const float> x, std::span<float> y) {
        for (std::uint64_t i = 0; i < n; ++i) {
          float s = 0;
          for (std::uint64_t j = 0; j < n; ++j) s += matrix[i * n + j] * x[j];
          y[i] = s;
        }
      };
      LanczosRunOptions options;
      options.k = a.k;
      options.iterations = m;
      options.reorthogonalize = reorth;
      MeasureRow row;
      row.variant = reorth ? "reorth" : "plain";
      row.size = n;
      row.shape = "n=" + std::to_string(n) + " m=" + std::to_string(m) + " k=" + std::to_string(a.k);
      row.estimate = estimate;
      const CpuMeasurement measured = measure_cpu(
          [&] {
            const LanczosResult<float> r = lanczos_topk<float>(n, apply, options);
            g_sink = g_sink + r.eigenvalues.front();
          },
          meter, report.repeats);
      record(measured, meter, row);
      report.rows.push_back(std::move(row));
    }
  }
  emit(report, print_options, a.svg);
  return 0;
}

// ---------------------------------- block-eig ----------------------------------

struct BlockEigArgs {
  std::uint64_t blocks = 64;
  std::vector<std::uint64_t> sizes{32, 64, 128, 256};
  std::uint32_t repeats = 3;
  OutputOptions output;
  std::string svg;  // also write a chart here
};

int run_block_eig(const BlockEigArgs& a) {
  const PrintOptions print_options = a.output.print_options<MeasureReport>();
  require_positive(a.sizes, "--block-size");
  if (a.blocks == 0) throw Error(ErrorKind::invalid_input, "--blocks must be at least 1", "blocks");
  MeasureReport report;
  report.kernel = "block_eig";
  report.device = "cpu";
  report.dtype = "fp32";
  report.size_label = "b";
  report.repeats = std::max<std::uint32_t>(a.repeats, 1);
  report.parameters = std::to_string(a.blocks) + " symmetric blocks";
  report.method = kCpuMethod;
  HeapMeter& meter = counting_heap();
  Progress progress("measuring", a.sizes.size());
  for (const std::uint64_t b : a.sizes) {
    progress.step("block-eig at b " + std::to_string(b));
    const Bytes input(
        checked_mul(checked_mul(checked_mul(a.blocks, b, "the blocks"), b, "the blocks"), 4, "the blocks"));
    const Bytes estimate = estimate_block_eig({a.blocks, b, precisions::fp32, false}).total();
    require_host_memory("block-eig at b " + std::to_string(b), input.plus(estimate, "block-eig"));
    std::vector<float> blocks = random_values(a.blocks * b * b, 11);
    for (std::uint64_t c = 0; c < a.blocks; ++c) {
      float* block = blocks.data() + c * b * b;
      for (std::uint64_t i = 0; i < b; ++i) {
        for (std::uint64_t j = 0; j < i; ++j) block[i * b + j] = block[j * b + i];
      }
    }
    MeasureRow row;
    row.size = b;
    row.shape = std::to_string(a.blocks) + " x " + std::to_string(b) + " x " + std::to_string(b);
    row.estimate = estimate;
    const CpuMeasurement measured = measure_cpu(
        [&] {
          const std::vector<float> values = block_eigenvalues<float>(blocks, b, a.blocks);
          g_sink = g_sink + values.front();
        },
        meter, report.repeats);
    record(measured, meter, row);
    report.rows.push_back(std::move(row));
  }
  emit(report, print_options, a.svg);
  return 0;
}

}  // namespace

void define_measure(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  CLI::App* cmd = &self;
  cmd->description(
      "Run memplan's own kernels and compare their real peak memory with the estimate.\n"
      "The CPU peak is what the allocator handed out while the kernel ran (malloc & co.\n"
      "are counted), above the inputs; on a GPU it is a private memory pool's high watermark.");
  cmd->require_subcommand(1);

  auto at = std::make_shared<MeasureAttentionArgs>();
  CLI::App* attention = cmd->add_subcommand("attention", "Attention variants over a sweep of sequence lengths");
  attention
      ->add_option("--variant", at->variants,
                   "all, or a comma list of: eager, sdpa, chunked, linear,\n"
                   "causal_linear_naive, causal_linear_chunked, recurrent")
      ->delimiter(',')
      ->capture_default_str();
  attention->add_option("--batch", at->batch, "B")->check(count_range())->capture_default_str();
  attention->add_option("--heads", at->heads, "H")->check(count_range())->capture_default_str();
  attention->add_option("--head-dim", at->head_dim, "D")->check(count_range())->capture_default_str();
  attention->add_option("--seq", at->seqs, "Sequence lengths N, comma-separated")
      ->check(count_range())
      ->delimiter(',')
      ->capture_default_str();
  attention->add_option("--chunk", at->chunk, "C, for chunked and causal_linear_chunked")
      ->check(count_range())
      ->capture_default_str();
  attention->add_option("--device", at->device, "cpu, or cuda (falls back to the CPU, saying why, without a device)")
      ->capture_default_str();
  attention->add_option("--dtype", at->dtype, "fp32, or fp16 (CUDA only)")->capture_default_str();
  attention->add_option("--repeats", at->repeats, "Runs per point; time is the best and the median")
      ->check(count_range())
      ->capture_default_str();
  add_output_options(*attention, at->output);
  attention->get_option("--format")
      ->description("Output: table (for people), csv or json (exact bytes, schema_version 1)");
  attention->add_option("--svg", at->svg,
                        "Also write a log-log chart here: estimate lines, measured dots (atomically)");
  attention->callback([at, &exit_code] { exit_code = measure_attention(*at); });

  auto la = std::make_shared<LanczosArgs>();
  CLI::App* lanczos = cmd->add_subcommand(
      "lanczos", "Lanczos top-k on a dense symmetric operator, with and without reorthogonalisation");
  lanczos->add_option("--dim", la->dims, "Operator sizes n, comma-separated")
      ->check(count_range())
      ->delimiter(',')
      ->capture_default_str();
  lanczos->add_option("--iterations", la->iterations, "Lanczos steps m (at most n)")
      ->check(count_range())
      ->capture_default_str();
  lanczos->add_option("--k", la->k, "Eigenvalues wanted")->check(count_range())->capture_default_str();
  lanczos->add_option("--reorth", la->reorth, "both, on or off")->capture_default_str();
  lanczos->add_option("--repeats", la->repeats, "Runs per point")->check(count_range())->capture_default_str();
  add_output_options(*lanczos, la->output);
  lanczos->get_option("--format")
      ->description("Output: table (for people), csv or json (exact bytes, schema_version 1)");
  lanczos->add_option("--svg", la->svg, "Also write a log-log chart here: estimate lines, measured dots (atomically)");
  lanczos->callback([la, &exit_code] { exit_code = run_lanczos(*la); });

  auto be = std::make_shared<BlockEigArgs>();
  CLI::App* block = cmd->add_subcommand("block-eig",
                                        "Per-block eigenvalues of a block-diagonal (Fisher) approximation");
  block->alias("fisher-block");
  block->add_option("--blocks", be->blocks, "Number of blocks")->check(count_range())->capture_default_str();
  block->add_option("--block-size", be->sizes, "Block sizes b, comma-separated")
      ->check(count_range())
      ->delimiter(',')
      ->capture_default_str();
  block->add_option("--repeats", be->repeats, "Runs per point")->check(count_range())->capture_default_str();
  add_output_options(*block, be->output);
  block->get_option("--format")->description("Output: table (for people), csv or json (exact bytes, schema_version 1)");
  block->add_option("--svg", be->svg, "Also write a log-log chart here: estimate lines, measured dots (atomically)");
  block->callback([be, &exit_code] { exit_code = run_block_eig(*be); });
}

}  // namespace memplan::cli
