// memplan: plans the GPU memory of a transformer job before it starts.
// One page: build the command line, run it, map errors to exit codes in one place.
// Exit codes: 0 ok, 1 a budget check failed, 2 bad input or usage, 3 internal failure.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "commands.hpp"
#include "memplan/core/error.hpp"
#include "memplan/core/version.hpp"
#include "memplan/kernels/cuda.hpp"

namespace memplan::cli {

void add_output_options(CLI::App& command, OutputOptions& options) {
  command.add_option("--format", options.format, "Output: table (for people) or json (exact bytes, schema_version 1)")
      ->capture_default_str();
  command.add_option("--units", options.units, "Sizes in iec (KiB, MiB, GiB: powers of 1024) or si (KB, MB, GB)")
      ->capture_default_str();
}

std::vector<std::string> split_hook_filters(const std::vector<std::string>& values) {
  std::vector<std::string> out;
  for (const std::string& value : values) {
    std::string current;
    int depth = 0;
    for (const char c : value) {
      if (c == '{') ++depth;
      if (c == '}' && depth > 0) --depth;
      if (c == ',' && depth == 0) {
        if (!current.empty()) out.push_back(current);
        current.clear();
      } else {
        current += c;
      }
    }
    if (!current.empty()) out.push_back(current);
  }
  return out;
}

}  // namespace memplan::cli

int main(int argc, char** argv) {
  using namespace memplan;
  spdlog::set_default_logger(spdlog::stderr_color_st("memplan"));
  spdlog::set_pattern("memplan: %l: %v");
  spdlog::set_level(spdlog::level::warn);

  CLI::App app{"memplan " + version() +
               ": how much GPU memory a transformer job needs, where it goes, and whether it fits.\n"
               "Examples:\n"
               "  memplan estimate llama-2-7b                 weights of Llama-2-7B in bf16\n"
               "  memplan estimate mistral-7b-v0.1 --precision int4 --gpu rtx-4090\n"
               "  memplan estimate my-model.yaml --format json\n"
               "  memplan recommend llama-2-13b --gpu rtx-4090 -w generation   what to change to fit\n"
               "  memplan sweep llama-2-7b --batch 1,8 --seq 512,2048 -p fp16,int4 --gpu a10\n"
               "  memplan models | memplan gpus               the built-in tables\n"};
  const KernelsBuildInfo kernels = kernels_build_info();
  app.set_version_flag("--version", "memplan " + version() + " (commit " + build_info().commit + "; CUDA kernels: " +
                                        (kernels.cuda_kernels ? "CUDA " + kernels.cuda_toolkit + ", sm " +
                                                                    kernels.cuda_architectures
                                                              : std::string("not built")) +
                                        ")");
  app.require_subcommand(0, 1);
  app.fallthrough();
  bool verbose = false;
  app.add_flag("-v,--verbose", verbose, "Log what memplan reads and decides, on stderr");
  app.parse_complete_callback([&] {
    if (verbose) spdlog::set_level(spdlog::level::debug);
  });

  int exit_code = 0;
  cli::add_estimate(app, exit_code);
  cli::add_hooks(app, exit_code);
  cli::add_attention(app, exit_code);
  cli::add_models(app, exit_code);
  cli::add_gpus(app, exit_code);
  cli::add_probe(app, exit_code);
  cli::add_resolve(app, exit_code);
  cli::add_measure(app, exit_code);
  cli::add_calibrate(app, exit_code);
  cli::add_import(app, exit_code);
  cli::add_check(app, exit_code);
  cli::add_fit(app, exit_code);
  cli::add_budget_table(app, exit_code);
  cli::add_sweep(app, exit_code);
  cli::add_recommend(app, exit_code);

  try {
    app.parse(argc, argv);
    if (app.get_subcommands().empty()) std::cout << app.help();
    return exit_code;
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "memplan: error: " << e.what() << "\nRun 'memplan --help' or 'memplan COMMAND --help' for usage.\n";
    return 2;
  } catch (const Error& e) {
    std::cerr << "memplan: error: " << e.what() << '\n';
    return e.kind() == ErrorKind::internal ? 3 : 2;
  } catch (const std::exception& e) {
    std::cerr << "memplan: internal error: " << e.what() << '\n';
    return 3;
  }
}
