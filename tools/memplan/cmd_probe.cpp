// memplan probe: the GPUs, host and environment this machine has. Exit 0 whenever it
// answered, including "no driver": that is an answer, printed with its reason.
#include <iostream>

#include "commands.hpp"
#include "memplan/frontend/requests.hpp"

namespace memplan::cli {

namespace {

struct ProbeArgs {
  double warn_above = 0.85;  // TheLoom's memory_warning_threshold
  OutputOptions output;
};

}  // namespace

void define_probe(CLI::App& self, int& exit_code, const NamedOptions& /*named*/) {
  auto args = std::make_shared<ProbeArgs>();
  CLI::App* cmd = &self;
  cmd->description(
      "Show the NVIDIA GPUs this machine has (memory from NVML, compute capability, processes),\n"
      "the host CPU and RAM, and the environment (Colab, Modal, RunPod, Vast.ai, Lambda, SLURM,\n"
      "Kubernetes, SSH, container or local). The driver is loaded at run time: with none, the\n"
      "reason is printed and the exit code is still 0.");
  cmd->add_option("--warn-above", args->warn_above, "Warn about GPUs whose used memory exceeds this fraction")
      ->capture_default_str();
  add_output_options(*cmd, args->output);
  cmd->callback([args, &exit_code] {
    const PrintOptions print_options = args->output.print_options<ProbeReport>();
    print(probe_report(args->warn_above), print_options, std::cout);
    exit_code = 0;
  });
}

}  // namespace memplan::cli
