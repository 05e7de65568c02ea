// memplan resolve: the precision a job will run in on a device, the chain walked, and why.
#include <cctype>
#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/text.hpp"
#include "memplan/io/gpu_table.hpp"
#include "memplan/probe/probe.hpp"
#include "memplan/report/resolve.hpp"
#include "memplan/resolve/resolver.hpp"
#include "plan_options.hpp"

namespace memplan::cli {

namespace {

struct ResolveArgs {
  std::string precision = "auto";
  std::string gpu;   // --gpu NAME from the GPU table
  std::string cc;    // --cc 7.5
  bool cpu = false;  // --cpu
  std::string policy = "pytorch";
  std::string model_type;  // Hugging Face model_type, for engines that refuse fp16 for some
  OutputOptions output;
};

// The first probed GPU, or the CPU when the probe finds none (saying why in the source).
void probed_device(ResolveReport& report) {
  ProbeOptions options;
  options.read_host = false;
  options.detect_environment = false;
  const ProbeResult result = probe(options);
  if (const ProbedDevice* d = first_device(result)) {
    report.device = device_capability(to_gpu_spec(*d));
    report.device.name = "GPU " + std::to_string(d->index) + ", " + d->name;
    report.device_source = "probe";
  } else {
    report.device = cpu_device();
    report.device_source = "probe: " + to_string(result.status) + ", " + result.reason;
  }
}

int run_resolve(const ResolveArgs& args) {
  const PrintOptions print_options = args.output.print_options<ResolveReport>();
  ResolveReport report;
  if (!args.gpu.empty()) {
    const std::vector<GpuSpec> table = known_gpus();
    try {
      report.device = device_capability(find_gpu(args.gpu, table));
    } catch (const Error& e) {
      // estimate and fit take a capacity for --gpu; a precision needs a GPU's capability.
      if (std::isdigit(static_cast<unsigned char>(args.gpu.front())) == 0) throw;
      throw Error(ErrorKind::invalid_input,
                  std::string(e.what()) + "; resolve needs a GPU's compute capability, which a capacity such as " +
                      printable(args.gpu) + " does not have (--cc 8.9 names one directly)",
                  "gpu");
    }
    report.device_source = "--gpu";
  } else if (!args.cc.empty()) {
    report.device = gpu_with_capability(parse_compute_capability(args.cc));
    report.device_source = "--cc";
  } else if (args.cpu) {
    report.device = cpu_device();
    report.device_source = "--cpu";
  } else {
    probed_device(report);
  }
  ResolveRequest request;
  request.precision = args.precision;
  request.device = report.device;
  request.policy = args.policy;
  request.model_type = args.model_type;
  report.resolution = resolve_precision(request);
  print(report, print_options, std::cout);
  return 0;
}

}  // namespace

void define_resolve(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<ResolveArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Say which precision a job will run in on a device, the chain walked, and why.\n"
      "The device is --gpu NAME, --cc X.Y or --cpu; without one, the first GPU the probe finds\n"
      "(or the CPU when there is none). Thresholds per engine: docs/hardware.md.");
  cmd->add_option("-p,--precision", args->precision,
                  "Requested precision: auto (bf16, else fp16, else fp32), fp32, tf32, fp16, bf16, fp8,\n"
                  "fp8_e5m2, int8, int4[-gN][-zp], nf4[-dq], fp4[-dq]")
      ->capture_default_str();
  CLI::Option* gpu = cmd->add_option("-g,--gpu", args->gpu, "A GPU from the table (see 'memplan gpus')");
  CLI::Option* cc = cmd->add_option("--cc", args->cc, "A GPU of this compute capability, e.g. 7.5");
  CLI::Option* cpu = cmd->add_flag("--cpu", args->cpu, "The host CPU");
  gpu->excludes(cc)->excludes(cpu);
  cc->excludes(cpu);
  cmd->add_option("--policy", args->policy, "Whose rules: pytorch or vllm")->capture_default_str();
  cmd->add_option("--model-type", args->model_type,
                  "Hugging Face model_type (gemma2, ...): vLLM refuses fp16 for some");
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] { exit_code = run_resolve(*args); });
}

}  // namespace memplan::cli
